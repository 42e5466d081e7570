package main

// Several messages answered with one aacp_ack (messageIds) through the
// binary, on the NATS hub: the answers go out together (one ledger
// write, one channel write) and every sender's request completes.

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

func TestNATSHubAckSeveralAtOnce(t *testing.T) {
	t.Parallel()
	h := newHub(t)
	mgr := startAgent(t, filepath.Join(t.TempDir(), "a"), "mgr", "Manager", h.clientEnv()...)
	impl := startAgent(t, filepath.Join(t.TempDir(), "b"), "impl", "Implementation", h.clientEnv()...)
	impl.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)
	mgr.ok(t, "aacp_register_agent", `{"type":"Manager"}`)
	var reqs []string
	for _, task := range []string{"t1", "t2", "t3"} {
		reqs = append(reqs, astr(mgr.ok(t, "aacp_send", sendArgsTo("impl", "TASK_ASSIGNMENT", assignment(task))), "requestId"))
	}
	var ids []string
	for range 5 {
		for _, m := range impl.receive(t, `{"waitMs":5000,"max":10}`) {
			ids = append(ids, astr(m, "messageId"))
		}
		if len(ids) >= len(reqs) {
			break
		}
	}
	if len(ids) != len(reqs) {
		t.Fatalf("impl took %d messages, want %d", len(ids), len(reqs))
	}
	list, _ := json.Marshal(ids)
	out := impl.ok(t, "aacp_ack", `{"messageIds":`+string(list)+`,"status":"processed"}`)
	if out["status"] != "processed" || out["failed"] != nil {
		t.Fatalf("aacp_ack with messageIds = %v, want every id answered", out)
	}
	for _, req := range reqs {
		mgr.waitStatus(t, req, func(st map[string]any) bool { return st["outcome"] == "COMPLETED" })
	}
}
