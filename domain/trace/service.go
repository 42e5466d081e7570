package trace

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/internal/check"
)

// CodeTraceNotFound: no event has the given trace id.
const CodeTraceNotFound core.Code = "TRACE_NOT_FOUND"

// Flusher makes the events recorded so far readable (Recorder.Flush).
type Flusher interface {
	Flush(ctx context.Context) error
}

// Service is the trace domain's read side: it validates requests, makes
// this process's recorded events readable first, and reads the Store.
// Safe for concurrent use.
type Service struct {
	store  Store
	flush  Flusher
	linger time.Duration // how long a writing process may hold events back (WithLinger)
}

// NewService returns a Service over store. flush may be nil.
func NewService(store Store, flush Flusher) *Service {
	return &Service{store: store, flush: flush}
}

// WithLinger returns a copy of s that knows how long a writing process
// may hold its events before they are readable (trace.flushIntervalMs): a
// trace id that is not found yet may still be in flight for that long,
// and TRACE_NOT_FOUND says so.
func (s *Service) WithLinger(d time.Duration) *Service {
	c := *s
	c.linger = d
	return &c
}

// settle waits (briefly) for this process's queued events, so that a
// trace tool sees the calls made before it.
func (s *Service) settle(ctx context.Context) {
	if s.flush == nil {
		return
	}
	fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_ = s.flush.Flush(fctx) // best effort: reading what is there is still right
}

// inFlight says how long a trace written by another process may take to
// become readable ("" when its writers do not linger). This process's own
// events were made readable before the read (settle).
func (s *Service) inFlight() string {
	if s.linger <= 0 {
		return ""
	}
	return fmt.Sprintf(". If another mcprt process is writing it, it may still be in flight: its steps become readable "+
		"within about %d ms of each call (trace.flushIntervalMs); try again after that", (s.linger + 50*time.Millisecond).Milliseconds())
}

func checkID(field, id string) error { return check.Text(field, id, MaxIDBytes, true) }

// List returns traces, most recent first, and how many match.
func (s *Service) List(ctx context.Context, q ListQuery) ([]Summary, int, error) {
	switch q.Status {
	case "", StatusSuccess, StatusFailure:
	default:
		return nil, 0, check.Invalid("status", "is %q; give success or failure, or leave it out for both", q.Status)
	}
	if q.Tool != "" {
		if err := check.Text("tool", q.Tool, 128, false); err != nil {
			return nil, 0, err
		}
	}
	var err error
	if q.Limit, err = check.Limit("limit", q.Limit, DefaultListLimit, MaxListLimit); err != nil {
		return nil, 0, err
	}
	s.settle(ctx)
	return s.store.List(ctx, q)
}

// Get returns a trace's events in start order (at most MaxTraceEvents;
// truncated says when there are more), or TRACE_NOT_FOUND.
func (s *Service) Get(ctx context.Context, traceID string) (events []Event, truncated bool, err error) {
	if err := checkID("traceId", traceID); err != nil {
		return nil, false, err
	}
	s.settle(ctx)
	events, truncated, err = s.store.Events(ctx, traceID, MaxTraceEvents)
	if err != nil {
		return nil, false, err
	}
	if len(events) == 0 {
		return nil, false, core.NewError(CodeTraceNotFound, fmt.Sprintf(
			"no trace has id %q yet; trace_list shows recent traces (a trace id is the first '/'-separated segment of a call's correlationId)",
			core.Clip(traceID, 64))+s.inFlight()).WithDetail("traceId", traceID)
	}
	return events, truncated, nil
}

// BySession returns the events linked to a collaboration session, in
// start order. A session without events is an empty result, not an
// error: the session may exist and be untouched.
func (s *Service) BySession(ctx context.Context, sessionID string, limit int) ([]Event, bool, error) {
	if err := checkID("sessionId", sessionID); err != nil {
		return nil, false, err
	}
	limit, err := check.Limit("limit", limit, DefaultSessionLimit, MaxSessionLimit)
	if err != nil {
		return nil, false, err
	}
	s.settle(ctx)
	return s.store.BySession(ctx, sessionID, limit)
}

// Stats counts the stored events and traces.
func (s *Service) Stats(ctx context.Context) (Stats, error) {
	s.settle(ctx)
	return s.store.Stats(ctx)
}

// Node is one correlation path of a delegation tree and the calls made
// under it.
type Node struct {
	// ID is the correlation path ("T", "T/review", ...).
	ID string
	// ParentID is the parent path ("" for the root).
	ParentID string
	// Steps are the calls whose correlation id is ID, in start order.
	Steps []Event
	// Children are the delegated paths, ordered by their first start.
	Children []*Node
	// Start and End span the node's own steps and its children's.
	Start, End time.Time
	// Failures counts failed steps in the subtree.
	Failures int
}

// Tree builds the delegation tree of one trace's events: each correlation
// path is a node under its parent path (a missing intermediate path gets
// an empty node), nested at most MaxTreeDepth deep.
func Tree(traceID string, events []Event) *Node {
	root := &Node{ID: traceID}
	nodes := map[string]*Node{traceID: root}
	var get func(id string) *Node
	get = func(id string) *Node { // recursion depth <= MaxTreeDepth: ids are clamped
		if n, ok := nodes[id]; ok {
			return n
		}
		p := root
		if _, parent := Path(id); parent != "" {
			p = get(parent)
		}
		n := &Node{ID: id, ParentID: p.ID}
		nodes[id] = n
		p.Children = append(p.Children, n)
		return n
	}
	for _, ev := range events {
		n := root
		if id := clampPath(ev.CorrelationID); id != "" && id != traceID {
			n = get(id)
		}
		n.Steps = append(n.Steps, ev)
	}
	span(root)
	return root
}

// clampPath keeps the first MaxTreeDepth segments of a correlation path.
func clampPath(id string) string {
	seps := 0
	for i := 0; i < len(id); i++ {
		if id[i] == PathSeparator[0] {
			if seps++; seps == MaxTreeDepth {
				return id[:i]
			}
		}
	}
	return id
}

// span fills Start, End and Failures bottom-up and orders children.
func span(n *Node) {
	for _, st := range n.Steps {
		widen(n, st.Start, st.End())
		if !st.Success {
			n.Failures++
		}
	}
	for _, c := range n.Children {
		span(c)
		widen(n, c.Start, c.End)
		n.Failures += c.Failures
	}
	sort.SliceStable(n.Children, func(i, j int) bool { return n.Children[i].Start.Before(n.Children[j].Start) })
}

func widen(n *Node, start, end time.Time) {
	if start.IsZero() {
		return
	}
	if n.Start.IsZero() || start.Before(n.Start) {
		n.Start = start
	}
	if end.After(n.End) {
		n.End = end
	}
}
