package broker_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/natsjournal"
	"github.com/mcprt/mcprt/natsengine/natstest"
)

// A transmission published again after the channel stream's dedup window
// has passed (a client that resends long after) is stored a second time
// by JetStream. The receiver still hands the request out once: the
// receiving broker by its record of the transmissions it read, and a
// restarted receiver (a fresh process, nothing in memory) by its ledger's
// record of the requests it answered, which is kept on JetStream.
func TestNATSDedupBeyondTheStreamsWindow(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const window = 200 * time.Millisecond
	open := func() broker.Options {
		conn := natstest.Connect(t, srv.ClientURL())
		s, err := natsjournal.Open(ctx, natsjournal.Options{JS: conn.JS, DedupWindow: window})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return broker.Options{Store: s}
	}
	openBroker := func(id string, typ envelope.AgentType) *broker.Broker {
		b, err := broker.Open(open())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		if _, err := b.RegisterAgent(ctx, id, broker.RegisterInput{Type: typ}); err != nil {
			t.Fatal(err)
		}
		return b
	}
	sb := openBroker("send", envelope.Manager)
	rb := openBroker("recv", envelope.Implementation)
	send := func(req string) {
		t.Helper()
		if _, err := sb.Send(ctx, "send", broker.SendInput{Receiver: broker.Receiver{AgentID: "recv"},
			MessageType: "CUSTOM_DEDUP", Payload: json.RawMessage(`{"n":1}`), RequestID: req}); err != nil {
			t.Fatal(err)
		}
	}
	// receiveUntil receives (and acknowledges) until want arrives; any
	// other request handed out fails the test.
	receiveUntil := func(b *broker.Broker, want string) {
		t.Helper()
		for {
			out, err := b.Receive(ctx, "recv", broker.ReceiveInput{WaitMs: 5000})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range out.Messages {
				if m.RequestID != want {
					t.Fatalf("handed out %s (redelivered %v) while waiting for %s: a duplicate beyond the dedup window got through", m.RequestID, m.Redelivered, want)
				}
				if _, err := b.Ack(ctx, "recv", broker.AckInput{MessageID: m.MessageID, Status: "processed"}); err != nil {
					t.Fatal(err)
				}
				return
			}
		}
	}
	send("req-1")
	receiveUntil(rb, "req-1")

	// Publish req-1's stored transmission again, message id included,
	// until JetStream no longer recognises it: the window has passed and
	// the stream holds it twice.
	conn := natstest.Connect(t, srv.ClientURL())
	st, err := conn.JS.Stream(ctx, natsjournal.ChannelStream)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := st.GetLastMsgForSubject(ctx, "aacp.ch.recv.send")
	if err != nil {
		t.Fatal(err)
	}
	for {
		h := nats.Header{}
		for _, k := range []string{nats.MsgIdHdr, "Mcprt-Seq"} {
			h.Set(k, raw.Header.Get(k))
		}
		ack, err := conn.JS.PublishMsg(ctx, &nats.Msg{Subject: raw.Subject, Data: raw.Data, Header: h})
		if err != nil {
			t.Fatal(err)
		}
		if !ack.Duplicate {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("JetStream still called the copy a duplicate after 60s; the dedup window is 200ms")
		case <-time.After(window / 4): // the window passes in real time
		}
	}
	send("req-2")
	receiveUntil(rb, "req-2")

	// A restarted receiver reads both copies from the stream and
	// recognises req-1 by its ledger.
	if err := rb.Close(); err != nil {
		t.Fatal(err)
	}
	rb2 := openBroker("recv", envelope.Implementation)
	send("req-3")
	receiveUntil(rb2, "req-3")
}
