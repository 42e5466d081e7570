package main

// The shared state through the binary (aacp.stateBackend=nats): two mcprt
// processes with separate data directories, connected only through an
// `mcprt nats` hub, share memory, reservations and the work queue.

import (
	"path/filepath"
	"testing"
)

// stateEnv is the environment of an mcprt process whose messaging and
// shared state are on the hub.
func (h *hub) stateEnv(extra ...string) []string {
	return h.clientEnv(append([]string{"MCPRT_AACP_STATE_BACKEND=nats"}, extra...)...)
}

func TestNATSSharedMemory(t *testing.T) {
	t.Parallel()
	h := newHub(t)
	a := startAgent(t, filepath.Join(t.TempDir(), "a"), "alice", "Manager", h.stateEnv()...)
	b := startAgent(t, filepath.Join(t.TempDir(), "b"), "bob", "Implementation", h.stateEnv()...)

	st := a.ok(t, "memory_store", `{"namespace":"proj","key":"decision/db","value":{"text":"we chose sqlite for the local index"}}`)
	if st["replaced"] != false {
		t.Fatalf("memory_store = %v, want a new entry", st)
	}
	// Read-your-writes on the writer.
	if got := a.ok(t, "memory_retrieve", `{"namespace":"proj","key":"decision/db"}`); got["found"] != true {
		t.Fatalf("the writer does not read its own write: %v", got)
	}
	// b writes after a: once b's own write is applied on b, so is a's
	// (the stream orders them), and b's local full-text index finds it.
	b.ok(t, "memory_store", `{"namespace":"proj","key":"note/b","value":"bob was here"}`)
	res := b.ok(t, "memory_search", `{"query":"sqlite index","fullText":true}`)
	if rs, _ := res["results"].([]any); anum(res, "count") != 1 || len(rs) != 1 || astr(rs[0], "key") != "decision/db" {
		t.Fatalf("memory_search on the other process = %v, want decision/db", res)
	}
	// An overwrite and a delete on b reach a.
	if got := b.ok(t, "memory_store", `{"namespace":"proj","key":"decision/db","value":"changed"}`); got["replaced"] != true {
		t.Fatalf("overwrite on b = %v, want replaced", got)
	}
	b.ok(t, "memory_delete", `{"namespace":"proj","key":"note/b"}`)
	a.ok(t, "memory_store", `{"namespace":"sync","key":"k","value":1}`)
	if got := a.ok(t, "memory_retrieve", `{"namespace":"proj","key":"decision/db"}`); string(mustJSON(t, got["value"])) != `"changed"` {
		t.Fatalf("a reads %v, want b's overwrite", got)
	}
	if got := a.ok(t, "memory_retrieve", `{"namespace":"proj","key":"note/b"}`); got["found"] != false {
		t.Fatalf("a still finds b's deleted entry: %v", got)
	}
	// health reports the applier, caught up.
	hl := a.ok(t, "health", `{}`)
	ss, _ := hl["messaging"].(map[string]any)["sharedState"].(map[string]any)
	if ss == nil || ss["applied"] != ss["last"] || anum(hl, "messaging", "sharedState", "applied") < 5 {
		t.Fatalf("health sharedState = %v, want applied = last ≥ 5", ss)
	}
}
