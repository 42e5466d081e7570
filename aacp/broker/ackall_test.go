package broker

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/core"
)

// TestAckAll answers a batch from two senders and the broker at once:
// each answer acts as its own Ack would (the senders' deliveries are
// PROCESSED, the broker's notice gets no reply), an unknown id fails
// alone, and an answered id is not found again.
func TestAckAll(t *testing.T) {
	r := newRig(t, Options{})
	r.register("m1", envelope.Manager)
	r.register("m2", envelope.Manager)
	r.register("impl", envelope.Implementation)
	var reqs []string
	for i := range 3 {
		reqs = append(reqs, r.send("m1", "impl", SendInput{Payload: custom(i)}).RequestID)
	}
	reqs = append(reqs, r.send("m2", "impl", SendInput{}).RequestID)
	if err := r.b.Notify(r.ctx, "impl", "CUSTOM_NOTICE", custom(9)); err != nil {
		t.Fatal(err)
	}
	msgs := r.receive("impl", MaxReceive)
	if len(msgs) != 5 {
		t.Fatalf("received %d messages, want 5", len(msgs))
	}
	ids := []string{"no-such-id"}
	for _, m := range msgs {
		ids = append(ids, m.MessageID)
	}
	res, err := r.b.AckAll(r.ctx, "impl", AckAllInput{MessageIDs: ids, Status: journal.InboundProcessed, Notes: "all done"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(ids) {
		t.Fatalf("AckAll returned %d results for %d ids", len(res), len(ids))
	}
	if codeOf(res[0].Err) != core.CodeNotFound {
		t.Errorf("unknown id: %+v, want NOT_FOUND", res[0])
	}
	for i, m := range msgs {
		got := res[i+1]
		system := m.Sender.AgentID == envelope.SystemAgentID
		if got.Err != nil || got.MessageID != m.MessageID || got.RequestID != m.RequestID || got.Status != journal.InboundProcessed || (got.ReplyMessageID == "") != system {
			t.Errorf("answer to %s (from %s): %+v", m.MessageID, m.Sender.AgentID, got)
		}
	}
	r.b.Pump(r.ctx)
	for i, req := range reqs {
		sender := "m1"
		if i == 3 {
			sender = "m2"
		}
		if st := r.status(sender, req); st.State != journal.Processed || st.Outcome != journal.Completed {
			t.Errorf("request %s of %s after AckAll: %s %s, want PROCESSED COMPLETED", req, sender, st.State, st.Outcome)
		}
	}
	again, err := r.b.AckAll(r.ctx, "impl", AckAllInput{MessageIDs: ids[1:], Status: journal.InboundProcessed})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range again {
		if codeOf(a.Err) != core.CodeNotFound {
			t.Errorf("answered again, %s: %+v, want NOT_FOUND", ids[i+1], a)
		}
	}
}

// TestAckAllReceivedThenProcessed answers a batch "received", then
// "processed": the deliveries go DELIVERED, then PROCESSED, as with Ack.
func TestAckAllReceivedThenProcessed(t *testing.T) {
	r := newRig(t, Options{})
	r.register("m", envelope.Manager)
	r.register("impl", envelope.Implementation)
	a, b := r.send("m", "impl", SendInput{}), r.send("m", "impl", SendInput{})
	ids := []string{a.MessageID, b.MessageID}
	if got := len(r.receive("impl", 10)); got != 2 {
		t.Fatalf("received %d, want 2", got)
	}
	for _, step := range []struct {
		status string
		want   journal.State
	}{{journal.InboundReceived, journal.Delivered}, {journal.InboundProcessed, journal.Processed}} {
		res, err := r.b.AckAll(r.ctx, "impl", AckAllInput{MessageIDs: ids, Status: step.status})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range res {
			if x.Err != nil {
				t.Fatalf("AckAll %s: %v", step.status, x.Err)
			}
		}
		r.b.Pump(r.ctx)
		for _, out := range []SendOutput{a, b} {
			if st := r.status("m", out.RequestID); st.State != step.want {
				t.Errorf("after AckAll %s: %s is %s, want %s", step.status, out.RequestID, st.State, step.want)
			}
		}
	}
}

// TestAckAllValidation: what is wrong with the call as a whole fails it,
// before anything is answered.
func TestAckAllValidation(t *testing.T) {
	r := newRig(t, Options{})
	r.register("m", envelope.Manager)
	r.register("b", envelope.Implementation)
	out := r.send("m", "b", SendInput{})
	r.receive("b", 10)
	tooMany := make([]string, MaxReceive+1)
	for i := range tooMany {
		tooMany[i] = fmt.Sprint("id-", i)
	}
	for _, tc := range []struct {
		name string
		in   AckAllInput
		code core.Code
	}{
		{"no ids", AckAllInput{Status: "received"}, envelope.CodeMissingField},
		{"empty id", AckAllInput{MessageIDs: []string{out.MessageID, ""}, Status: "received"}, envelope.CodeMissingField},
		{"repeated id", AckAllInput{MessageIDs: []string{out.MessageID, out.MessageID}, Status: "received"}, envelope.CodeSchema},
		{"too many", AckAllInput{MessageIDs: tooMany, Status: "received"}, envelope.CodeSchema},
		{"no status", AckAllInput{MessageIDs: []string{out.MessageID}}, envelope.CodeMissingField},
		{"bad status", AckAllInput{MessageIDs: []string{out.MessageID}, Status: "done"}, envelope.CodeInvalidEnum},
	} {
		if _, err := r.b.AckAll(r.ctx, "b", tc.in); codeOf(err) != tc.code {
			t.Errorf("%s: AckAll = %v, want %s", tc.name, err, tc.code)
		}
	}
	if _, err := r.b.AckAll(r.ctx, "nobody", AckAllInput{MessageIDs: []string{"x"}, Status: "received"}); codeOf(err) != envelope.CodeAgentNotFound {
		t.Errorf("AckAll for an agent not hosted: %v, want %s", err, envelope.CodeAgentNotFound)
	}
	// Nothing was answered: the message is still waiting for its answer.
	r.ack("b", out.MessageID, "processed")
}

// TestAckAllTwoTransmissionsOfOneRequest: the ids of a request's first
// transmission and of its redelivery in one AckAll answer it once, as
// two Acks in a row would: the second id is NOT_FOUND.
func TestAckAllTwoTransmissionsOfOneRequest(t *testing.T) {
	r := newRig(t, Options{})
	r.register("a", envelope.Manager)
	r.register("b", envelope.Implementation)
	out := r.send("a", "b", SendInput{})
	first := r.receive("b", 1)[0]
	r.advance(0)                // the sender learns it was taken
	r.advance(30 * time.Second) // ack timeout
	r.advance(time.Second)      // re-offer
	again := r.receive("b", 10)
	if len(again) != 1 || !again[0].Redelivered {
		t.Fatalf("redelivery: %+v", again)
	}
	res, err := r.b.AckAll(r.ctx, "b", AckAllInput{MessageIDs: []string{first.MessageID, again[0].MessageID}, Status: journal.InboundProcessed})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil || res[0].ReplyMessageID == "" || codeOf(res[1].Err) != core.CodeNotFound {
		t.Fatalf("AckAll of both transmissions = %+v; want the first answered, the second NOT_FOUND", res)
	}
	r.b.Pump(r.ctx)
	if st := r.status("a", out.RequestID); st.Outcome != journal.Completed {
		t.Errorf("status %+v, want COMPLETED", st)
	}
}
