package main

// Three `mcprt nats` nodes in a cluster on loopback, configured as
// docs/nats.md says (routes in the environment, nats.replicas=3), and two
// mcprt sessions on different nodes: messages flow, and keep flowing with
// one node killed.

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/natsjournal"
	"github.com/mcprt/mcprt/internal/wiretest"
	"github.com/mcprt/mcprt/natsengine"
)

func TestNATSClusterThroughTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("three-node cluster through the binary: skipped with -short")
	}
	// Not parallel: three servers electing leaders are slow to form
	// beside other tests on a small machine; alone it takes ~10 s.
	names := []string{"a", "b", "c"}
	listen, route := map[string]string{}, map[string]string{}
	for _, n := range names {
		listen[n], route[n] = freeAddr(t), freeAddr(t)
	}
	nodes := map[string]*wiretest.Proc{}
	for _, n := range names {
		var routes []string
		for _, o := range names {
			if o != n {
				routes = append(routes, "nats-route://"+route[o])
			}
		}
		nodes[n] = wiretest.Start(t, wiretest.Build(t), wiretest.Options{Args: []string{"nats"}, Env: []string{
			"MCPRT_AACP_DATA_DIR=" + filepath.Join(t.TempDir(), n),
			"MCPRT_NATS_SERVER_LISTEN=" + listen[n], "MCPRT_NATS_SERVER_NAME=mcprt-" + n,
			"MCPRT_NATS_SERVER_CLUSTER_NAME=mcprt", "MCPRT_NATS_SERVER_CLUSTER_LISTEN=" + route[n],
			"MCPRT_NATS_SERVER_ROUTES=" + strings.Join(routes, ","),
			"MCPRT_NATS_TOKEN=" + natsTestToken, "MCPRT_NATS_REPLICAS=3", "MCPRT_NATS_CONNECT_TIMEOUT_MS=60000",
		}})
	}
	// Wait (bounded) for the cluster to elect its JetStream leader, as a
	// client: then each node's set-up finishes within ExpectLog's limit.
	urls := "nats://" + listen["a"] + ",nats://" + listen["b"] + ",nats://" + listen["c"]
	cfg := natsengine.DefaultConfig()
	cfg.Token, cfg.ConnectTimeout = natsTestToken, 90*time.Second
	probe, err := natsengine.Connect(context.Background(), natsengine.ConnOptions{Config: cfg, URL: urls})
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	// … and for the nodes to have created the streams and buckets (the
	// last one each node makes is the claims bucket).
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for {
		// Each look bounded: a request lost while the cluster elects its
		// leaders is never answered (this probe once waited out the whole
		// 90 s on one).
		actx, acancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := probe.JS.KeyValue(actx, natsjournal.ClaimBucket)
		acancel()
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			for _, n := range names {
				t.Logf("node %s stderr:\n%s", n, tailOf(nodes[n].Stderr(), 3000))
			}
			dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
			for name := range probe.JS.StreamNames(dctx).Name() {
				t.Logf("stream %s exists", name)
			}
			dcancel()
			t.Fatal("the cluster's nodes did not create the messaging streams within 90s")
		case <-time.After(200 * time.Millisecond): // polling the cluster's state
		}
	}
	for _, n := range names {
		nodes[n].ExpectLog(t, "mcprt nats ready", func(m map[string]any) bool { return m["msg"] == "mcprt nats ready" })
	}
	env := []string{"MCPRT_AACP_BACKEND=nats", "MCPRT_NATS_URL=" + urls, "MCPRT_NATS_TOKEN=" + natsTestToken,
		"MCPRT_NATS_REPLICAS=3", "MCPRT_NATS_CONNECT_TIMEOUT_MS=30000"}
	mgr := startAgent(t, filepath.Join(t.TempDir(), "m"), "mgr", "Manager", env...)
	impl := startAgent(t, filepath.Join(t.TempDir(), "i"), "impl", "Implementation", env...)
	impl.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)
	mgr.ok(t, "aacp_register_agent", `{"type":"Manager"}`)

	roundTrip := func(task string) {
		t.Helper()
		sent := mgr.ok(t, "aacp_send", sendArgsTo("impl", "TASK_ASSIGNMENT", assignment(task)))
		// Short waits, several of them: right after a node is lost, reads
		// wait out the cluster's leader election (each receive answers
		// within its wait plus a bounded read), and the message comes
		// once the election is over.
		var m map[string]any
		for try := 0; m == nil; try++ {
			if try == 15 {
				t.Fatalf("impl received nothing in 15 receives of 2 s, want %s", astr(sent, "requestId"))
			}
			if msgs := impl.receive(t, `{"waitMs":2000,"max":1,"messageTypes":["TASK_ASSIGNMENT"]}`); len(msgs) == 1 {
				m = msgs[0]
			}
		}
		if astr(m, "requestId") != astr(sent, "requestId") {
			t.Fatalf("received %v, want request %s", m, astr(sent, "requestId"))
		}
		impl.ok(t, "aacp_ack", `{"messageId":`+jsonString(astr(m, "messageId"))+`,"status":"processed"}`)
		mgr.waitStatus(t, astr(sent, "requestId"), func(st map[string]any) bool { return st["outcome"] == "COMPLETED" })
	}
	roundTrip("t1")
	hl := mgr.ok(t, "health", `{}`)
	if astr(hl, "messaging", "cluster") != "mcprt" {
		t.Errorf("health messaging = %v, want cluster mcprt", hl["messaging"])
	}
	// One node killed: R3 keeps every write on the two others. Right
	// after the loss the cluster elects new leaders for what the node led
	// and the sessions' inboxes replace consumers it held; the round trip
	// completes within the receives' budget above.
	nodes["b"].Signal(syscall.SIGKILL)
	nodes["b"].Wait(t)
	roundTrip("t2")
}

// tailOf is the last n bytes of s.
func tailOf(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
