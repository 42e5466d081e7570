package sharedstate

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/natsengine/natstest"
	"github.com/mcprt/mcprt/store"
)

// sameID names every event alike: each Do is then a repeat of the first
// write, as publishOnce sends it again after an unanswered attempt.
type sameID struct{}

func (sameID) NewID() string { return "the-one-event" }

// TestDedupWindowCoversRetries: the stream's duplicate window is
// Options.DedupWindow (the binary derives it from the longest deadline a
// write can have), so a write repeated later than a shorter window would
// have allowed is stored and applied once; with a window shorter than the
// repeat's delay (the control) it is stored twice.
func TestDedupWindowCoversRetries(t *testing.T) {
	const gap = 1200 * time.Millisecond // between the write and its repeat
	for _, c := range []struct {
		name        string
		window      time.Duration
		wantApplied int64
	}{
		{"window longer than the repeat's delay", 20 * time.Second, 1},
		{"window shorter than the repeat's delay (control)", 500 * time.Millisecond, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := natstest.Server(t)
			db, err := store.New(store.Options{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			ctx := testCtx(t)
			r, err := Open(ctx, Options{JS: natstest.Connect(t, srv.ClientURL()).JS, DB: db, IDs: sameID{}, DedupWindow: c.window, WaitTimeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			var n atomic.Int64
			counting(&n)(r)
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(r.Close)
			info, err := r.stream.Info(ctx)
			if err != nil || info.Config.Duplicates != c.window {
				t.Fatalf("stream duplicate window %v (%v), want %v", info.Config.Duplicates, err, c.window)
			}
			var first, again string
			if err := r.Do(ctx, "test", "test.count", "k", &first); err != nil {
				t.Fatal(err)
			}
			// The repeat comes after the gap: real time on the NATS
			// server's clock, which judges the window.
			<-time.After(gap)
			if err := r.Do(ctx, "test", "test.count", "k", &again); err != nil || again != first {
				t.Fatalf("the repeat: %q, %v; want the first write's outcome %q", again, err, first)
			}
			// One more distinct write, applied after whatever the repeat
			// stored: then n is final.
			r.ids = &core.UUIDGenerator{}
			if err := r.Do(ctx, "test", "test.count", "after", nil); err != nil {
				t.Fatal(err)
			}
			if got := n.Load() - 1; got != c.wantApplied {
				t.Fatalf("the write was applied %d times, want %d", got, c.wantApplied)
			}
		})
	}
}

// TestPublishStopsRepeatingAtTheWindow: a write whose publish gets no
// answer (NATS gone) is not sent again past the duplicate window, however
// long its caller's deadline: a later repeat could be stored twice.
func TestPublishStopsRepeatingAtTheWindow(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	db, err := store.New(store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := testCtx(t)
	r, err := Open(ctx, Options{JS: natstest.Connect(t, srv.ClientURL()).JS, DB: db, DedupWindow: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	counting(&n)(r)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	srv.Shutdown()
	long, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = r.Do(long, "test", "test.count", "k", nil)
	if !errors.Is(err, &core.Error{Code: CodeUnavailable}) {
		t.Fatalf("Do with NATS gone: %v, want %s", err, CodeUnavailable)
	}
	if long.Err() != nil {
		t.Fatalf("Do repeated its publish until the caller's one-minute deadline, past the 300 ms duplicate window")
	}
}
