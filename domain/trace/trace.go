package trace

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// Limits of the trace domain.
const (
	// MaxIDBytes bounds a trace id, a correlation id or a session id.
	MaxIDBytes = 128
	// DefaultListLimit and MaxListLimit bound trace_list.
	DefaultListLimit, MaxListLimit = 10, 200
	// MaxTraceEvents bounds the events read for one trace (trace_get,
	// trace_analyze, trace_tree); a trace with more reports truncated.
	MaxTraceEvents = 1000
	// DefaultSessionLimit and MaxSessionLimit bound trace_by_session.
	DefaultSessionLimit, MaxSessionLimit = 100, MaxTraceEvents
	// MaxErrorMessageBytes bounds the error message kept with an event.
	MaxErrorMessageBytes = 512
	// MaxTreeDepth bounds the nesting of a delegation tree: deeper
	// correlation paths are attached at this depth.
	MaxTreeDepth = 32
)

// PathSeparator separates the segments of a correlation path: a call whose
// correlation id is "T/review/lint" belongs to trace "T" and was delegated
// from "T/review".
const PathSeparator = "/"

// Status values of events and traces.
const (
	StatusSuccess = "success"
	StatusFailure = "failure"
)

// Event is one finished tool call.
type Event struct {
	// RunID identifies the call (the server's runId).
	RunID string
	// TraceID is the first segment of CorrelationID.
	TraceID string
	// CorrelationID is the call's correlation id: the client's
	// _meta.correlationId or a generated one.
	CorrelationID string
	// ParentID is CorrelationID without its last segment; "" for a root.
	ParentID string
	// Tool is the tool's name.
	Tool string
	// Start is when the call started; Duration how long its handler took.
	Start    time.Time
	Duration time.Duration
	// Outcome is the completion outcome (success, tool_error,
	// late_completed, aborted, disconnected_completed).
	Outcome string
	// Success is true when the call's result was a success.
	Success bool
	// ErrorCode and ErrorMessage describe a failure ("" on success).
	ErrorCode    string
	ErrorMessage string
	// SessionID links the call to a collaboration session: the
	// sessionId its arguments named, or the one it created.
	SessionID string
	// ServerID identifies the mcprt process that recorded the call.
	ServerID string
	// Args and Result are the redacted, bounded arguments and result, or
	// nil when they are not captured.
	Args   json.RawMessage
	Result json.RawMessage
}

// Status returns StatusSuccess or StatusFailure.
func (e Event) Status() string {
	if e.Success {
		return StatusSuccess
	}
	return StatusFailure
}

// End returns when the call ended.
func (e Event) End() time.Time { return e.Start.Add(e.Duration) }

// Path returns the correlation path's trace id and parent path.
func Path(correlationID string) (traceID, parentID string) {
	i := strings.IndexByte(correlationID, PathSeparator[0])
	if i < 0 {
		return correlationID, ""
	}
	j := strings.LastIndexByte(correlationID, PathSeparator[0])
	return correlationID[:i], correlationID[:j]
}

// Summary describes one trace: every event that shares a TraceID.
type Summary struct {
	TraceID  string
	RootTool string // the tool of the earliest event
	Start    time.Time
	End      time.Time
	Events   int
	Failures int
}

// Status is StatusFailure when any event failed.
func (s Summary) Status() string {
	if s.Failures > 0 {
		return StatusFailure
	}
	return StatusSuccess
}

// ListQuery selects traces, most recent first. Status "" means any; Tool
// "" means any (otherwise only traces with an event of that tool).
type ListQuery struct {
	Status string
	Tool   string
	Limit  int
}

// Stats counts what the store holds.
type Stats struct {
	Events int
	Traces int
	Oldest time.Time
	Newest time.Time
}

// Store persists events. Implementations are safe for concurrent use (and,
// for shared backends, by several processes); each method is atomic.
// Errors are *core.Error values.
type Store interface {
	// Append writes events in one transaction. An event whose RunID is
	// already stored is skipped.
	Append(ctx context.Context, events []Event) error
	// List returns at most q.Limit traces, most recent first, and how many
	// match.
	List(ctx context.Context, q ListQuery) ([]Summary, int, error)
	// Events returns at most limit events of a trace in start order and
	// whether there are more.
	Events(ctx context.Context, traceID string, limit int) ([]Event, bool, error)
	// BySession returns at most limit events linked to a session, in start
	// order, and whether there are more.
	BySession(ctx context.Context, sessionID string, limit int) ([]Event, bool, error)
	// Prune deletes events that started before cutoff, then the oldest
	// events beyond the newest keep; it returns how many it deleted.
	Prune(ctx context.Context, cutoff time.Time, keep int) (int, error)
	// Stats counts the stored events and traces.
	Stats(ctx context.Context) (Stats, error)
}
