package store

import (
	"context"
	"errors"
	"testing"

	"github.com/mcprt/mcprt/domain/memory"
)

// TestApplyEventOnce: an event is applied once per store however often it
// is delivered, its writes commit with the applied sequence, an undone
// event records its outcome and moves the sequence without writing, and
// a failing one changes nothing at all.
func TestApplyEventOnce(t *testing.T) {
	db, _ := newDB(t)
	ctx := testCtx(t)
	mem := db.Memory()
	put := func(key string, undo bool, fail error) ApplyFunc {
		return func(ctx context.Context) ([]byte, bool, error) {
			if _, err := mem.Put(ctx, memory.Entry{Namespace: "n", Key: key, Value: []byte(`1`), StoredAt: t0}); err != nil {
				return nil, false, err
			}
			return []byte(`"` + key + `"`), undo, fail
		}
	}
	steps := []struct {
		seq          uint64
		fn           ApplyFunc
		applied      bool
		err          bool
		wantSeq      uint64
		wantKey      string
		wantKeyThere bool
	}{
		{1, put("a", false, nil), true, false, 1, "a", true},
		{1, put("a2", false, nil), false, false, 1, "a2", false}, // redelivered: skipped
		{2, put("b", true, nil), true, false, 2, "b", false},     // undone: recorded, not written
		{3, put("c", false, errors.New("disk")), false, true, 2, "c", false},
		{3, put("c", false, nil), true, false, 3, "c", true},
		{2, put("b2", false, nil), false, false, 3, "b2", false}, // behind: skipped
	}
	for i, s := range steps {
		applied, err := db.ApplyEvent(ctx, "S", s.seq, s.fn)
		if applied != s.applied || (err != nil) != s.err {
			t.Fatalf("step %d: applied %v err %v, want applied %v err %v", i, applied, err, s.applied, s.err)
		}
		if got, err := db.AppliedSeq(ctx, "S"); err != nil || got != s.wantSeq {
			t.Fatalf("step %d: applied seq %d (%v), want %d", i, got, err, s.wantSeq)
		}
		if _, found, err := mem.Get(ctx, "n", s.wantKey); err != nil || found != s.wantKeyThere {
			t.Fatalf("step %d: %s found %v (%v), want %v", i, s.wantKey, found, err, s.wantKeyThere)
		}
	}
	for seq, want := range map[uint64]string{1: `"a"`, 2: `"b"`, 3: `"c"`} {
		if res, found, err := db.EventResult(ctx, "S", seq); err != nil || !found || string(res) != want {
			t.Fatalf("result %d = %q %v %v, want %s", seq, res, found, err, want)
		}
	}
	if _, found, _ := db.EventResult(ctx, "S", 4); found {
		t.Fatal("an event never applied has an outcome")
	}
	if got, _ := db.AppliedSeq(ctx, "other"); got != 0 {
		t.Fatalf("another stream's applied seq is %d, want 0", got)
	}
}
