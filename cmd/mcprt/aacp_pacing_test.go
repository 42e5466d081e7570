package main

// Delivery paced by the inbox, through two binaries in mode TEST whose
// clocks the clock_advance fixture moves: a message waiting in an inbox
// is never late; once taken and left unanswered it is offered again after
// its ack timeout; only its ttl fails it, with one dead letter and one
// ERROR_REPORT, and a late ACK is refused.

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestAACPDeliveryPacedByTheInbox(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "shared")
	mgr := startAgent(t, dir, "manager_001", "Manager", "MCPRT_SERVER_MODE=TEST")
	impl := startAgent(t, dir, "impl_001", "Implementation", "MCPRT_SERVER_MODE=TEST")
	impl.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)
	advance := func(ms string, procs ...*aproc) {
		t.Helper()
		for _, p := range procs {
			p.ok(t, "clock_advance", `{"ms":`+ms+`}`)
		}
	}
	noReport := func() {
		t.Helper()
		if got := mgr.receive(t, `{"waitMs":300,"messageTypes":["ERROR_REPORT"]}`); len(got) != 0 {
			t.Fatalf("the sender got %v, want no ERROR_REPORT", got)
		}
	}

	// Taken five minutes after it was sent: the one transmission, and
	// the sender never sees FAILED.
	sent := mgr.ok(t, "aacp_send", sendArgsTo("impl_001", "TASK_ASSIGNMENT", assignment("t1")))
	requestID := astr(sent, "requestId")
	advance("300000", mgr, impl)
	noReport()
	st := mgr.ok(t, "aacp_status", `{"requestId":`+jsonString(requestID)+`}`)
	if st["state"] != "IN_TRANSIT" || anum(st["deliveries"].([]any)[0], "retries") != 0 {
		t.Fatalf("five minutes untaken: %v, want IN_TRANSIT without retries", st)
	}
	msgs := impl.receive(t, `{"max":10}`)
	if len(msgs) != 1 || astr(msgs[0], "requestId") != requestID || msgs[0]["redelivered"] == true ||
		anum(msgs[0], "metadata", "retryCount") != 0 {
		t.Fatalf("the late worker got %v, want the one transmission of %s", msgs, requestID)
	}
	impl.ok(t, "aacp_ack", `{"messageId":`+jsonString(astr(msgs[0], "messageId"))+`,"status":"processed"}`)
	mgr.waitStatus(t, requestID, func(st map[string]any) bool { return st["outcome"] == "COMPLETED" })
	if h := string(mustJSON(t, mgr.ok(t, "aacp_status", `{"requestId":`+jsonString(requestID)+`}`)["history"])); strings.Contains(h, "FAILED") {
		t.Fatalf("history %s, want no FAILED", h)
	}

	// Taken and left unanswered: offered again after the ack timeout
	// (30 s for TASK_ASSIGNMENT, then a 1 s backoff).
	sent = mgr.ok(t, "aacp_send", sendArgsTo("impl_001", "TASK_ASSIGNMENT", assignment("t2"), `"ttlSeconds":120`))
	requestID = astr(sent, "requestId")
	first := impl.receiveOne(t)
	mgr.waitStatus(t, requestID, func(st map[string]any) bool { // the sender learnt it was taken
		return astr(st["deliveries"].([]any)[0], "ackDeadline") != ""
	})
	advance("31000", mgr)
	mgr.waitStatus(t, requestID, func(st map[string]any) bool { return st["state"] == "PENDING" })
	advance("2000", mgr)
	again := impl.receiveOne(t)
	if astr(again, "requestId") != requestID || again["redelivered"] != true || astr(again, "messageId") == astr(first, "messageId") {
		t.Fatalf("re-offer %v, want %s again, redelivered", again, requestID)
	}
	noReport()

	// Its ttl ends it: FAILED once, one dead letter, one ERROR_REPORT; the
	// worker's late ACK is refused, and the outcome stays FAILED.
	advance("120000", mgr, impl)
	mgr.waitStatus(t, requestID, func(st map[string]any) bool { return st["outcome"] == "FAILED" })
	report := mgr.receiveOne(t, "ERROR_REPORT")
	if !strings.Contains(string(mustJSON(t, report["payload"])), requestID) {
		t.Fatalf("report %v, want one about %s", report, requestID)
	}
	e := impl.fails(t, "aacp_ack", `{"messageId":`+jsonString(astr(again, "messageId"))+`,"status":"processed"}`, "E_PROTOCOL_004")
	if !strings.Contains(e.Message, "expired") {
		t.Fatalf("late ACK refused with %q, want it to say the message expired", e.Message)
	}
	advance("60000", mgr)
	noReport()
	if n := anum(mgr.ok(t, "aacp_dead_letters", `{}`), "total"); n != 1 {
		t.Fatalf("%v dead letters, want 1", n)
	}
	if st := mgr.ok(t, "aacp_status", `{"requestId":`+jsonString(requestID)+`}`); st["outcome"] != "FAILED" {
		t.Fatalf("after the late ACK: %v, want FAILED", st)
	}
	finishAgent(t, mgr)
	finishAgent(t, impl)
}
