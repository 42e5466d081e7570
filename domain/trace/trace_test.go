package trace

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// memStore is a Store for tests; gate, when set, holds Append until closed,
// and entered (when set) receives once per Append before it waits.
type memStore struct {
	mu      sync.Mutex
	events  []Event
	gate    chan struct{}
	entered chan struct{}
}

func (m *memStore) Append(ctx context.Context, evs []Event) error {
	if m.entered != nil {
		select {
		case m.entered <- struct{}{}:
		default:
		}
	}
	if m.gate != nil {
		<-m.gate
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, evs...)
	return nil
}
func (m *memStore) List(context.Context, ListQuery) ([]Summary, int, error) { return nil, 0, nil }
func (m *memStore) Events(_ context.Context, id string, limit int) ([]Event, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Event
	for _, e := range m.events {
		if e.TraceID == id {
			out = append(out, e)
		}
	}
	return out, false, nil
}
func (m *memStore) BySession(context.Context, string, int) ([]Event, bool, error) {
	return nil, false, nil
}
func (m *memStore) Prune(context.Context, time.Time, int) (int, error) { return 0, nil }
func (m *memStore) Stats(context.Context) (Stats, error)               { return Stats{}, nil }

func (m *memStore) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.events)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestRecorderDropsWhenFullAndNeverBlocks(t *testing.T) {
	st := &memStore{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	r := NewRecorder(RecorderOptions{Store: st, QueueSize: 4, BatchSize: 2})
	// The writer takes the first event and blocks in Append; then the
	// queue fills (4) and further events are dropped at once.
	r.Record(Event{RunID: "r0", TraceID: "t"}, nil)
	select {
	case <-st.entered:
	case <-ctx(t).Done():
		t.Fatal("the writer never took the first event")
	}
	start := time.Now()
	accepted := 0
	for i := 1; i <= 20; i++ {
		if r.Record(Event{RunID: "r", TraceID: "t"}, nil) {
			accepted++
		}
	}
	if time.Since(start) > time.Second {
		t.Fatalf("Record blocked for %v on a full queue", time.Since(start))
	}
	acc, dropped, _ := r.Counts()
	if accepted > 5 || dropped != uint64(20-accepted) || acc != uint64(accepted+1) {
		t.Fatalf("accepted %d more, counts accepted %d dropped %d", accepted, acc, dropped)
	}
	close(st.gate)
	if err := r.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if st.len() != int(acc) {
		t.Fatalf("stored %d events, want every accepted one (%d)", st.len(), acc)
	}
	if err := r.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if r.Record(Event{RunID: "late"}, nil) {
		t.Fatal("a closed Recorder accepted an event")
	}
}

func TestRecorderCaptureRedactsAndBounds(t *testing.T) {
	st := &memStore{}
	r := NewRecorder(RecorderOptions{Store: st, Capture: true, MaxCaptured: 128, Redactor: core.NewRedactor([]string{"password"})})
	r.Record(Event{RunID: "a", TraceID: "t", Args: json.RawMessage(`{"password":"hunter2","user":"ann"}`)}, map[string]any{"ok": true})
	r.Record(Event{RunID: "b", TraceID: "t", Args: json.RawMessage(`{"text":"` + strings.Repeat("x", 500) + `"}`)}, nil)
	if err := r.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	a, b := st.events[0], st.events[1]
	if strings.Contains(string(a.Args), "hunter2") || !strings.Contains(string(a.Args), "ann") || string(a.Result) != `{"ok":true}` {
		t.Fatalf("captured %s / %s", a.Args, a.Result)
	}
	if len(b.Args) > 200 || !strings.Contains(string(b.Args), `"truncated":true`) {
		t.Fatalf("long arguments not bounded: %s", b.Args)
	}
	// Without capture nothing is kept, whatever the sink passed.
	st2 := &memStore{}
	r2 := NewRecorder(RecorderOptions{Store: st2})
	r2.Record(Event{RunID: "c", Args: json.RawMessage(`{"x":1}`)}, "result")
	_ = r2.Close(ctx(t))
	if st2.events[0].Args != nil || st2.events[0].Result != nil {
		t.Fatalf("kept arguments without capture: %+v", st2.events[0])
	}
}

func TestPathTreeAndRender(t *testing.T) {
	for _, tc := range []struct{ id, trace, parent string }{
		{"T", "T", ""}, {"T/a", "T", "T"}, {"T/a/b", "T", "T/a"}, {"/x", "", ""},
	} {
		if tr, p := Path(tc.id); tr != tc.trace || p != tc.parent {
			t.Errorf("Path(%q) = %q, %q; want %q, %q", tc.id, tr, p, tc.trace, tc.parent)
		}
	}
	t0 := time.Unix(1000, 0)
	evs := []Event{
		{RunID: "1", TraceID: "T", CorrelationID: "T", Tool: "plan", Start: t0, Duration: 10 * time.Millisecond, Success: true},
		{RunID: "2", TraceID: "T", CorrelationID: "T/x/y", Tool: "deep", Start: t0.Add(5 * time.Millisecond), Duration: time.Millisecond, ErrorCode: "TIMEOUT"},
		{RunID: "3", TraceID: "T", CorrelationID: "T" + strings.Repeat("/s", 50), Tool: "deeper", Start: t0.Add(6 * time.Millisecond), Duration: time.Millisecond, Success: true},
	}
	root := Tree("T", evs)
	if len(root.Steps) != 1 || len(root.Children) != 2 || root.Failures != 1 || root.End.Sub(root.Start) != 10*time.Millisecond {
		t.Fatalf("tree root: %+v", root)
	}
	x := root.Children[0]
	if x.ID != "T/x" || len(x.Steps) != 0 || len(x.Children) != 1 || x.Children[0].ID != "T/x/y" {
		t.Fatalf("intermediate node: %+v", x)
	}
	depth, n := 0, root.Children[1]
	for len(n.Children) > 0 {
		n, depth = n.Children[0], depth+1
	}
	if depth+1 != MaxTreeDepth-1 || len(n.Steps) != 1 { // MaxTreeDepth segments: the root is depth 0
		t.Fatalf("a 51-segment path nests %d deep, want %d", depth+1, MaxTreeDepth-1)
	}
	out := Render(root)
	for _, want := range []string{"trace T  10.0 ms  (1 failed)", "plan  10.0 ms  ok  [1]", "T/x/y", "deep  1.0 ms  FAILED TIMEOUT  [2]"} {
		if !strings.Contains(out, want) {
			t.Fatalf("Render lacks %q:\n%s", want, out)
		}
	}
}

func TestAnalyze(t *testing.T) {
	t0 := time.Unix(1000, 0)
	evs := []Event{
		{RunID: "1", Tool: "a", Start: t0, Duration: time.Millisecond, ErrorCode: "RESOURCE_EXHAUSTED", Outcome: "tool_error"},
		{RunID: "2", Tool: "a", Start: t0.Add(2 * time.Millisecond), Duration: time.Millisecond, Success: true},
		{RunID: "3", Tool: "b", Start: t0.Add(4 * time.Millisecond), Duration: 2 * time.Second, Success: true},
		{RunID: "4", Tool: "c", Start: t0.Add(5 * time.Millisecond), Duration: time.Millisecond, Success: true},
	}
	a := Analyze("T", evs, false)
	if a.StepCount != 4 || a.ErrorCount != 1 || a.SuccessRate != 0.75 || a.SlowestStep.StepID != "3" {
		t.Fatalf("analysis: %+v", a)
	}
	types := map[string]bool{}
	for _, is := range a.Issues {
		types[is.Type] = true
	}
	if !types["error"] || !types["retry"] || !types["slow_step"] {
		t.Fatalf("issues %+v: want error, retry and slow_step", a.Issues)
	}
	recs := ""
	for _, r := range a.Recommendations {
		recs += r.Type + " " + r.Message + "\n"
	}
	if !strings.Contains(recs, "backoff") || !strings.Contains(recs, "performance") {
		t.Fatalf("recommendations:\n%s", recs)
	}
	if e := Analyze("T", nil, false); e.Summary == "" || e.StepCount != 0 {
		t.Fatalf("empty analysis: %+v", e)
	}
}

func TestServiceValidates(t *testing.T) {
	svc := NewService(&memStore{}, nil)
	for _, q := range []ListQuery{{Status: "running"}, {Limit: MaxListLimit + 1}, {Limit: -1}} {
		if _, _, err := svc.List(ctx(t), q); core.AsError(err).Code != core.CodeInvalidArgument {
			t.Errorf("List(%+v): %v, want INVALID_ARGUMENT", q, err)
		}
	}
	if _, _, err := svc.Get(ctx(t), "missing"); core.AsError(err).Code != CodeTraceNotFound {
		t.Errorf("Get(missing): %v, want TRACE_NOT_FOUND", err)
	}
	if _, _, err := svc.Get(ctx(t), "bad\x00id"); core.AsError(err).Code != core.CodeInvalidArgument {
		t.Errorf("Get(control char): %v, want INVALID_ARGUMENT", err)
	}
}
