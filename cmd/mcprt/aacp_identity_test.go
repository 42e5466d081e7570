package main

// An identity per connection: two stdio sessions (two processes) and two
// HTTP sessions of one `mcprt --http` (driven by the official TypeScript
// SDK client, testdata/tshttp/identity.mjs) share one data directory, each
// with its own agent id; an id another live session holds is refused,
// naming the holder; a made-up default id never reaches the registry.

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

func TestAACPIdentityPerConnection(t *testing.T) {
	node, modules := npmInstall(t, "tshttp")
	bin := wiretest.Build(t)
	dir := filepath.Join(t.TempDir(), "shared")
	s1 := startAgent(t, dir, "stdio_1", "Manager")
	s2 := startAgent(t, dir, "stdio_2", "Implementation")
	s1.ok(t, "aacp_register_agent", `{"type":"Manager"}`)
	s2.ok(t, "aacp_heartbeat", `{"status":"starting"}`) // acting registers the configured id
	if e := s2.fails(t, "aacp_register_agent", `{"agentId":"stdio_1","type":"Implementation"}`, "E_ROUTING_003"); !strings.Contains(e.Message, "another process") {
		t.Fatalf("taking stdio_1 from another process: %q, want it to say another process hosts it", e.Message)
	}

	srv, url := startHTTPServer(t, bin, "", "MCPRT_AACP_DATA_DIR="+dir)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	run := exec.CommandContext(ctx, node, "identity.mjs")
	run.Dir = nodeWorkDir(t, "tshttp", modules, "identity.mjs")
	run.Env = wiretest.CleanEnv("MCPRT_URL=" + url)
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("identity.mjs failed (%v):\n%s\nserver stderr:\n%s", err, out, stderrTail(srv))
	}

	m := s1.receiveOne(t)
	if astr(m, "sender", "agentId") != "http_a" || astr(m, "receiver", "agentId") != "stdio_1" {
		t.Fatalf("stdio_1 received %v, want a message from http_a", m)
	}
	agents := s2.ok(t, "aacp_agents", `{}`)["agents"].([]any)
	ids := map[string]string{}
	for _, a := range agents {
		ids[astr(a, "agentId")] = astr(a, "presence")
	}
	if ids["stdio_1"] != "online" || ids["stdio_2"] != "online" || ids["http_a"] == "" || ids["http_b"] != "offline" {
		t.Fatalf("agents %v, want stdio_1, stdio_2 online, http_a and http_b offline", ids)
	}
	for id := range ids {
		if strings.HasPrefix(id, "mcprt-") {
			t.Fatalf("a made-up default id reached the registry: %v", ids)
		}
	}
	finishAgent(t, s1)
	finishAgent(t, s2)
}
