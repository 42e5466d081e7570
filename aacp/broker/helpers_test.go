package broker

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/core"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// rig is a broker on a memory (or given) store with a manual clock and no
// goroutines: tests move time and call Pump/RetryDue themselves.
type rig struct {
	t     testing.TB
	b     *Broker
	clock *core.ManualClock
	ctx   context.Context
}

// RigStore makes the store of a rig given neither Store nor DataDir: a
// memory journal, unless a backend table (see nats_backend_test.go) runs
// the store-level tests on another backend.
var RigStore = func(testing.TB) journal.Store { return journal.NewMemory() }

func newRig(t testing.TB, opts Options) *rig {
	t.Helper()
	clock := core.NewManualClock(t0)
	if opts.Store == nil && opts.DataDir == "" {
		opts.Store = RigStore(t)
	}
	opts.Clock = clock
	opts.Manual = true
	if opts.IDs == nil {
		opts.IDs = &core.SequenceGenerator{}
	}
	if opts.Rand == nil {
		opts.Rand = func() float64 { return 0.5 } // no jitter effect
	}
	b, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return &rig{t: t, b: b, clock: clock, ctx: context.Background()}
}

func (r *rig) register(id string, typ envelope.AgentType) {
	r.t.Helper()
	if _, err := r.b.RegisterAgent(r.ctx, id, RegisterInput{Type: typ}); err != nil {
		r.t.Fatalf("RegisterAgent(%s): %v", id, err)
	}
}

func custom(n int) json.RawMessage {
	b, _ := json.Marshal(map[string]int{"n": n})
	return b
}

func (r *rig) send(from, to string, in SendInput) SendOutput {
	r.t.Helper()
	in.Receiver = Receiver{AgentID: to}
	if in.MessageType == "" {
		in.MessageType = "CUSTOM_TEST"
	}
	if in.Payload == nil {
		in.Payload = custom(0)
	}
	out, err := r.b.Send(r.ctx, from, in)
	if err != nil {
		r.t.Fatalf("Send %s→%s: %v", from, to, err)
	}
	return out
}

func (r *rig) receive(id string, max int) []Message {
	r.t.Helper()
	out, err := r.b.Receive(r.ctx, id, ReceiveInput{Max: max})
	if err != nil {
		r.t.Fatalf("Receive(%s): %v", id, err)
	}
	return out.Messages
}

func (r *rig) ack(id, messageID, status string) {
	r.t.Helper()
	if _, err := r.b.Ack(r.ctx, id, AckInput{MessageID: messageID, Status: status}); err != nil {
		r.t.Fatalf("Ack(%s, %s): %v", id, messageID, err)
	}
}

func (r *rig) status(id, requestID string) StatusOutput {
	r.t.Helper()
	st, err := r.b.Status(r.ctx, id, StatusInput{RequestID: requestID})
	if err != nil {
		r.t.Fatalf("Status: %v", err)
	}
	return st
}

// advance moves the clock and runs the due work.
func (r *rig) advance(d time.Duration) int {
	r.t.Helper()
	r.clock.Advance(d)
	n, err := r.b.RetryDue(r.ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	return n
}

// codeOf returns err's *core.Error code, or "".
func codeOf(err error) core.Code {
	var ce *core.Error
	if errors.As(err, &ce) {
		return ce.Code
	}
	return ""
}
