package broker

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
)

// oneInbox is a memory journal whose inbox of one agent is wrapped (by
// the tests' stores below, to slow or cut its reads).
type oneInbox struct {
	journal.Store
	agent string
	wrap  func(journal.Inbox) journal.Inbox
}

func (s *oneInbox) Inbox(receiver string) (journal.Inbox, error) {
	in, err := s.Store.Inbox(receiver)
	if err != nil || receiver != s.agent {
		return in, err
	}
	return s.wrap(in), nil
}

// gatedStore is a memory journal whose inbox reads for one agent can be
// held open, as a slow journal (a NATS fetch, a disk) would hold them.
type gatedStore struct {
	oneInbox
	armed   atomic.Bool   // reads are held only once armed
	entered chan struct{} // receives once per gated read that started
	release chan struct{} // closed to let gated reads go on
	// closedUnderRead is set when an inbox was closed while a Read of it
	// was running (the Inbox contract forbids it).
	closedUnderRead atomic.Bool
	// readAfterClose is set when an inbox was read after its Close.
	readAfterClose atomic.Bool
}

func newGatedStore(agent string) *gatedStore {
	s := &gatedStore{entered: make(chan struct{}, 16), release: make(chan struct{})}
	s.oneInbox = oneInbox{Store: journal.NewMemory(), agent: agent,
		wrap: func(in journal.Inbox) journal.Inbox { return &gatedInbox{Inbox: in, s: s} }}
	return s
}

type gatedInbox struct {
	journal.Inbox
	s       *gatedStore
	reading atomic.Int32 // Reads running
	closed  atomic.Bool
}

func (in *gatedInbox) Read(ctx context.Context, fn func(env *envelope.Envelope) error) error {
	in.reading.Add(1)
	defer in.reading.Add(-1)
	if in.closed.Load() {
		in.s.readAfterClose.Store(true)
	}
	if !in.s.armed.Load() {
		return in.Inbox.Read(ctx, fn)
	}
	in.s.entered <- struct{}{}
	select {
	case <-in.s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return in.Inbox.Read(ctx, fn)
}

func (in *gatedInbox) Close() error {
	if in.reading.Load() > 0 {
		in.s.closedUnderRead.Store(true)
	}
	in.closed.Store(true)
	return in.Inbox.Close()
}

// bounded waits for ch, failing the test after a limit that only ends a
// hung test (a deadlock), never a slow one.
func bounded[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: still waiting after 30 s (waiting on the held inbox read?)", what)
		var zero T
		return zero
	}
}

// A send does not wait on its sender's inbox read: no lock it needs is
// held across the journal I/O. What the held read then returns is
// applied as before.
func TestNoLockAcrossInboxRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		act  func(r *rig) error // runs while s's inbox read is held
	}{
		{"send from the reading agent", func(r *rig) error {
			_, err := r.b.Send(r.ctx, "s", SendInput{Receiver: Receiver{AgentID: "r"}, MessageType: "CUSTOM_TEST", Payload: custom(2)})
			return err
		}},
		{"broadcast from the reading agent", func(r *rig) error {
			_, err := r.b.Send(r.ctx, "s", SendInput{Receiver: Receiver{AgentID: envelope.Broadcast}, MessageType: "CUSTOM_TEST", Payload: custom(2)})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gs := newGatedStore("s")
			r := newRig(t, Options{Store: gs})
			r.register("s", envelope.Manager)
			r.register("r", envelope.Implementation)
			first := r.send("s", "r", SendInput{Payload: custom(1)})
			// r answers, so that the held read of s carries an ACK.
			got := r.receive("r", 10)
			if len(got) != 1 {
				t.Fatalf("r received %d messages; want 1", len(got))
			}
			r.ack("r", got[0].MessageID, "processed")

			gs.armed.Store(true)
			read := make(chan error, 1)
			go func() { _, err := r.b.Inbox(r.ctx, "s"); read <- err }()
			bounded(t, gs.entered, "the inbox read of s to start")

			done := make(chan error, 1)
			go func() { done <- tc.act(r) }()
			if err := bounded(t, done, tc.name+" while the inbox read of s is held"); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			close(gs.release)
			if err := bounded(t, read, "the held inbox read"); err != nil {
				t.Fatalf("Inbox(s): %v", err)
			}
			// The ACK read while others went on is applied: the request
			// is complete.
			st := r.status("s", first.RequestID)
			if len(st.Deliveries) != 1 || st.Deliveries[0].State != journal.Processed {
				t.Fatalf("status of the first request after the read = %+v; want one PROCESSED delivery", st.Deliveries)
			}
		})
	}
}

// Releasing or unregistering an agent while its Receive is reading the
// inbox waits for that read: the inbox is never closed under a running
// Read (the files inbox would lose its open segment mid-read).
func TestReleaseWaitsForTheInboxRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(r *rig) error
	}{
		{"release", func(r *rig) error { return r.b.Release("r") }},
		{"unregister", func(r *rig) error { return r.b.UnregisterAgent(r.ctx, "r") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gs := newGatedStore("r")
			r := newRig(t, Options{Store: gs})
			r.register("s", envelope.Manager)
			r.register("r", envelope.Implementation)
			r.send("s", "r", SendInput{Payload: custom(1)})

			gs.armed.Store(true)
			read := make(chan error, 1)
			go func() { _, err := r.b.Receive(r.ctx, "r", ReceiveInput{Max: 1}); read <- err }()
			bounded(t, gs.entered, "the inbox read of r to start")
			stopped := make(chan error, 1)
			go func() { stopped <- tc.stop(r) }()
			close(gs.release)
			if err := bounded(t, read, "the held Receive"); err != nil {
				t.Fatalf("Receive(r): %v", err)
			}
			if err := bounded(t, stopped, tc.name); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if gs.closedUnderRead.Load() {
				t.Fatalf("%s closed the inbox of r while its Receive was reading it", tc.name)
			}
		})
	}
}

// Concurrent reads of one inbox (the receiver's own Receive, Inbox
// listings and Pump, racing) apply what they read in the order it was
// read: every message is handed out exactly once, in seq order, while
// the sender keeps sending.
func TestConcurrentReadsKeepOrderAndHandOutOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		readers int
		n       int
	}{
		{"one extra reader", 1, 60},
		{"three extra readers", 3, 120},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, Options{})
			r.register("s", envelope.Manager)
			r.register("r", envelope.Implementation)
			ctx, cancel := context.WithCancel(r.ctx)
			defer cancel()
			var wg sync.WaitGroup
			for i := range tc.readers {
				wg.Go(func() {
					for ctx.Err() == nil {
						var err error
						if i%2 == 0 {
							_, err = r.b.Inbox(ctx, "r")
						} else {
							err = r.b.Pump(ctx)
						}
						if err != nil && ctx.Err() == nil {
							t.Errorf("reader %d: %v", i, err)
							return
						}
					}
				})
			}
			sent := make(chan error, 1)
			go func() {
				for i := range tc.n {
					if _, err := r.b.Send(r.ctx, "s", SendInput{Receiver: Receiver{AgentID: "r"}, MessageType: "CUSTOM_TEST", Payload: custom(i)}); err != nil {
						sent <- err
						return
					}
				}
				sent <- nil
			}()
			seen := map[string]bool{}
			var last uint64
			for len(seen) < tc.n {
				out, err := r.b.Receive(r.ctx, "r", ReceiveInput{Max: 7, WaitMs: 1000})
				if err != nil {
					t.Fatalf("Receive: %v", err)
				}
				for _, m := range out.Messages {
					if seen[m.RequestID] {
						t.Fatalf("request %s handed out twice", m.RequestID)
					}
					if m.Seq <= last {
						t.Fatalf("seq %d handed out after seq %d", m.Seq, last)
					}
					seen[m.RequestID], last = true, m.Seq
				}
			}
			if err := bounded(t, sent, "the sends"); err != nil {
				t.Fatalf("Send: %v", err)
			}
			cancel()
			wg.Wait()
			out, err := r.b.Receive(r.ctx, "r", ReceiveInput{Max: MaxReceive})
			if err != nil || len(out.Messages) != 0 {
				t.Fatalf("after all %d were handed out, Receive = %d messages, %v; want none", tc.n, len(out.Messages), err)
			}
		})
	}
}

// An answer to a message handed out does not read the journal: it
// neither waits behind a read under way nor makes one. A retry of the
// request that was not read yet when it was answered is answered again
// when read, and never handed out.
func TestAnswerOfAKnownMessageReadsNothing(t *testing.T) {
	for _, tc := range []struct {
		status string
		want   journal.State
	}{
		{journal.InboundProcessed, journal.Processed},
		{journal.InboundReceived, journal.Delivered},
	} {
		t.Run(tc.status, func(t *testing.T) {
			gs := newGatedStore("b")
			t.Cleanup(func() { close(gs.release) })
			r := newRig(t, Options{Store: gs, Policies: map[string]RetryPolicy{CustomKey: {AckTimeout: 10 * time.Second, MaxRetries: 2, BaseBackoff: time.Second}}})
			r.register("a", envelope.Manager)
			r.register("b", envelope.Implementation)
			out := r.send("a", "b", SendInput{TTLSeconds: 600})
			got := r.receive("b", 10)
			if len(got) != 1 {
				t.Fatalf("b received %d messages; want 1", len(got))
			}
			r.advance(0)                // a reads the taken notice: its ack timer runs
			r.advance(10 * time.Second) // the ack deadline: a retry is scheduled
			r.advance(time.Minute)      // the retry is appended; b has not read it
			if st := r.status("a", out.RequestID); st.Deliveries[0].Retries != 1 {
				t.Fatalf("before the answer: %+v; want one retry sent", st.Deliveries)
			}

			gs.armed.Store(true)
			done := make(chan error, 1)
			go func() {
				_, err := r.b.Ack(r.ctx, "b", AckInput{MessageID: got[0].MessageID, Status: tc.status})
				done <- err
			}()
			if err := bounded(t, done, "the ACK of a handed-out message while reads are held"); err != nil {
				t.Fatalf("Ack: %v", err)
			}
			if n := len(gs.entered); n != 0 {
				t.Fatalf("the ACK of a handed-out message read the inbox %d times; want none", n)
			}
			gs.armed.Store(false)

			if again := r.receive("b", 10); len(again) != 0 {
				t.Fatalf("after the answer, b was handed %+v; want nothing (the retry was answered)", again)
			}
			r.advance(0) // a reads the ACK and the repeated one
			if st := r.status("a", out.RequestID); st.Deliveries[0].State != tc.want {
				t.Fatalf("after the answer: %+v; want %s", st.Deliveries, tc.want)
			}
		})
	}
}

// An agent's inbox is not read once the agent is shut down: a Receive
// (or Pump) that took the agent before a Release, an unregistration or
// Close and reads again after it finds nothing to read, instead of
// reading the closed inbox (a files inbox reopened its segments then, and
// nothing closed them again).
func TestNoInboxReadAfterShutdown(t *testing.T) {
	gs := newGatedStore("r")
	r := newRig(t, Options{Store: gs})
	r.register("s", envelope.Manager)
	r.register("r", envelope.Implementation)
	r.b.mu.Lock()
	l := r.b.agents["r"]
	r.b.mu.Unlock()
	if err := r.b.Release("r"); err != nil {
		t.Fatalf("Release(r): %v", err)
	}
	if err := r.b.ingest(r.ctx, l); err != nil {
		t.Fatalf("ingest of the released r: %v", err)
	}
	if gs.readAfterClose.Load() {
		t.Fatal("the inbox of r was read after it was closed")
	}
}
