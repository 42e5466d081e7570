package sharedstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/memory"
	"github.com/mcprt/mcprt/natsengine/natstest"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// counting registers memory events and a "test.count" kind that counts
// its applications in n and stores its data as a memory entry.
func counting(n *atomic.Int64) func(*Replicator) {
	return func(r *Replicator) {
		NewMemory(r, r.db.Memory())
		r.Handle("test.count", func(ctx context.Context, data json.RawMessage) (any, error) {
			n.Add(1)
			var key string
			if err := json.Unmarshal(data, &key); err != nil {
				return nil, err
			}
			if key == "refuse" {
				return nil, core.NewError(core.CodeInvalidArgument, "refused: give another key")
			}
			_, err := r.db.Memory().Put(ctx, memory.Entry{Namespace: "t", Key: key, Value: []byte(`1`), StoredAt: t0})
			return key + "!", err
		})
	}
}

// TestReplicatorAppliesOnEveryNode: an event published by one node is
// applied once on each node's store; the writer gets the outcome of its
// own event (read-your-writes); a domain error is the outcome and writes
// nothing, on every node.
func TestReplicatorAppliesOnEveryNode(t *testing.T) {
	srv := natstest.Server(t)
	var na, nb atomic.Int64
	a := newNode(t, srv.ClientURL(), "", counting(&na))
	b := newNode(t, srv.ClientURL(), "", counting(&nb))
	ctx := testCtx(t)
	var out string
	if err := a.r.Do(ctx, "test", "test.count", "k1", &out); err != nil || out != "k1!" {
		t.Fatalf("Do = %q, %v; want k1!", out, err)
	}
	// Read-your-writes: a's store has it the moment Do returns.
	if _, found, err := a.db.Memory().Get(ctx, "t", "k1"); err != nil || !found {
		t.Fatalf("a's store lacks k1 after Do returned: found %v err %v", found, err)
	}
	err := b.r.Do(ctx, "test", "test.count", "refuse", nil)
	if !errors.Is(err, &core.Error{Code: core.CodeInvalidArgument}) {
		t.Fatalf("refused event: err %v, want INVALID_ARGUMENT", err)
	}
	if err := b.r.WaitApplied(ctx, a.r.Applied()); err != nil {
		t.Fatal(err)
	}
	if err := a.r.WaitApplied(ctx, b.r.Applied()); err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]*node{"a": a, "b": b} {
		if _, found, _ := n.db.Memory().Get(ctx, "t", "k1"); !found {
			t.Errorf("node %s lacks k1", name)
		}
		if _, found, _ := n.db.Memory().Get(ctx, "t", "refuse"); found {
			t.Errorf("node %s stored the refused event's entry", name)
		}
		if st := n.r.Status(ctx); st.Applied != 2 || st.Last != 2 || st.Lag != 0 || st.Error != "" {
			t.Errorf("node %s status %+v, want applied 2 of 2", name, st)
		}
	}
	if na.Load() != 2 || nb.Load() != 2 {
		t.Fatalf("applications: a %d b %d, want 2 each", na.Load(), nb.Load())
	}
}

// TestReplicatorRestartResumes: a node that stops and starts again
// applies only what it missed, from the sequence its store recorded,
// never an event twice; two processes on one data directory apply each
// event once between them.
func TestReplicatorRestartResumes(t *testing.T) {
	srv := natstest.Server(t)
	dir := t.TempDir()
	var n1, n2, n3, nb atomic.Int64
	ctx := testCtx(t)
	first := newNode(t, srv.ClientURL(), dir, counting(&n1))
	b := newNode(t, srv.ClientURL(), "", counting(&nb))
	for i := range 3 {
		if err := first.r.Do(ctx, "test", "test.count", fmt.Sprint("before", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	first.r.Close()
	first.db.Close()
	for i := range 4 {
		if err := b.r.Do(ctx, "test", "test.count", fmt.Sprint("missed", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	// The same directory, opened again: it resumes after sequence 3.
	second := newNode(t, srv.ClientURL(), dir, counting(&n2))
	if err := second.r.WaitApplied(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if n1.Load() != 3 || n2.Load() != 4 {
		t.Fatalf("applications before/after the restart: %d/%d, want 3/4", n1.Load(), n2.Load())
	}
	// A second process on the same directory: every new event is applied
	// to that store once, by one of them, and both writers get outcomes.
	third := newNode(t, srv.ClientURL(), dir, counting(&n3))
	for i := range 6 {
		w := second
		if i%2 == 1 {
			w = third
		}
		var out string
		if err := w.r.Do(ctx, "test", "test.count", fmt.Sprint("shared", i), &out); err != nil || out != fmt.Sprint("shared", i, "!") {
			t.Fatalf("write %d: %q %v", i, out, err)
		}
	}
	if err := second.r.WaitApplied(ctx, 13); err != nil {
		t.Fatal(err)
	}
	if err := third.r.WaitApplied(ctx, 13); err != nil {
		t.Fatal(err)
	}
	if got := n2.Load() + n3.Load(); got != 4+6 {
		t.Fatalf("applications on the shared directory: %d, want 10 (each event once)", got)
	}
	page, err := second.db.Memory().List(ctx, memory.ListQuery{Namespace: "t", Limit: 100})
	if err != nil || page.Total != 13 {
		t.Fatalf("entries: %d (%v), want 13", page.Total, err)
	}
}

// TestDecideRetriesOnConflict: a decided write whose domain moved on
// between its read and its publish is decided again on the new state.
func TestDecideRetriesOnConflict(t *testing.T) {
	srv := natstest.Server(t)
	var na, nb atomic.Int64
	a := newNode(t, srv.ClientURL(), "", counting(&na))
	b := newNode(t, srv.ClientURL(), "", counting(&nb))
	ctx := testCtx(t)
	calls := 0
	var out string
	err := a.r.Decide(ctx, "test", "test.count", func(ctx context.Context) (any, error) {
		calls++
		if calls == 1 { // another machine writes in between
			if err := b.r.Do(ctx, "test", "test.count", "between", nil); err != nil {
				return nil, err
			}
		}
		return fmt.Sprint("decided", calls), nil
	}, &out)
	if err != nil || calls != 2 || out != "decided2!" {
		t.Fatalf("Decide: out %q err %v after %d decisions; want decided2! after 2", out, err, calls)
	}
	if _, found, _ := a.db.Memory().Get(ctx, "t", "decided1"); found {
		t.Fatal("the stale decision was applied")
	}
}
