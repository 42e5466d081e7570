package main

// Retries and the dead-letter queue through two binaries configured with
// a retry budget of one: a receiver that rejects a message asking for a
// retry makes the sender retry, then fail the delivery once the budget
// is spent (dead letter + ERROR_REPORT from the broker);
// aacp_requeue, or `mcprt aacp requeue` once the sender has stopped,
// delivers it.

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// shortTimeouts: 300 ms to answer, one retry after ~100 ms.
var shortTimeouts = []string{"MCPRT_AACP_ACK_TIMEOUT_MS=300", "MCPRT_AACP_MAX_RETRIES=1", "MCPRT_AACP_RETRY_BASE_MS=100"}

func TestAACPRetryDeadLetterRequeue(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "shared")
	mgr := startAgent(t, dir, "manager_001", "Manager", shortTimeouts...)
	impl := startAgent(t, dir, "impl_001", "Implementation", shortTimeouts...)
	impl.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)

	failUnanswered := func(task string) (requestID string, deadLetter map[string]any) {
		t.Helper()
		sent := mgr.ok(t, "aacp_send", sendArgsTo("impl_001", "TASK_ASSIGNMENT", assignment(task)))
		requestID = sent["requestId"].(string)
		// impl_001 takes the message and rejects it, asking for a retry,
		// twice: the sender retries once, then the budget is spent.
		first := impl.receiveOne(t)
		impl.ok(t, "aacp_nack", `{"messageId":`+jsonString(astr(first, "messageId"))+`,"reason":"busy","errorCode":"E_TASK_004","canRetry":true}`)
		again := impl.receiveOne(t)
		if astr(first, "requestId") != requestID || astr(again, "requestId") != requestID ||
			anum(again, "metadata", "retryCount") != 1 || astr(again, "messageId") == astr(first, "messageId") {
			t.Fatalf("first %v\nagain %v\nwant the retry of %s", first, again, requestID)
		}
		impl.ok(t, "aacp_nack", `{"messageId":`+jsonString(astr(again, "messageId"))+`,"reason":"still busy","errorCode":"E_TASK_004","canRetry":true}`)
		st := mgr.waitStatus(t, requestID, func(st map[string]any) bool { return st["outcome"] == "FAILED" })
		d := st["deliveries"].([]any)[0]
		if astr(d, "state") != "FAILED" || anum(d, "retries") != 1 || astr(d, "code") != "E_TASK_004" {
			t.Fatalf("status %v, want FAILED after 1 retry with E_TASK_004", st)
		}
		report := mgr.receiveOne(t, "ERROR_REPORT")
		if astr(report, "sender", "agentId") != "_broker" || !strings.Contains(string(mustJSON(t, report["payload"])), requestID) {
			t.Fatalf("report %v, want an ERROR_REPORT from _broker about %s", report, requestID)
		}
		mgr.ok(t, "aacp_ack", `{"messageId":`+jsonString(astr(report, "messageId"))+`,"status":"processed"}`)
		dl := mgr.ok(t, "aacp_dead_letters", `{}`)["deadLetters"].([]any)
		if len(dl) != 1 || astr(dl[0], "requestId") != requestID || astr(dl[0], "receiver") != "impl_001" {
			t.Fatalf("dead letters %v, want the one of %s", dl, requestID)
		}
		return requestID, dl[0].(map[string]any)
	}

	// Requeued through the tool: delivered, processed, completed.
	requestID, dead := failUnanswered("t1")
	env := []string{"MCPRT_AACP_DATA_DIR=" + dir}
	out, _, code := runOperator(t, env, "--json", "dead-letters")
	var listed struct{ DeadLetters []map[string]any }
	if err := json.Unmarshal([]byte(out), &listed); code != 0 || err != nil || len(listed.DeadLetters) != 1 ||
		listed.DeadLetters[0]["messageId"] != dead["messageId"] {
		t.Fatalf("mcprt aacp --json dead-letters: exit %d, %v\n%s", code, err, out)
	}
	re := mgr.ok(t, "aacp_requeue", `{"messageId":`+jsonString(astr(dead, "messageId"))+`}`)
	if re["requestId"] != requestID || re["state"] != "IN_TRANSIT" {
		t.Fatalf("requeue %v", re)
	}
	m := impl.receiveOne(t)
	if astr(m, "requestId") != requestID || astr(m, "messageId") != re["messageId"] {
		t.Fatalf("after requeue received %v, want %v", m, re)
	}
	impl.ok(t, "aacp_ack", `{"messageId":`+jsonString(astr(m, "messageId"))+`,"status":"processed"}`)
	mgr.waitStatus(t, requestID, func(st map[string]any) bool { return st["outcome"] == "COMPLETED" })
	if n := anum(mgr.ok(t, "aacp_dead_letters", `{}`), "total"); n != 0 {
		t.Fatalf("%v dead letters after the requeue, want 0", n)
	}

	// Requeued by the operator once the sender has stopped; the sender
	// finds the outcome when it comes back.
	requestID, dead = failUnanswered("t2")
	finishAgent(t, mgr)
	out, errOut, code := runOperator(t, env, "requeue", astr(dead, "messageId"))
	if code != 0 || !strings.Contains(out, "requeued "+astr(dead, "messageId")) {
		t.Fatalf("mcprt aacp requeue: exit %d\n%s%s", code, out, errOut)
	}
	m = impl.receiveOne(t)
	if astr(m, "requestId") != requestID {
		t.Fatalf("after the operator's requeue received %v, want %s", m, requestID)
	}
	impl.ok(t, "aacp_ack", `{"messageId":`+jsonString(astr(m, "messageId"))+`,"status":"processed"}`)
	mgr = startAgent(t, dir, "manager_001", "Manager", shortTimeouts...)
	mgr.waitStatus(t, requestID, func(st map[string]any) bool { return st["outcome"] == "COMPLETED" })
	_, errOut, code = runOperator(t, env, "requeue", astr(dead, "messageId"))
	if code != 1 || !strings.Contains(errOut, "no dead letter") {
		t.Fatalf("requeue of a requeued message: exit %d, %s", code, errOut)
	}
	finishAgent(t, mgr)
	finishAgent(t, impl)
}
