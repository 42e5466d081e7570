package main

// Two real mcprt processes, a manager and an implementation agent,
// coordinating through the aacp_* tools over one shared data directory:
// assignment, progress update, hand-off, error report, rejection; then
// the operator commands on what they left.

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestAACPTwoSessionsCoordinate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "shared")
	mgr := startAgent(t, dir, "manager_001", "Manager")
	impl := startAgent(t, dir, "impl_001", "Implementation")

	reg := mgr.ok(t, "aacp_register_agent", `{"type":"Manager","capabilities":["TASK_ASSIGNMENT","HANDOFF_REQUEST"]}`)
	if reg["agentId"] != "manager_001" || reg["protocolVersion"] != "1.0.0" {
		t.Fatalf("register %v, want manager_001 on 1.0.0", reg)
	}
	impl.ok(t, "aacp_register_agent", `{"type":"Implementation","capabilities":["TASK_UPDATE"]}`)
	agents := mgr.ok(t, "aacp_agents", `{}`)["agents"].([]any)
	if len(agents) != 2 || astr(agents[0], "agentId") != "impl_001" || agents[0].(map[string]any)["online"] != true ||
		agents[0].(map[string]any)["local"] != false || agents[1].(map[string]any)["local"] != true {
		t.Fatalf("agents as the manager sees them: %v", agents)
	}
	if got := mgr.ok(t, "aacp_agents", `{"type":"Implementation"}`)["agents"].([]any); len(got) != 1 {
		t.Fatalf("agents of type Implementation: %v", got)
	}

	// The manager assigns a task.
	sent := mgr.ok(t, "aacp_send", sendArgsTo("impl_001", "TASK_ASSIGNMENT", assignment("t1"),
		`"correlationId":"task-t1"`, `"priority":"HIGH"`, `"tags":["sprint-1"]`))
	deliveries := sent["deliveries"].([]any)
	if len(deliveries) != 1 || astr(deliveries[0], "agentId") != "impl_001" || anum(deliveries[0], "seq") != 1 ||
		astr(deliveries[0], "state") != "IN_TRANSIT" || sent["messageId"] == "" {
		t.Fatalf("send returned %v", sent)
	}
	assignID := sent["requestId"].(string)

	// The implementation agent receives it, confirms receipt, reports
	// progress, and finishes.
	got := impl.receiveOne(t)
	if astr(got, "messageType") != "TASK_ASSIGNMENT" || astr(got, "sender", "agentId") != "manager_001" ||
		astr(got, "sender", "type") != "Manager" || astr(got, "payload", "taskId") != "t1" || astr(got, "requestId") != assignID ||
		astr(got, "correlationId") != "task-t1" || astr(got, "priority") != "HIGH" || anum(got, "seq") != 1 {
		t.Fatalf("received %v", got)
	}
	assignMsg := astr(got, "messageId")
	impl.ok(t, "aacp_ack", `{"messageId":`+jsonString(assignMsg)+`,"status":"received","notes":"on it"}`)
	mgr.waitStatus(t, assignID, func(st map[string]any) bool { return st["state"] == "DELIVERED" })

	upd := impl.ok(t, "aacp_send", sendArgsTo("manager_001", "TASK_UPDATE",
		`{"taskId":"t1","status":"in_progress","progress":0.5,"currentStep":"tests","filesModified":["a.go"]}`, `"correlationId":"task-t1"`))
	m := mgr.receiveOne(t)
	if astr(m, "messageType") != "TASK_UPDATE" || anum(m, "payload", "progress") != 0.5 || astr(m, "correlationId") != "task-t1" {
		t.Fatalf("the manager received %v, want the TASK_UPDATE", m)
	}
	mgr.ok(t, "aacp_ack", `{"messageId":`+jsonString(astr(m, "messageId"))+`,"status":"processed"}`)
	impl.waitStatus(t, upd["requestId"].(string), func(st map[string]any) bool { return st["outcome"] == "COMPLETED" })

	impl.ok(t, "aacp_ack", `{"messageId":`+jsonString(assignMsg)+`,"status":"processed"}`)
	st := mgr.waitStatus(t, assignID, func(st map[string]any) bool { return st["outcome"] == "COMPLETED" })
	if st["state"] != "PROCESSED" || astr(st["deliveries"].([]any)[0], "ackStatus") != "processed" || len(st["history"].([]any)) < 2 {
		t.Fatalf("status after processing: %v", st)
	}
	// Answered: a second ACK is NOT_FOUND, and nothing is handed out again.
	impl.fails(t, "aacp_ack", `{"messageId":`+jsonString(assignMsg)+`,"status":"processed"}`, "NOT_FOUND")
	if again := impl.receive(t, `{}`); len(again) != 0 {
		t.Fatalf("handed out again after processing: %v", again)
	}

	// Hand-off and error report, implementation → manager.
	impl.ok(t, "aacp_send", sendArgsTo("manager_001", "HANDOFF_REQUEST",
		`{"taskId":"t1","reason":"context_window_limit","sourceAgent":{"agentId":"impl_001","type":"Implementation"},`+
			`"targetAgent":{"agentId":"impl_002","type":"Implementation"},"handoffContext":{"done":["a.go"],"next":"b.go"}}`))
	impl.ok(t, "aacp_send", sendArgsTo("manager_001", "ERROR_REPORT",
		`{"errorType":"TaskFailure","errorCode":"E_TASK_003","errorMessage":"b.go does not compile","severity":"high","recoverable":true}`))
	for _, want := range []string{"HANDOFF_REQUEST", "ERROR_REPORT"} {
		m := mgr.receiveOne(t)
		if astr(m, "messageType") != want || astr(m, "sender", "agentId") != "impl_001" {
			t.Fatalf("the manager received %v, want %s from impl_001", m, want)
		}
		mgr.ok(t, "aacp_ack", `{"messageId":`+jsonString(astr(m, "messageId"))+`,"status":"processed"}`)
	}

	// A rejected assignment fails at once: dead letter, and an ERROR_REPORT
	// from the broker to the manager.
	second := mgr.ok(t, "aacp_send", sendArgsTo("impl_001", "TASK_ASSIGNMENT", assignment("t2")))
	m = impl.receiveOne(t)
	impl.ok(t, "aacp_nack", `{"messageId":`+jsonString(astr(m, "messageId"))+`,"reason":"t2 is already assigned","errorCode":"E_TASK_002","canRetry":false}`)
	st = mgr.waitStatus(t, second["requestId"].(string), func(st map[string]any) bool { return st["outcome"] == "FAILED" })
	if d := st["deliveries"].([]any)[0]; astr(d, "state") != "FAILED" || astr(d, "code") != "E_TASK_002" {
		t.Fatalf("status after the NACK: %v, want FAILED with the receiver's code E_TASK_002", st)
	}
	report := mgr.receiveOne(t, "ERROR_REPORT")
	if astr(report, "sender", "agentId") != "_broker" || !strings.Contains(string(mustJSON(t, report["payload"])), second["requestId"].(string)) {
		t.Fatalf("failure report %v, want one from _broker naming request %v", report, second["requestId"])
	}
	mgr.ok(t, "aacp_ack", `{"messageId":`+jsonString(astr(report, "messageId"))+`,"status":"processed"}`)
	dl := mgr.ok(t, "aacp_dead_letters", `{}`)
	if anum(dl, "total") != 1 || astr(dl["deadLetters"].([]any)[0], "requestId") != second["requestId"] {
		t.Fatalf("dead letters %v, want the rejected assignment", dl)
	}

	// The operator's view while both sessions run.
	env := []string{"MCPRT_AACP_DATA_DIR=" + dir}
	out, errOut, code := runOperator(t, env, "agents")
	if code != 0 || !strings.HasPrefix(out, "AGENT") || !strings.Contains(out, "impl_001") || !strings.Contains(out, "Manager") ||
		strings.Count(out, "yes") != 2 {
		t.Fatalf("mcprt aacp agents: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = runOperator(t, env, "channel", "manager_001", "impl_001")
	// Two assignments, and between them the manager's taken notices and
	// ACKs of what impl_001 sent it (they travel on the same channel).
	if ls := outLines(out); code != 0 || len(ls) != 10 || !strings.Contains(ls[0], "8 stored") || !strings.HasPrefix(ls[1], "SEQ") ||
		!strings.Contains(ls[2], "TASK_ASSIGNMENT") || !strings.Contains(ls[2], "PROCESSED  processed") ||
		!strings.Contains(ls[3], "CUSTOM_MCPRT_TAKEN") || !strings.Contains(ls[4], "ACK") || !strings.Contains(ls[9], "FAILED     nacked") {
		t.Fatalf("mcprt aacp channel: exit %d\n%s", code, out)
	}
	out, _, code = runOperator(t, env, "--json", "channel", "manager_001", "impl_001")
	var ch struct {
		Channel  string
		Messages []struct {
			Seq               uint64
			State, Answer     string
			Envelope          map[string]any
			MessageID, Sender string
		}
	}
	if err := json.Unmarshal([]byte(out), &ch); code != 0 || err != nil || ch.Channel != "manager_001_to_impl_001" || len(ch.Messages) != 8 ||
		ch.Messages[0].Seq != 1 || ch.Messages[7].Seq != 8 || ch.Messages[7].State != "FAILED" || astr(ch.Messages[0].Envelope, "payload", "taskId") != "t1" {
		t.Fatalf("mcprt aacp --json channel: exit %d, %v\n%s", code, err, out)
	}
	out, _, code = runOperator(t, env, "inbox", "impl_001")
	if code != 0 || !strings.Contains(out, "0 unfinished") {
		t.Fatalf("mcprt aacp inbox impl_001: exit %d\n%s", code, out)
	}
	out, _, code = runOperator(t, env, "dead-letters")
	if ls := outLines(out); code != 0 || len(ls) != 2 || !strings.Contains(ls[1], "E_TASK_002") && !strings.Contains(ls[1], "t2 is already") {
		t.Fatalf("mcprt aacp dead-letters: exit %d\n%s", code, out)
	}
	_, errOut, code = runOperator(t, env, "requeue", astr(dl["deadLetters"].([]any)[0], "messageId"))
	if code != 1 || !strings.Contains(errOut, "running") {
		t.Fatalf("requeue while the sender runs: exit %d, %s; want 1 saying it runs", code, errOut)
	}

	// An unanswered message waits in the inbox across the receiver's
	// restart and is handed out again then.
	third := mgr.ok(t, "aacp_send", sendArgsTo("impl_001", "TASK_ASSIGNMENT", assignment("t3")))
	if m := impl.receiveOne(t); astr(m, "requestId") != third["requestId"] {
		t.Fatalf("received %v, want t3", m)
	}
	finishAgent(t, impl)
	out, _, _ = runOperator(t, env, "inbox", "impl_001")
	if !strings.Contains(out, "1 unfinished") || !strings.Contains(out, "waiting") {
		t.Fatalf("inbox after the receiver left:\n%s", out)
	}
	impl = startAgent(t, dir, "impl_001", "Implementation")
	if m := impl.receiveOne(t); astr(m, "requestId") != third["requestId"] {
		t.Fatalf("after a restart received %v, want t3 again", m)
	}
	finishAgent(t, impl)
	finishAgent(t, mgr)
}

// finishAgent closes a process's stdin and expects exit 0.
func finishAgent(t *testing.T, a *aproc) {
	t.Helper()
	a.p.CloseStdin()
	if code := a.p.Wait(t); code != 0 {
		t.Fatalf("%s exited %d\n%s", a.agent, code, a.p.Stderr())
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
