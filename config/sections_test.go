package config

import (
	"slices"
	"testing"
	"time"

	"github.com/mcprt/mcprt/natsengine"
	"github.com/mcprt/mcprt/transport/streamable"
)

func TestNATSSectionsFromEnvironment(t *testing.T) {
	c, err := Load("", nil, "test")
	if err != nil || c.Backend.Backend != natsengine.BackendFiles || c.NATS.Replicas != 1 || c.NATS.ClaimTTL != 10*time.Second {
		t.Fatalf("defaults = %+v %+v, %v", c.Backend, c.NATS, err)
	}
	c, err = Load("", []string{"MCPRT_AACP_BACKEND=nats", "MCPRT_NATS_URL=nats://a:4222,nats://b:4222",
		"MCPRT_NATS_REPLICAS=3", "MCPRT_NATS_SERVER_ROUTES=nats-route://b:6222,nats-route://c:6222", "MCPRT_NATS_TOKEN=t"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	b, n := c.Backend, c.NATS
	if b.Backend != "nats" || n.URL != "nats://a:4222,nats://b:4222" || n.Replicas != 3 || n.Token != "t" ||
		!slices.Equal(n.Server.Routes, []string{"nats-route://b:6222", "nats-route://c:6222"}) {
		t.Errorf("loaded %+v %+v", b, n)
	}
	for _, bad := range []string{"MCPRT_AACP_BACKEND=kafka", "MCPRT_NATS_REPLICAS=7", "MCPRT_NATS_CLAIM_TTL_MS=10"} {
		if _, err := Load("", []string{bad}, "test"); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestHTTPSectionKeysDocumentEveryKey(t *testing.T) {
	all, err := Keys("test")
	if err != nil {
		t.Fatal(err)
	}
	var keys []Key
	for _, k := range all {
		if len(k.Path) > len(streamable.ConfigPath) && k.Path[:len(streamable.ConfigPath)+1] == streamable.ConfigPath+"." {
			keys = append(keys, k)
		}
	}
	if len(keys) != 16 {
		t.Fatalf("%d keys, want 16", len(keys))
	}
	for _, k := range keys {
		if k.Meaning == "" || k.Env != EnvName(k.Path) {
			t.Errorf("key %+v: want a help line and the env name %s", k, EnvName(k.Path))
		}
	}
}
