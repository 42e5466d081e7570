package natsengine_test

import (
	"slices"
	"testing"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/natsengine"
)

func load(t *testing.T, environ []string) (natsengine.BackendConfig, natsengine.Config, error) {
	t.Helper()
	base := core.DefaultConfig("test")
	l := core.NewConfigLoader(&base)
	b, c := natsengine.DefaultBackendConfig(), natsengine.DefaultConfig()
	if err := natsengine.AddBackendConfig(l, &b); err != nil {
		t.Fatal(err)
	}
	if err := natsengine.AddConfig(l, &c); err != nil {
		t.Fatal(err)
	}
	return b, c, l.Load("", environ)
}

func TestConfigFromEnvironment(t *testing.T) {
	b, c, err := load(t, nil)
	if err != nil || b.Backend != natsengine.BackendFiles || c.Replicas != 1 || c.ClaimTTLMs != 10000 {
		t.Fatalf("defaults = %+v %+v, %v", b, c, err)
	}
	b, c, err = load(t, []string{"MCPRT_AACP_BACKEND=nats", "MCPRT_NATS_URL=nats://a:4222,nats://b:4222",
		"MCPRT_NATS_REPLICAS=3", "MCPRT_NATS_SERVER_ROUTES=nats-route://b:6222,nats-route://c:6222", "MCPRT_NATS_TOKEN=t"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Backend != "nats" || c.URL != "nats://a:4222,nats://b:4222" || c.Replicas != 3 || c.Token != "t" ||
		!slices.Equal(c.Server.Routes, []string{"nats-route://b:6222", "nats-route://c:6222"}) {
		t.Errorf("loaded %+v %+v", b, c)
	}
	for _, bad := range []string{"MCPRT_AACP_BACKEND=kafka", "MCPRT_NATS_REPLICAS=7", "MCPRT_NATS_CLAIM_TTL_MS=10"} {
		if _, _, err := load(t, []string{bad}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
