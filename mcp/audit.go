package mcp

import (
	"context"
	"encoding/json"
	"time"
)

// AuditSink sees every tools/call that passed input validation.
// Enter runs before the handler; when it returns an error the call fails
// with AUDIT_ENTER_FAILED and the handler does not run. Exit runs exactly
// once after every successful Enter, when the handler has returned (also
// after a timeout, a cancellation or a disconnect). Both may be called
// concurrently for different calls and should not block for long: they run
// on the call's path.
type AuditSink interface {
	Enter(ctx context.Context, ev ToolEnterEvent) error
	Exit(ctx context.Context, ev ToolExitEvent)
}

// ToolEnterEvent describes a call about to run. It is a value: the sink may
// keep it; Args is the sink's own copy.
type ToolEnterEvent struct {
	Tool          string
	Args          json.RawMessage
	Time          time.Time
	CorrelationID string
	RunID         string
}

// ToolExitEvent describes a call whose handler has returned. Result is the
// handler's result (nil on error); Err is its error; Outcome is the
// completion record's outcome (success, tool_error, late_completed,
// aborted, disconnected_completed).
type ToolExitEvent struct {
	Tool          string
	CorrelationID string
	RunID         string
	Duration      time.Duration
	Result        any
	Err           error
	Outcome       string
}

// NopAuditSink records nothing; it is the default.
type NopAuditSink struct{}

// Enter accepts every call.
func (NopAuditSink) Enter(context.Context, ToolEnterEvent) error { return nil }

// Exit does nothing.
func (NopAuditSink) Exit(context.Context, ToolExitEvent) {}

var _ AuditSink = NopAuditSink{}
