package store

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/mcprt/mcprt/domain/trace"
)

// traceRef is what the store must answer, computed from the events in the
// order they were appended (their order is start, then append order).
type traceRef struct{ events []trace.Event }

func (r *traceRef) sorted() []trace.Event {
	out := slices.Clone(r.events)
	slices.SortStableFunc(out, func(x, y trace.Event) int { return x.Start.Compare(y.Start) })
	return out
}

func (r *traceRef) filter(limit int, keep func(e trace.Event) bool) ([]trace.Event, bool) {
	out := []trace.Event{}
	for _, e := range r.sorted() {
		if keep(e) {
			out = append(out, e)
		}
	}
	if len(out) > limit {
		return out[:limit], true
	}
	return out, false
}

func (r *traceRef) list(q trace.ListQuery) ([]trace.Summary, int) {
	byID := map[string]*trace.Summary{}
	last := map[string]time.Time{}
	hasTool := map[string]bool{}
	var ids []string
	for _, e := range r.sorted() {
		s := byID[e.TraceID]
		if s == nil {
			s = &trace.Summary{TraceID: e.TraceID, RootTool: e.Tool, Start: e.Start, End: e.End()}
			byID[e.TraceID] = s
			ids = append(ids, e.TraceID)
		}
		s.Events++
		if !e.Success {
			s.Failures++
		}
		if e.End().After(s.End) {
			s.End = e.End()
		}
		last[e.TraceID] = e.Start
		hasTool[e.TraceID] = hasTool[e.TraceID] || e.Tool == q.Tool
	}
	var match []trace.Summary
	for _, id := range ids {
		s := *byID[id]
		if (q.Tool != "" && !hasTool[id]) || (q.Status != "" && s.Status() != q.Status) {
			continue
		}
		match = append(match, s)
	}
	slices.SortStableFunc(match, func(x, y trace.Summary) int {
		if c := last[y.TraceID].Compare(last[x.TraceID]); c != 0 {
			return c
		}
		if x.TraceID < y.TraceID {
			return -1
		}
		return 1
	})
	return append([]trace.Summary{}, match[:min(q.Limit, len(match))]...), len(match)
}

func randomEvents(rng *rand.Rand, n int, base time.Time) []trace.Event {
	out := make([]trace.Event, n)
	for i := range out {
		tid := fmt.Sprintf("t%d", rng.IntN(12))
		corr := tid
		if rng.IntN(3) == 0 {
			corr += "/sub" + fmt.Sprint(rng.IntN(3))
		}
		if rng.IntN(8) == 0 {
			corr = "/" + corr // the sink keeps such an id whole as the trace id
		}
		traceID, parent := trace.Path(corr)
		if traceID == "" {
			traceID, parent = corr, ""
		}
		run := fmt.Sprintf("%08x-0000-4000-8000-%012x", rng.Uint32(), i)
		if rng.IntN(3) == 0 {
			run = fmt.Sprintf("run-%d-%d", i, rng.Int())
		}
		e := trace.Event{RunID: run, TraceID: traceID, CorrelationID: corr, ParentID: parent,
			Tool: []string{"noop", "echo", "memory_get"}[rng.IntN(3)], Start: base.Add(time.Duration(rng.IntN(50)) * time.Millisecond),
			Duration: time.Duration(rng.IntN(1000)) * time.Microsecond, Outcome: "success", Success: rng.IntN(5) != 0, ServerID: "srv"}
		if !e.Success {
			e.Outcome, e.ErrorCode, e.ErrorMessage = "tool_error", "INTERNAL", "boom\nline two"
		}
		if rng.IntN(3) == 0 {
			e.SessionID = fmt.Sprintf("s%d", rng.IntN(4))
		}
		switch rng.IntN(3) {
		case 0:
			e.Args, e.Result = json.RawMessage(`{"a":1}`), json.RawMessage(`{}`)
		case 1:
			e.Args = json.RawMessage(`"x"`)
		}
		out[i] = e
	}
	return out
}

func checkTraces(t *testing.T, tr *Traces, ref *traceRef) {
	t.Helper()
	ctx := testCtx(t)
	for _, q := range []trace.ListQuery{{Limit: 5}, {Limit: 200}, {Status: trace.StatusFailure, Limit: 3},
		{Status: trace.StatusSuccess, Limit: 200}, {Tool: "echo", Limit: 4}, {Tool: "none", Limit: 4}} {
		got, total, err := tr.List(ctx, q)
		want, wantTotal := ref.list(q)
		if err != nil || total != wantTotal || !reflect.DeepEqual(got, want) {
			t.Fatalf("List(%+v) = %+v, %d, %v\nwant %+v, %d", q, got, total, err, want, wantTotal)
		}
	}
	for i := range 14 {
		id := fmt.Sprintf("t%d", i)
		if i == 13 {
			id = "/t1"
		}
		for _, limit := range []int{2, 1000} {
			got, more, err := tr.Events(ctx, id, limit)
			want, wantMore := ref.filter(limit, func(e trace.Event) bool { return e.TraceID == id })
			if err != nil || more != wantMore || !reflect.DeepEqual(got, want) {
				t.Fatalf("Events(%s, %d) = %d events, %v, %v; want %d, %v", id, limit, len(got), more, err, len(want), wantMore)
			}
		}
	}
	for _, id := range []string{"s0", "s1", "s2", "s3", "s9", ""} {
		got, more, err := tr.BySession(ctx, id, 7)
		want, wantMore := ref.filter(7, func(e trace.Event) bool { return e.SessionID == id && id != "" })
		if err != nil || more != wantMore || !reflect.DeepEqual(got, want) {
			t.Fatalf("BySession(%s) = %+v, %v, %v; want %+v, %v", id, got, more, err, want, wantMore)
		}
	}
	st, err := tr.Stats(ctx)
	traces := map[string]bool{}
	want := trace.Stats{Events: len(ref.events)}
	for _, e := range ref.sorted() {
		traces[e.TraceID] = true
		if want.Oldest.IsZero() {
			want.Oldest = e.Start
		}
		want.Newest = e.Start
	}
	want.Traces = len(traces)
	if err != nil || st != want {
		t.Fatalf("Stats = %+v, %v; want %+v", st, err, want)
	}
}

func TestTracesReadWhatWasAppended(t *testing.T) {
	db, _ := newDB(t)
	tr := db.Traces()
	rng := rand.New(rand.NewPCG(1, 2))
	ref := &traceRef{}
	for _, n := range []int{1, 5, 256, 37, maxBatchEvents + 3} {
		evs := randomEvents(rng, n, t0)
		if err := tr.Append(testCtx(t), evs); err != nil {
			t.Fatal(err)
		}
		ref.events = append(ref.events, evs...)
		checkTraces(t, tr, ref)
	}
	// Retention: first by age, then by count (oldest first, ties in
	// append order).
	cutoff := t0.Add(10 * time.Millisecond)
	n, err := tr.Prune(testCtx(t), cutoff, 1<<30)
	var kept []trace.Event
	for _, e := range ref.events {
		if !e.Start.Before(cutoff) {
			kept = append(kept, e)
		}
	}
	if err != nil || n != len(ref.events)-len(kept) {
		t.Fatalf("Prune by age deleted %d, %v; want %d", n, err, len(ref.events)-len(kept))
	}
	ref.events = kept
	checkTraces(t, tr, ref)
	const keep = 300
	n, err = tr.Prune(testCtx(t), time.Time{}, keep)
	sorted := ref.sorted()
	drop := map[string]bool{}
	for _, e := range sorted[:len(sorted)-keep] {
		drop[e.RunID] = true
	}
	kept = nil
	for _, e := range ref.events {
		if !drop[e.RunID] {
			kept = append(kept, e)
		}
	}
	if err != nil || n != len(drop) {
		t.Fatalf("Prune by count deleted %d, %v; want %d", n, err, len(drop))
	}
	ref.events = kept
	checkTraces(t, tr, ref)
	if n, err := tr.Prune(testCtx(t), t0.Add(time.Hour), 0); err != nil || n != keep {
		t.Fatalf("Prune of everything deleted %d, %v; want %d", n, err, keep)
	}
	ref.events = nil
	checkTraces(t, tr, ref)
}

// A database of schema version 3 keeps its trace events: version 4 moves
// them into batches.
func TestTracesMigrateEventRows(t *testing.T) {
	all := migrations
	migrations = all[:3]
	dir := t.TempDir()
	db, err := New(Options{Dir: dir})
	if err != nil {
		migrations = all
		t.Fatal(err)
	}
	h, err := db.handle(testCtx(t))
	migrations = all
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	ref := &traceRef{events: randomEvents(rng, 600, t0)}
	for _, e := range ref.events {
		var a, r any
		if e.Args != nil {
			a = string(e.Args)
		}
		if e.Result != nil {
			r = string(e.Result)
		}
		if _, err := h.Exec(`INSERT INTO trace_events (run_id, trace_id, correlation_id, parent_id, tool, started_at, duration_ns,
			outcome, success, error_code, error_message, session_id, server_id, args, result) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			e.RunID, e.TraceID, e.CorrelationID, e.ParentID, e.Tool, nanos(e.Start), int64(e.Duration), e.Outcome, e.Success,
			e.ErrorCode, e.ErrorMessage, e.SessionID, e.ServerID, a, r); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	db, err = New(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tr := db.Traces()
	checkTraces(t, tr, ref)
	more := randomEvents(rng, 100, t0)
	if err := tr.Append(testCtx(t), more); err != nil {
		t.Fatal(err)
	}
	ref.events = append(ref.events, more...)
	checkTraces(t, tr, ref)
}
