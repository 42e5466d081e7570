package main

// Two mcprt processes (two AI sessions) sharing one store directory.

import (
	"strings"
	"testing"
)

func TestDomainTwoProcessesShareOneStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, _ := newDomainClient(t, dir)
	b, _ := newDomainClient(t, dir)

	a.ok("memory_store", `{"key":"handoff/api","value":{"note":"the pagination cursor is opaque base64"},"namespace":"team"}`)
	r := b.ok("memory_retrieve", `{"key":"handoff/api","namespace":"team"}`)
	if r["found"] != true || !strings.Contains(asJSON(t, r["value"]), "opaque base64") {
		t.Fatalf("process B does not see A's memory: %v", r)
	}
	if r = b.ok("memory_search", `{"query":"pagination cursor","fullText":true}`); domNum(r["count"]) != 1 {
		t.Fatalf("process B's full-text search misses A's memory: %v", r)
	}
	b.ok("memory_store", `{"key":"handoff/api","value":{"note":"revised by B"},"namespace":"team"}`)
	if r = a.ok("memory_retrieve", `{"key":"handoff/api","namespace":"team"}`); !strings.Contains(asJSON(t, r["value"]), "revised by B") {
		t.Fatalf("process A does not see B's overwrite: %v", r)
	}

	s := a.ok("session_create", `{"initiator":"agent-a","task":"pair on issue 13"}`)
	id := s["sessionId"].(string)
	b.ok("session_join", `{"sessionId":"`+id+`","agentId":"agent-b","role":"reviewer"}`)
	a.ok("session_join", `{"sessionId":"`+id+`","agentId":"agent-c"}`)
	for _, c := range []*toolClient{a, b} {
		r := c.ok("session_status", `{"sessionId":"`+id+`"}`)
		got := asJSON(t, r["participants"])
		for _, agent := range []string{"agent-a", "agent-b", "agent-c"} {
			if !strings.Contains(got, agent) {
				t.Fatalf("participants seen by one process lack %s: %s", agent, got)
			}
		}
	}
	b.ok("session_complete", `{"sessionId":"`+id+`"}`)
	a.failsQuick("session_complete", `{"sessionId":"`+id+`"}`, "SESSION_ALREADY_COMPLETED")

	// Both processes' traces land in the one store, each under its server id.
	finish(t, a.p) // Close writes A's queued events
	r = b.ok("trace_by_session", `{"sessionId":"`+id+`"}`)
	servers := map[string]bool{}
	for _, ev := range r["events"].([]any) {
		servers[ev.(map[string]any)["serverId"].(string)] = true
	}
	if len(servers) != 2 {
		t.Fatalf("trace_by_session shows steps of %d processes, want 2: %v", len(servers), r)
	}
	finish(t, b.p)
}
