package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/core"
)

func TestSendReceiveAckComplete(t *testing.T) {
	r := newRig(t, Options{})
	r.register("manager", envelope.Manager)
	r.register("impl_1", envelope.Implementation)
	payload := json.RawMessage(`{"taskId":"t1","taskRef":"T 1","taskDescription":"do it","memoryLogPath":"m.md","executionType":"single-step"}`)
	out := r.send("manager", "impl_1", SendInput{MessageType: envelope.TaskAssignment, Payload: payload, Priority: envelope.High, CorrelationID: "c-1"})
	if len(out.Deliveries) != 1 || out.Deliveries[0].Seq != 1 || out.Deliveries[0].State != journal.InTransit || out.RequestID == "" {
		t.Fatalf("Send = %+v", out)
	}
	msgs := r.receive("impl_1", 10)
	if len(msgs) != 1 {
		t.Fatalf("received %d", len(msgs))
	}
	m := msgs[0]
	if m.MessageID != out.MessageID || m.RequestID != out.RequestID || m.Sender.AgentID != "manager" || m.Sender.Type != envelope.Manager ||
		m.Receiver.Type != envelope.Implementation || m.CorrelationID != "c-1" || m.Metadata.TTL != int64(DefaultTTL/time.Second) || m.Version != "1.0.0" {
		t.Errorf("received %+v", m)
	}
	if again := r.receive("impl_1", 10); len(again) != 0 {
		t.Errorf("a handed-out message came again: %+v", again)
	}
	r.ack("impl_1", m.MessageID, "received")
	r.b.Pump(r.ctx)
	if st := r.status("manager", out.RequestID); st.State != journal.Delivered || st.Outcome != journal.Unknown {
		t.Errorf("after ACK received: %+v", st)
	}
	r.ack("impl_1", m.MessageID, "processed")
	r.b.Pump(r.ctx)
	st := r.status("manager", out.RequestID)
	if st.State != journal.Processed || st.Outcome != journal.Completed || st.Deliveries[0].AckStatus != "processed" {
		t.Errorf("after ACK processed: %+v", st)
	}
	var states []journal.State
	for _, h := range st.History {
		states = append(states, h.State)
	}
	if fmt.Sprint(states) != "[IN_TRANSIT DELIVERED PROCESSED]" {
		t.Errorf("history %v", states)
	}
	// By messageId too.
	if st2, err := r.b.Status(r.ctx, "manager", StatusInput{MessageID: out.MessageID}); err != nil || st2.RequestID != out.RequestID {
		t.Errorf("Status by messageId = %+v, %v", st2, err)
	}
	// Processed messages cannot be answered again.
	if _, err := r.b.Ack(r.ctx, "impl_1", AckInput{MessageID: m.MessageID, Status: "processed"}); codeOf(err) != core.CodeNotFound {
		t.Errorf("Ack after processed = %v", err)
	}
	// The cumulative ack: manager received impl_1's taken notice and two
	// ACKs (seq 1, 2, 3) on impl_1→manager.
	back := r.send("impl_1", "manager", SendInput{})
	_ = back
	got := r.receive("manager", 10)
	if len(got) != 1 || got[0].Seq != 4 {
		t.Fatalf("manager received %+v", got)
	}
	reply := r.send("manager", "impl_1", SendInput{})
	msgs = r.receive("impl_1", 10)
	if len(msgs) != 1 || msgs[0].Ack != 4 || msgs[0].MessageID != reply.MessageID {
		t.Errorf("cumulative ack in %+v, want 4", msgs)
	}
}

func TestSendRejections(t *testing.T) {
	r := newRig(t, Options{})
	r.register("a", envelope.Manager)
	r.register("b", envelope.Implementation)
	cases := []struct {
		name string
		from string
		in   SendInput
		code core.Code
	}{
		{"unknown receiver", "a", SendInput{Receiver: Receiver{AgentID: "ghost"}, MessageType: "CUSTOM_X", Payload: custom(1)}, envelope.CodeAgentNotFound},
		{"unsafe receiver", "a", SendInput{Receiver: Receiver{AgentID: "../etc"}, MessageType: "CUSTOM_X", Payload: custom(1)}, envelope.CodeInvalidReceiver},
		{"wrong receiver type", "a", SendInput{Receiver: Receiver{AgentID: "b", Type: envelope.Manager}, MessageType: "CUSTOM_X", Payload: custom(1)}, envelope.CodeInvalidReceiver},
		{"no broadcast match", "a", SendInput{Receiver: Receiver{AgentID: "*", Type: envelope.AdHoc}, MessageType: "CUSTOM_X", Payload: custom(1)}, envelope.CodeAgentNotFound},
		{"sender not local", "zed", SendInput{Receiver: Receiver{AgentID: "b"}, MessageType: "CUSTOM_X", Payload: custom(1)}, envelope.CodeAgentNotFound},
		{"missing type", "a", SendInput{Receiver: Receiver{AgentID: "b"}, Payload: custom(1)}, envelope.CodeMissingField},
		{"unknown type", "a", SendInput{Receiver: Receiver{AgentID: "b"}, MessageType: "HELLO", Payload: custom(1)}, envelope.CodeInvalidEnum},
		{"ack by send", "a", SendInput{Receiver: Receiver{AgentID: "b"}, MessageType: "ACK", Payload: custom(1)}, envelope.CodeInvalidEnum},
		{"bad priority", "a", SendInput{Receiver: Receiver{AgentID: "b"}, MessageType: "CUSTOM_X", Payload: custom(1), Priority: "URGENT"}, envelope.CodeInvalidEnum},
		{"payload missing field", "a", SendInput{Receiver: Receiver{AgentID: "b"}, MessageType: "TASK_UPDATE", Payload: json.RawMessage(`{"taskId":"t","progress":0.1}`)}, envelope.CodeMissingField},
		{"payload bad enum", "a", SendInput{Receiver: Receiver{AgentID: "b"}, MessageType: "TASK_UPDATE", Payload: json.RawMessage(`{"taskId":"t","progress":0.1,"status":"done"}`)}, envelope.CodeInvalidEnum},
		{"payload bad type", "a", SendInput{Receiver: Receiver{AgentID: "b"}, MessageType: "TASK_UPDATE", Payload: json.RawMessage(`{"taskId":"t","progress":"x","status":"blocked"}`)}, envelope.CodeInvalidType},
		{"payload out of range", "a", SendInput{Receiver: Receiver{AgentID: "b"}, MessageType: "TASK_UPDATE", Payload: json.RawMessage(`{"taskId":"t","progress":7,"status":"blocked"}`)}, envelope.CodeSchema},
		{"payload malformed", "a", SendInput{Receiver: Receiver{AgentID: "b"}, MessageType: "CUSTOM_X", Payload: json.RawMessage(`{"a":1,"a":2}`)}, envelope.CodeMalformedJSON},
		{"payload too large", "a", SendInput{Receiver: Receiver{AgentID: "b"}, MessageType: "CUSTOM_X", Payload: json.RawMessage(`{"x":"` + strings.Repeat("0", envelope.DefaultMaxBytes) + `"}`)}, envelope.CodeTooLarge},
		{"bad correlation id", "a", SendInput{Receiver: Receiver{AgentID: "b"}, MessageType: "CUSTOM_X", Payload: custom(1), CorrelationID: "has space"}, envelope.CodeInvalidCorrelationID},
		{"bad request id", "a", SendInput{Receiver: Receiver{AgentID: "b"}, MessageType: "CUSTOM_X", Payload: custom(1), RequestID: string(make([]byte, 200))}, envelope.CodeInvalidCorrelationID},
		{"negative ttl", "a", SendInput{Receiver: Receiver{AgentID: "b"}, MessageType: "CUSTOM_X", Payload: custom(1), TTLSeconds: -1}, envelope.CodeSchema},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.b.Send(r.ctx, tc.from, tc.in)
			if codeOf(err) != tc.code {
				t.Fatalf("Send = %v, want %s", err, tc.code)
			}
		})
	}
	// Nothing was written by the refused sends.
	if msgs := r.receive("b", 100); len(msgs) != 0 {
		t.Errorf("refused sends delivered %d messages", len(msgs))
	}
}

func TestRegisterRules(t *testing.T) {
	r := newRig(t, Options{})
	if _, err := r.b.RegisterAgent(r.ctx, "a", RegisterInput{Type: envelope.Manager, SupportedVersions: []string{"2.0.0"}}); codeOf(err) != envelope.CodeUnsupportedVersion {
		t.Errorf("no common version: %v", err)
	}
	if _, err := r.b.RegisterAgent(r.ctx, "a/b", RegisterInput{Type: envelope.Manager}); codeOf(err) != envelope.CodeInvalidReceiver {
		t.Errorf("unsafe id: %v", err)
	}
	if _, err := r.b.RegisterAgent(r.ctx, "a", RegisterInput{Type: "Boss"}); codeOf(err) != envelope.CodeInvalidEnum {
		t.Errorf("bad type: %v", err)
	}
	out, err := r.b.RegisterAgent(r.ctx, "a", RegisterInput{Type: envelope.Manager, SupportedVersions: []string{"1.0.0", "1.1.0"}, Capabilities: []string{"TASK_UPDATE"}})
	if err != nil || out.ProtocolVersion != "1.0.0" {
		t.Fatalf("RegisterAgent = %+v, %v", out, err)
	}
	// A second broker on the same store cannot host the same agent.
	b2, _ := Open(Options{Store: r.b.Store(), Manual: true})
	defer b2.Close()
	if _, err := b2.RegisterAgent(r.ctx, "a", RegisterInput{Type: envelope.Manager}); codeOf(err) != envelope.CodeChannelUnavailable {
		t.Errorf("double hosting: %v", err)
	}
	r.register("b", envelope.AdHoc)
	ag, _ := r.b.Agents(r.ctx, AgentsInput{})
	if len(ag.Agents) != 2 || !ag.Agents[0].Local || !ag.Agents[0].Online || ag.Agents[0].Capabilities[0] != "TASK_UPDATE" {
		t.Errorf("Agents = %+v", ag)
	}
	ag, _ = r.b.Agents(r.ctx, AgentsInput{Type: envelope.AdHoc})
	if len(ag.Agents) != 1 || ag.Agents[0].AgentID != "b" {
		t.Errorf("Agents(AdHoc) = %+v", ag)
	}
	if err := r.b.UnregisterAgent(r.ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.b.Send(r.ctx, "a", SendInput{Receiver: Receiver{AgentID: "b"}, MessageType: "CUSTOM_X", Payload: custom(1)}); codeOf(err) != envelope.CodeAgentNotFound {
		t.Errorf("send to an unregistered agent: %v", err)
	}
}

func TestInboxPacedDeliveryReofferAndTTL(t *testing.T) {
	r := newRig(t, Options{Policies: map[string]RetryPolicy{"CUSTOM_*": {AckTimeout: 10 * time.Second, MaxRetries: 2, BaseBackoff: time.Second}}})
	r.register("a", envelope.Manager)
	r.register("b", envelope.Implementation)
	out := r.send("a", "b", SendInput{TTLSeconds: 600})
	// Waiting in an inbox nobody took is not late, however long.
	if n := r.advance(5 * time.Minute); n != 0 {
		t.Fatalf("acted %d times on a message nobody took", n)
	}
	if st := r.status("a", out.RequestID); st.State != journal.InTransit || st.Deliveries[0].Retries != 0 {
		t.Fatalf("after 5 minutes untaken: %+v", st)
	}
	first := r.receive("b", 10)
	if len(first) != 1 || first[0].MessageID != out.MessageID || first[0].Redelivered {
		t.Fatalf("the late taker got %+v, want the one transmission", first)
	}
	r.advance(0) // the sender reads the taken notice
	// Taken: the ack timer runs from now. Each time the taken message is
	// left unanswered past the timeout it is re-offered, with no budget.
	if n := r.advance(9 * time.Second); n != 0 {
		t.Fatalf("acted %d times before the ack deadline", n)
	}
	last := first[0]
	for round := 1; round <= 4; round++ { // more rounds than MaxRetries
		r.advance(time.Second) // ack deadline: re-offer scheduled
		if st := r.status("a", out.RequestID); st.State != journal.Pending {
			t.Fatalf("round %d, after the ack timeout: %+v", round, st)
		}
		r.advance(time.Minute) // the backoff has passed: re-offered
		again := r.receive("b", 10)
		if len(again) != 1 || !again[0].Redelivered || again[0].RequestID != out.RequestID || again[0].MessageID == last.MessageID ||
			again[0].Metadata.RetryCount != round {
			t.Fatalf("round %d re-offer: %+v", round, again)
		}
		last = again[0]
		r.advance(0)
		r.advance(9 * time.Second)
	}
	if st := r.status("a", out.RequestID); st.State == journal.Failed {
		t.Fatalf("FAILED before the ttl: %+v", st)
	}
	// The ttl ends it: FAILED, one dead letter, one ERROR_REPORT, however
	// long the clock runs on.
	r.advance(10 * time.Minute)
	r.advance(time.Hour)
	st := r.status("a", out.RequestID)
	if st.State != journal.Failed || st.Outcome != journal.OutcomeFailed || st.Deliveries[0].Code != envelope.CodeTimeout || st.Error == nil {
		t.Fatalf("after the ttl: %+v", st)
	}
	reports := r.receive("a", 10)
	if len(reports) != 1 || reports[0].MessageType != envelope.ErrorReport || reports[0].Sender.AgentID != envelope.SystemAgentID {
		t.Fatalf("sender got %+v, want one ERROR_REPORT", reports)
	}
	var rep map[string]any
	json.Unmarshal(reports[0].Payload, &rep)
	if rep["errorCode"] != string(envelope.CodeTimeout) || rep["errorType"] != "SystemError" {
		t.Errorf("report payload %v", rep)
	}
	r.ack("a", reports[0].MessageID, "processed") // no reply to the broker
	dl, err := r.b.DeadLetters(r.ctx, "a", DeadLettersInput{})
	if err != nil || dl.Total != 1 || dl.DeadLetters[0].RequestID != out.RequestID || dl.DeadLetters[0].Envelope == nil {
		t.Fatalf("DeadLetters = %+v, %v", dl, err)
	}
	// A late answer is refused, and the delivery stays FAILED.
	if _, err := r.b.Ack(r.ctx, "b", AckInput{MessageID: last.MessageID, Status: "processed"}); codeOf(err) != envelope.CodeTimeout ||
		!strings.Contains(err.Error(), "expired") {
		t.Fatalf("Ack after the ttl = %v, want E_PROTOCOL_004 saying it expired", err)
	}
	r.advance(time.Second)
	if st := r.status("a", out.RequestID); st.State != journal.Failed {
		t.Fatalf("a late ACK changed the outcome: %+v", st)
	}
	if again := r.receive("a", 10); len(again) != 0 {
		t.Fatalf("a second report: %+v", again)
	}
}

func TestLateAckForFailedDeliveryIsIgnoredBySender(t *testing.T) {
	r := newRig(t, Options{})
	r.register("a", envelope.Manager)
	r.register("b", envelope.Implementation)
	out := r.send("a", "b", SendInput{})
	m := r.receive("b", 1)[0]
	r.advance(0)
	l := r.b.agents["a"]
	l.smu.Lock()
	cur, _ := l.ledger.Delivery(out.RequestID, "b")
	r.b.fail(r.ctx, l, cur, envelope.CodeTimeout, "failed for the test")
	l.smu.Unlock()
	r.ack("b", m.MessageID, "processed") // the receiver did not know
	r.advance(0)
	if st := r.status("a", out.RequestID); st.State != journal.Failed || st.Outcome != journal.OutcomeFailed {
		t.Fatalf("an ACK after FAILED flipped the delivery: %+v", st)
	}
}

func TestRequeueAfterNack(t *testing.T) {
	r := newRig(t, Options{Policies: map[string]RetryPolicy{"CUSTOM_*": {AckTimeout: 10 * time.Second, MaxRetries: 0, BaseBackoff: time.Second}}})
	r.register("a", envelope.Manager)
	r.register("b", envelope.Implementation)
	out := r.send("a", "b", SendInput{})
	m := r.receive("b", 1)[0]
	// canRetry, but no retry budget: FAILED.
	if _, err := r.b.Nack(r.ctx, "b", NackInput{MessageID: m.MessageID, Reason: "not now", CanRetry: true}); err != nil {
		t.Fatal(err)
	}
	r.advance(0)
	dl, err := r.b.DeadLetters(r.ctx, "a", DeadLettersInput{})
	if err != nil || dl.Total != 1 {
		t.Fatalf("DeadLetters = %+v, %v", dl, err)
	}
	rq, err := r.b.Requeue(r.ctx, "a", RequeueInput{MessageID: dl.DeadLetters[0].MessageID})
	if err != nil || rq.State != journal.InTransit || rq.Seq != 2 {
		t.Fatalf("Requeue = %+v, %v", rq, err)
	}
	if dl, _ := r.b.DeadLetters(r.ctx, "a", DeadLettersInput{}); dl.Total != 0 {
		t.Errorf("still dead after requeue: %+v", dl)
	}
	again := r.receive("b", 1)
	if len(again) != 1 || again[0].MessageID != rq.MessageID {
		t.Fatalf("after requeue received %+v", again)
	}
	r.ack("b", again[0].MessageID, "processed")
	r.advance(0)
	if st := r.status("a", out.RequestID); st.Outcome != journal.Completed {
		t.Errorf("after requeue and ACK: %+v", st)
	}
	if _, err := r.b.Requeue(r.ctx, "a", RequeueInput{MessageID: "nope"}); codeOf(err) != core.CodeNotFound {
		t.Errorf("Requeue unknown = %v", err)
	}
}

func TestNack(t *testing.T) {
	r := newRig(t, Options{})
	r.register("a", envelope.Manager)
	r.register("b", envelope.Implementation)
	retry := r.send("a", "b", SendInput{})
	final := r.send("a", "b", SendInput{})
	msgs := r.receive("b", 10)
	if len(msgs) != 2 {
		t.Fatalf("received %d", len(msgs))
	}
	if _, err := r.b.Nack(r.ctx, "b", NackInput{MessageID: msgs[0].MessageID, Reason: "busy", ErrorCode: "E_TASK_004", CanRetry: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.b.Nack(r.ctx, "b", NackInput{MessageID: msgs[1].MessageID, Reason: "no such task", ErrorCode: "E_TASK_001"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.b.Nack(r.ctx, "b", NackInput{MessageID: "x", Reason: ""}); codeOf(err) != envelope.CodeMissingField {
		t.Errorf("Nack without reason = %v", err)
	}
	if _, err := r.b.Nack(r.ctx, "b", NackInput{MessageID: "x", Reason: "r", ErrorCode: "lower"}); codeOf(err) != envelope.CodeSchema {
		t.Errorf("Nack with a bad code = %v", err)
	}
	r.b.Pump(r.ctx)
	if st := r.status("a", retry.RequestID); st.State != journal.Pending {
		t.Fatalf("NACK canRetry: %+v", st)
	}
	st := r.status("a", final.RequestID)
	if st.State != journal.Failed || st.Deliveries[0].Code != "E_TASK_001" {
		t.Fatalf("NACK without retry: %+v", st)
	}
	r.advance(time.Second) // the retry goes out
	again := r.receive("b", 10)
	if len(again) != 1 || again[0].RequestID != retry.RequestID || again[0].Metadata.RetryCount != 1 {
		t.Fatalf("the retry after a NACK: %+v", again)
	}
	r.ack("b", again[0].MessageID, "processed")
	r.b.Pump(r.ctx)
	if st := r.status("a", retry.RequestID); st.Outcome != journal.Completed {
		t.Errorf("after the retry's ACK: %+v", st)
	}
}

func TestRetryOfAnsweredRequestIsReAcknowledged(t *testing.T) {
	r := newRig(t, Options{})
	r.register("a", envelope.Manager)
	r.register("b", envelope.Implementation)
	out := r.send("a", "b", SendInput{})
	m := r.receive("b", 1)[0]
	r.b.Pump(r.ctx) // the sender learns it was taken: its ack timer runs
	// The receiver answers, but the sender times out before it reads the
	// ACK (the clock jumps past the deadline and the retry goes out).
	r.clock.Advance(31 * time.Second)
	r.b.retryDue(r.ctx, r.b.agents["a"]) // no Pump: the ACK is not read yet
	r.ack("b", m.MessageID, "processed")
	r.clock.Advance(2 * time.Second)
	r.b.retryDue(r.ctx, r.b.agents["a"]) // the retry goes out
	// The receiver sees the retry: it answers again and does not hand it out.
	if msgs := r.receive("b", 10); len(msgs) != 0 {
		t.Fatalf("a retry of an answered request was handed out: %+v", msgs)
	}
	r.b.Pump(r.ctx)
	st := r.status("a", out.RequestID)
	if st.Outcome != journal.Completed {
		t.Fatalf("status %+v", st)
	}
}

func TestRedeliveryOfUnansweredRequest(t *testing.T) {
	r := newRig(t, Options{})
	r.register("a", envelope.Manager)
	r.register("b", envelope.Implementation)
	out := r.send("a", "b", SendInput{})
	first := r.receive("b", 1)[0]
	r.advance(0)                // the sender learns it was taken
	r.advance(30 * time.Second) // ack timeout
	r.advance(time.Second)      // re-offer
	msgs := r.receive("b", 10)
	if len(msgs) != 1 || !msgs[0].Redelivered || msgs[0].RequestID != out.RequestID || msgs[0].MessageID == first.MessageID {
		t.Fatalf("redelivery: %+v", msgs)
	}
	// Answering the old transmission's id completes the request too.
	r.ack("b", first.MessageID, "processed")
	r.b.Pump(r.ctx)
	if st := r.status("a", out.RequestID); st.Outcome != journal.Completed {
		t.Errorf("status %+v", st)
	}
	if _, err := r.b.Ack(r.ctx, "b", AckInput{MessageID: msgs[0].MessageID, Status: "processed"}); codeOf(err) != core.CodeNotFound {
		t.Errorf("answering the other transmission again: %v", err)
	}
}

func TestPriorityOrderAndFilter(t *testing.T) {
	r := newRig(t, Options{})
	r.register("a", envelope.Manager)
	r.register("c", envelope.Manager)
	r.register("b", envelope.Implementation)
	prios := []envelope.Priority{envelope.Low, envelope.Normal, envelope.High, envelope.Low, envelope.High, envelope.Normal}
	for i, p := range prios {
		r.send("a", "b", SendInput{Priority: p, Payload: custom(i)})
	}
	r.send("c", "b", SendInput{MessageType: "CUSTOM_OTHER", Priority: envelope.High})
	only, _ := r.b.Receive(r.ctx, "b", ReceiveInput{MessageTypes: []string{"CUSTOM_OTHER"}})
	if len(only.Messages) != 1 || only.Messages[0].Sender.AgentID != "c" {
		t.Fatalf("filtered receive: %+v", only.Messages)
	}
	var got []string
	for _, m := range r.receive("b", 100) {
		got = append(got, fmt.Sprintf("%s%d", m.Priority, m.Seq))
	}
	if fmt.Sprint(got) != "[HIGH3 HIGH5 NORMAL2 NORMAL6 LOW1 LOW4]" {
		t.Errorf("order %v", got)
	}
}

func TestBroadcast(t *testing.T) {
	r := newRig(t, Options{})
	r.register("m", envelope.Manager)
	r.register("i1", envelope.Implementation)
	r.register("i2", envelope.Implementation)
	r.register("h", envelope.AdHoc)
	out, err := r.b.Send(r.ctx, "m", SendInput{Receiver: Receiver{AgentID: "*", Type: envelope.Implementation}, MessageType: "CUSTOM_X", Payload: custom(1)})
	if err != nil || len(out.Deliveries) != 2 {
		t.Fatalf("broadcast = %+v, %v", out, err)
	}
	all, err := r.b.Send(r.ctx, "m", SendInput{Receiver: Receiver{AgentID: "*"}, MessageType: "CUSTOM_X", Payload: custom(2)})
	if err != nil || len(all.Deliveries) != 3 {
		t.Fatalf("broadcast to all = %+v, %v", all, err)
	}
	for _, id := range []string{"i1", "i2"} {
		msgs := r.receive(id, 10)
		if len(msgs) != 2 {
			t.Fatalf("%s got %d", id, len(msgs))
		}
		r.ack(id, msgs[0].MessageID, "processed")
	}
	r.b.Pump(r.ctx)
	if st := r.status("m", out.RequestID); st.Outcome != journal.Completed || len(st.Deliveries) != 2 {
		t.Errorf("broadcast status %+v", st)
	}
	if st := r.status("m", all.RequestID); st.Outcome != journal.Unknown {
		t.Errorf("partly answered broadcast %+v", st)
	}
}

func TestIdempotentSendByRequestID(t *testing.T) {
	r := newRig(t, Options{})
	r.register("a", envelope.Manager)
	r.register("b", envelope.Implementation)
	first := r.send("a", "b", SendInput{RequestID: "req-1"})
	second := r.send("a", "b", SendInput{RequestID: "req-1"})
	if !second.Duplicate || second.MessageID != first.MessageID {
		t.Fatalf("second send = %+v", second)
	}
	if msgs := r.receive("b", 10); len(msgs) != 1 {
		t.Errorf("received %d", len(msgs))
	}
}

func TestTTLExpiryAndPurge(t *testing.T) {
	r := newRig(t, Options{DefaultTTL: time.Hour})
	r.register("a", envelope.Manager)
	r.register("b", envelope.Implementation)
	short := r.send("a", "b", SendInput{TTLSeconds: 5})
	long := r.send("a", "b", SendInput{})
	r.clock.Advance(6 * time.Second)
	msgs := r.receive("b", 10)
	if len(msgs) != 1 || msgs[0].RequestID != long.RequestID {
		t.Fatalf("after 6s received %+v", msgs)
	}
	r.advance(30 * time.Second) // the short one times out: expired, so FAILED
	if st := r.status("a", short.RequestID); st.State != journal.Failed || st.Deliveries[0].Code != envelope.CodeTimeout {
		t.Errorf("expired message: %+v", st)
	}
	r.clock.Advance(2 * time.Hour)
	out, err := r.b.PurgeExpired(r.ctx)
	if err != nil || out.LedgerRecords < 2 || out.DeadLetters != 1 {
		t.Fatalf("PurgeExpired = %+v, %v", out, err)
	}
	if _, err := r.b.Status(r.ctx, "a", StatusInput{RequestID: short.RequestID}); codeOf(err) != core.CodeNotFound {
		t.Errorf("Status after purge: %v", err)
	}
}

func TestReceiveWaitsForANewMessage(t *testing.T) {
	r := newRig(t, Options{})
	r.register("a", envelope.Manager)
	r.register("b", envelope.Implementation)
	got := make(chan ReceiveOutput, 1)
	go func() {
		out, err := r.b.Receive(context.Background(), "b", ReceiveInput{WaitMs: 60000})
		if err != nil {
			t.Error(err)
		}
		got <- out
	}()
	r.send("a", "b", SendInput{})
	select {
	case out := <-got:
		if len(out.Messages) != 1 {
			t.Errorf("woke with %+v", out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Receive did not wake")
	}
	// An expired wait returns empty (the injected timer fires at once).
	fire := make(chan time.Time, 1)
	fire <- t0
	r2 := newRig(t, Options{After: func(time.Duration) <-chan time.Time { return fire }})
	r2.register("b", envelope.Implementation)
	out, err := r2.b.Receive(r2.ctx, "b", ReceiveInput{WaitMs: 1000})
	if err != nil || len(out.Messages) != 0 {
		t.Errorf("timed-out Receive = %+v, %v", out, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r2.b.Receive(ctx, "b", ReceiveInput{WaitMs: 1000}); err == nil {
		t.Error("a cancelled Receive returned no error")
	}
}

func TestAckValidation(t *testing.T) {
	r := newRig(t, Options{})
	r.register("b", envelope.Implementation)
	for _, tc := range []struct {
		in   AckInput
		code core.Code
	}{
		{AckInput{MessageID: "m", Status: "done"}, envelope.CodeInvalidEnum},
		{AckInput{MessageID: "m"}, envelope.CodeMissingField},
		{AckInput{Status: "received"}, envelope.CodeMissingField},
		{AckInput{MessageID: "m", Status: "received"}, core.CodeNotFound},
	} {
		if _, err := r.b.Ack(r.ctx, "b", tc.in); codeOf(err) != tc.code {
			t.Errorf("Ack(%+v) = %v, want %s", tc.in, err, tc.code)
		}
	}
	if _, err := r.b.Receive(r.ctx, "b", ReceiveInput{MessageTypes: []string{"NOPE"}}); codeOf(err) != envelope.CodeInvalidEnum {
		t.Errorf("Receive with a bad type: %v", err)
	}
	if _, err := r.b.Status(r.ctx, "b", StatusInput{}); codeOf(err) != envelope.CodeMissingField {
		t.Errorf("Status without ids: %v", err)
	}
}
