package domain

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/session"
	"github.com/mcprt/mcprt/domain/trace"
	"github.com/mcprt/mcprt/internal/jsontext"
	"github.com/mcprt/mcprt/mcp"
)

// AuditSink is the mcp.AuditSink that turns every tools/call into a trace
// event. Enter never refuses a call; Exit only queues (trace.Recorder), so
// neither blocks the call. Safe for concurrent use.
type AuditSink struct {
	rec      *trace.Recorder
	clock    core.Clock
	serverID string
	capture  bool

	// pending carries what Exit needs from Enter (captured arguments, a
	// sessionId) by runId. Most calls need nothing and skip it.
	mu       sync.Mutex
	pending  map[string]pendingCall // guarded by mu
	npending atomic.Int64
}

type pendingCall struct {
	args      json.RawMessage
	sessionID string
}

var _ mcp.AuditSink = (*AuditSink)(nil)

// NewAuditSink returns a sink that records into rec; serverID names this
// process in the events.
func NewAuditSink(rec *trace.Recorder, clock core.Clock, serverID string) *AuditSink {
	if clock == nil {
		clock = core.SystemClock{}
	}
	return &AuditSink{rec: rec, clock: clock, serverID: serverID, capture: rec.Capturing(), pending: map[string]pendingCall{}}
}

// Enter notes the call's sessionId argument and, when capturing, its
// arguments. It never refuses a call.
func (s *AuditSink) Enter(_ context.Context, ev mcp.ToolEnterEvent) error {
	if !s.capture && len(ev.Args) <= 2 { // {}: nothing to note
		return nil
	}
	p := pendingCall{sessionID: sessionIDOf(ev.Args)}
	if s.capture {
		p.args = ev.Args // the sink's own copy (mcp.ToolEnterEvent)
	} else if p.sessionID == "" {
		return nil
	}
	s.mu.Lock()
	s.pending[ev.RunID] = p
	s.mu.Unlock()
	s.npending.Add(1)
	return nil
}

// Exit queues the call's event; it never blocks.
func (s *AuditSink) Exit(_ context.Context, ev mcp.ToolExitEvent) {
	var p pendingCall
	if s.npending.Load() > 0 {
		s.mu.Lock()
		var ok bool
		if p, ok = s.pending[ev.RunID]; ok {
			delete(s.pending, ev.RunID)
			s.npending.Add(-1)
		}
		s.mu.Unlock()
	}
	traceID, parentID := trace.Path(ev.CorrelationID)
	if traceID == "" { // a path that starts with '/': the whole id is the trace
		traceID, parentID = ev.CorrelationID, ""
	}
	e := trace.Event{RunID: ev.RunID, TraceID: traceID, CorrelationID: ev.CorrelationID, ParentID: parentID,
		Tool: ev.Tool, Start: s.clock.Now().Add(-ev.Duration), Duration: ev.Duration, Outcome: ev.Outcome,
		Success: ev.Outcome == mcp.OutcomeSuccess, SessionID: p.sessionID, ServerID: s.serverID, Args: p.args}
	if !e.Success {
		e.ErrorCode, e.ErrorMessage = failure(ev)
	}
	if e.SessionID == "" {
		if out, ok := ev.Result.(session.CreateOutput); ok {
			e.SessionID = out.SessionID
		}
	}
	var result any
	if s.capture {
		result = ev.Result
	}
	s.rec.Record(e, result)
}

// failure returns the error code and (shortened) message of a call that
// did not succeed.
func failure(ev mcp.ToolExitEvent) (code, msg string) {
	if ev.Err != nil {
		ce := core.AsError(ev.Err)
		return string(ce.Code), core.Clip(ce.Message, trace.MaxErrorMessageBytes)
	}
	switch ev.Outcome {
	case mcp.OutcomeToolError:
		return string(core.CodeInternal), "the result failed the server's checks (output schema, size or encoding)"
	case mcp.OutcomeLateCompleted:
		return string(core.CodeTimeout), "the tool finished after its deadline; the client got TIMEOUT"
	default:
		return strings.ToUpper(ev.Outcome), ""
	}
}

// sessionIDOf returns the top-level "sessionId" string of an arguments
// object when it is a plausible id, else "".
func sessionIDOf(args json.RawMessage) string {
	raw := jsontext.Member(args, "sessionId")
	if raw == nil {
		return ""
	}
	id, ok := jsontext.String(raw)
	if !ok || id == "" || len(id) > trace.MaxIDBytes {
		return ""
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x20 || id[i] == 0x7f {
			return ""
		}
	}
	return id
}
