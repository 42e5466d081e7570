package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/memory"
	"github.com/mcprt/mcprt/domain/session"
	"github.com/mcprt/mcprt/domain/trace"
)

func putMem(t *testing.T, db *DB, ns, key string) {
	t.Helper()
	if _, err := db.Memory().Put(testCtx(t), memory.Entry{Namespace: ns, Key: key, Value: json.RawMessage(`1`), StoredAt: t0}); err != nil {
		t.Fatal(err)
	}
}

func TestChangesFeedRecordsEveryWrite(t *testing.T) {
	t.Parallel()
	db, _ := newDB(t)
	ctx := testCtx(t)
	start, err := db.LastChange(ctx)
	if err != nil || start != 0 {
		t.Fatalf("LastChange of a fresh store = %d, %v; want 0", start, err)
	}
	putMem(t, db, "ns", "k")
	putMem(t, db, "ns", "k") // an overwrite is a change too
	if _, err := db.Memory().Delete(ctx, "ns", "k"); err != nil {
		t.Fatal(err)
	}
	sess := session.Session{ID: "s1", Initiator: "a", Status: session.StatusActive, CreatedAt: t0, UpdatedAt: t0}
	if err := db.Sessions().Create(ctx, sess); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Sessions().Update(ctx, "s1", func(s *session.Session) error { s.Task = "x"; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := db.Traces().Append(ctx, []trace.Event{{RunID: "r", TraceID: "t", Tool: "noop", Start: t0}}); err != nil {
		t.Fatal(err)
	}
	got, gap, err := db.ChangesSince(ctx, 0, 100)
	if err != nil || gap {
		t.Fatalf("ChangesSince: gap %v, %v", gap, err)
	}
	want := []Change{{1, ChangeMemory, "ns", "k"}, {2, ChangeMemory, "ns", "k"}, {3, ChangeMemory, "ns", "k"},
		{4, ChangeSession, "", "s1"}, {5, ChangeSession, "", "s1"}, {6, ChangeTrace, ChangeScopeBatch, "1"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("changes:\n got %v\nwant %v", got, want)
	}
	ids, err := db.Traces().BatchTraceIDs(ctx, 1)
	if err != nil || fmt.Sprint(ids) != "[t]" {
		t.Fatalf("BatchTraceIDs(1) = %v, %v", ids, err)
	}
	if got, _, _ = db.ChangesSince(ctx, 4, 1); len(got) != 1 || got[0].Seq != 5 {
		t.Fatalf("ChangesSince(4, limit 1) = %v", got)
	}
	if last, _ := db.LastChange(ctx); last != 6 {
		t.Fatalf("LastChange = %d, want 6", last)
	}
	// A failed write leaves no change behind.
	err = db.write(ctx, func(conn *sql.Conn) error {
		if _, err := putEntry(ctx, conn, memory.Entry{Namespace: "ns", Key: "gone", Value: json.RawMessage(`1`), StoredAt: t0}, false); err != nil {
			return err
		}
		return fmt.Errorf("abandon")
	})
	if err == nil {
		t.Fatal("the abandoned write succeeded")
	}
	if last, _ := db.LastChange(ctx); last != 6 {
		t.Fatalf("LastChange after a rolled-back write = %d, want 6", last)
	}
}

func TestChangesFeedIsTrimmed(t *testing.T) {
	t.Parallel()
	db, _ := newDB(t)
	ctx := testCtx(t)
	n := changesKept + 3*changesTrimEvery
	writeChanges(t, db, n)
	h, err := db.handle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := h.QueryRowContext(ctx, `SELECT COUNT(*) FROM changes`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows > changesKept+changesTrimEvery || rows < changesKept {
		t.Fatalf("the feed holds %d rows after %d changes, want between %d and %d", rows, n, changesKept, changesKept+changesTrimEvery)
	}
	// A reader from the start missed the trimmed ones and is told so.
	got, gap, err := db.ChangesSince(ctx, 0, 10)
	if err != nil || !gap || len(got) != 10 {
		t.Fatalf("ChangesSince(0) = %d changes, gap %v, %v; want 10 and a gap", len(got), gap, err)
	}
	last, _ := db.LastChange(ctx)
	if last != int64(n) {
		t.Fatalf("LastChange = %d, want %d", last, n)
	}
	if got, gap, _ = db.ChangesSince(ctx, last-5, 100); gap || len(got) != 5 {
		t.Fatalf("a reader 5 behind got %d changes, gap %v", len(got), gap)
	}
}

// writeChanges appends n changes to db's feed in one statement, as n
// memory writes would (each row fires the trimming trigger), without the
// cost of n memory writes under the race detector.
func writeChanges(t *testing.T, db *DB, n int) {
	t.Helper()
	ctx := testCtx(t)
	h, err := db.handle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.ExecContext(ctx, `WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM i WHERE n < ?)
		INSERT INTO changes (domain, scope, key) SELECT 'memory', 'bulk', CAST(n AS TEXT) FROM i`, n); err != nil {
		t.Fatalf("write %d changes: %v", n, err)
	}
}

// watchOf starts a Watcher of db whose findings arrive on the channel.
func watchOf(t *testing.T, db *DB, clock core.Clock, active func() bool) (*Watcher, chan []Change) {
	t.Helper()
	found := make(chan []Change, 16)
	w := db.NewWatcher(WatchOptions{Interval: time.Second, Clock: clock, Active: active,
		Changes: func(cs []Change, gap bool) {
			if gap {
				cs = append(cs, Change{Domain: "gap"})
			}
			found <- cs
		},
		Error: func(err error) { t.Errorf("watch: %v", err) }})
	if err := w.Start(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w, found
}

func next(t *testing.T, found chan []Change) []Change {
	t.Helper()
	select {
	case cs := <-found:
		return cs
	case <-time.After(time.Minute):
		t.Fatal("no changes reported")
		return nil
	}
}

func TestWatcherSeesLocalWritesAtOnce(t *testing.T) {
	t.Parallel()
	db, clock := newDB(t)
	putMem(t, db, "ns", "before") // before Start: not reported
	_, found := watchOf(t, db, clock, nil)
	putMem(t, db, "ns", "k")
	// No clock move: the commit itself wakes the watcher.
	if cs := next(t, found); len(cs) != 1 || cs[0].Key != "k" {
		t.Fatalf("reported %v, want the one change of ns/k", cs)
	}
}

func TestWatcherPollsOtherConnections(t *testing.T) {
	t.Parallel()
	db, clock := newDB(t)
	other, err := New(Options{Dir: db.opts.Dir})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, found := watchOf(t, db, clock, nil)
	ctx := testCtx(t)
	putMem(t, other, "ns", "theirs") // another process, as far as db can tell
	if err := clock.WaitForTimers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case cs := <-found:
		t.Fatalf("reported %v before the poll", cs)
	default:
	}
	clock.Advance(time.Second)
	if cs := next(t, found); len(cs) != 1 || cs[0].Scope != "ns" || cs[0].Key != "theirs" {
		t.Fatalf("reported %v, want ns/theirs", cs)
	}
	// The next poll is armed again, and reports only what is new.
	if err := clock.WaitForTimers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	putMem(t, other, "ns", "again")
	clock.Advance(time.Second)
	if cs := next(t, found); len(cs) != 1 || cs[0].Key != "again" {
		t.Fatalf("reported %v, want ns/again", cs)
	}
}

func TestWatcherStopsWhenInactive(t *testing.T) {
	t.Parallel()
	db, clock := newDB(t)
	active := make(chan bool, 1)
	w, _ := watchOf(t, db, clock, func() bool { return <-active })
	ctx := testCtx(t)
	if err := clock.WaitForTimers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	active <- false
	clock.Advance(time.Second)
	for deadline := time.Now().Add(time.Minute); w.Watching(); { // the poll that found nobody interested stops it
		if time.Now().After(deadline) {
			t.Fatal("the watcher did not stop")
		}
		runtime.Gosched()
	}
	if n := clock.Timers(); n != 0 {
		t.Fatalf("%d timers armed after stopping, want 0", n)
	}
	putMem(t, db, "ns", "k") // no watcher: the write wakes nothing
	if err := w.Start(ctx); err != nil || !w.Watching() {
		t.Fatalf("restart: watching %v, %v", w.Watching(), err)
	}
	w.Stop()
	w.Stop() // twice is fine
}

func TestWatcherReportsGaps(t *testing.T) {
	t.Parallel()
	db, clock := newDB(t)
	other, err := New(Options{Dir: db.opts.Dir})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, found := watchOf(t, db, clock, nil)
	writeChanges(t, other, changesKept+2*changesTrimEvery)
	if err := clock.WaitForTimers(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	cs := next(t, found)
	if cs[len(cs)-1].Domain != "gap" {
		t.Fatalf("a watcher that fell behind the trimming was not told: %d changes", len(cs))
	}
}
