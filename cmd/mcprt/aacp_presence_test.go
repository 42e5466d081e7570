package main

// Presence through two binaries in mode TEST sharing a data directory:
// an explicit heartbeat and any tool call keep an agent online; silence
// makes it idle, then stale (clock_advance moves time); an agent whose
// process ended is offline, then retired once silent for
// aacp.staleAfterMs; a returning agent resumes its identity.

import (
	"path/filepath"
	"testing"
	"time"
)

func TestAACPPresence(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "shared")
	mgr := startAgent(t, dir, "manager_001", "Manager", "MCPRT_SERVER_MODE=TEST")
	w := startAgent(t, dir, "worker_1", "Implementation", "MCPRT_SERVER_MODE=TEST")
	mgr.ok(t, "aacp_register_agent", `{"type":"Manager"}`)
	hb := w.ok(t, "aacp_heartbeat", `{"status":"building the parser"}`)
	if astr(hb, "agentId") != "worker_1" || astr(hb, "presence") != "online" {
		t.Fatalf("heartbeat %v, want worker_1 online", hb)
	}
	presence := func(want string) map[string]any {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			agents := mgr.ok(t, "aacp_agents", `{"agentId":"worker_1"}`)["agents"].([]any)
			var got map[string]any
			if len(agents) == 1 {
				got = agents[0].(map[string]any)
			}
			if (want == "" && got == nil) || (got != nil && got["presence"] == want) {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("worker_1 is %v, want %q", got, want)
			}
			// Bounded wait on the manager's inbox rather than a sleep.
			mgr.receive(t, `{"waitMs":50,"messageTypes":["CUSTOM_NEVER_SENT"]}`)
		}
	}
	if a := presence("online"); astr(a, "status") != "building the parser" || astr(a, "lastSeen") == "" {
		t.Fatalf("worker_1 %v, want its status and lastSeen", a)
	}
	mgr.ok(t, "clock_advance", `{"ms":180000}`) // 3 min of silence
	presence("idle")
	mgr.ok(t, "clock_advance", `{"ms":780000}`) // 16 min
	presence("stale")

	// Any tool call is a heartbeat (written within about a second).
	w.ok(t, "clock_advance", `{"ms":960000}`)
	w.ok(t, "server_ping", `{}`)
	presence("online")

	// Its process ends: offline; silent for staleAfterMs: retired.
	finishAgent(t, w)
	presence("offline")
	mgr.ok(t, "clock_advance", `{"ms":960000}`)
	presence("")
	if e := mgr.fails(t, "aacp_send", sendArgsTo("worker_1", "CUSTOM_PING", `{}`), "E_ROUTING_001"); e.Message == "" {
		t.Fatal("a send to a retired agent succeeded")
	}

	// It comes back and resumes its identity.
	w = startAgent(t, dir, "worker_1", "Implementation", "MCPRT_SERVER_MODE=TEST")
	w.ok(t, "clock_advance", `{"ms":1920000}`)
	w.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)
	presence("online")
	mgr.ok(t, "aacp_send", sendArgsTo("worker_1", "CUSTOM_PING", `{}`))
	if m := w.receiveOne(t); astr(m, "sender", "agentId") != "manager_001" {
		t.Fatalf("the returning worker received %v", m)
	}
	finishAgent(t, w)
	finishAgent(t, mgr)
}
