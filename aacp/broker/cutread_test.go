package broker

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
)

// cutStore is a memory journal whose inbox reads for one agent, once
// armed, pass what they read and then end as a read cut short by its
// bound does: cut (the test's cancel) ends the read's context after the
// transmissions were passed, and the read returns its error.
type cutStore struct {
	oneInbox
	armed atomic.Bool
	cut   context.CancelFunc
}

func newCutStore(agent string) *cutStore {
	s := &cutStore{}
	s.oneInbox = oneInbox{Store: journal.NewMemory(), agent: agent,
		wrap: func(in journal.Inbox) journal.Inbox { return &cutInbox{Inbox: in, s: s} }}
	return s
}

type cutInbox struct {
	journal.Inbox
	s *cutStore
}

func (in *cutInbox) Read(ctx context.Context, fn func(env *envelope.Envelope) error) error {
	if !in.s.armed.Load() {
		return in.Inbox.Read(ctx, fn)
	}
	if err := in.Inbox.Read(ctx, fn); err != nil {
		return err
	}
	in.s.cut()
	<-ctx.Done()
	return ctx.Err()
}

// What an inbox read passed before its bound ended it is applied in
// full: the ACK it carried completes the request. (The inbox goroutine
// reads with a 3 s bound; on a loaded machine the bound ended reads whose
// ACKs were then recorded with the expired context, failed, and were
// lost for good: requests stayed IN_TRANSIT, the multi-process test's
// peers waited for them until their own deadline.)
func TestCutReadIsAppliedInFull(t *testing.T) {
	cs := newCutStore("s")
	r := newRig(t, Options{Store: cs})
	r.register("s", envelope.Manager)
	r.register("r", envelope.Implementation)
	first := r.send("s", "r", SendInput{Payload: custom(1)})
	got := r.receive("r", 10)
	if len(got) != 1 {
		t.Fatalf("r received %d messages; want 1", len(got))
	}
	r.ack("r", got[0].MessageID, "processed")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs.cut = cancel
	cs.armed.Store(true)
	if err := r.b.Pump(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Pump with the read of s cut short = %v; want its context.Canceled", err)
	}
	cs.armed.Store(false)
	st := r.status("s", first.RequestID)
	if len(st.Deliveries) != 1 || st.Deliveries[0].State != journal.Processed || st.Outcome != journal.Completed {
		t.Fatalf("status of the request after the cut read = %+v (outcome %s); want one PROCESSED delivery, COMPLETED", st.Deliveries, st.Outcome)
	}
}
