package mcp

import (
	"context"
	"log/slog"
	"sync"
)

// callInfo is what a tool handler's context carries. The scoped logger is
// built on first use: most handlers never log.
type callInfo struct {
	runID         string
	correlationID string
	tool          string
	session       *Session
	call          *toolCall // for StartTask; nil for an InvokeTool run
	slot          *slotHold // the run's execution slot (WaitWithoutSlot, InvokeTool)

	once   sync.Once
	logger *slog.Logger
}

type callInfoKey struct{}

func callInfoFrom(ctx context.Context) *callInfo {
	ci, _ := ctx.Value(callInfoKey{}).(*callInfo)
	return ci
}

// RunID returns the runId of the tools/call whose handler context ctx is,
// or "".
func RunID(ctx context.Context) string {
	if ci := callInfoFrom(ctx); ci != nil {
		return ci.runID
	}
	return ""
}

// CorrelationID returns the correlationId of the tools/call whose handler
// context ctx is (client-supplied or generated), or "".
func CorrelationID(ctx context.Context) string {
	if ci := callInfoFrom(ctx); ci != nil {
		return ci.correlationID
	}
	return ""
}

// Logger returns the tool call's logger, already scoped with
// connectionCorrelationId, correlationId, runId and tool; outside a call it
// returns a logger that discards everything.
func Logger(ctx context.Context) *slog.Logger {
	if ci := callInfoFrom(ctx); ci != nil {
		ci.once.Do(func() {
			ci.logger = ci.session.log.With("correlationId", ci.correlationID, "runId", ci.runID, "tool", ci.tool)
		})
		return ci.logger
	}
	return slog.New(slog.DiscardHandler)
}

// SessionOf returns the session of the tools/call whose handler context
// ctx is (also in an AuditSink's Enter and Exit), or nil outside a call.
// Tools keep per-session state keyed by it and learn of the session's end
// from its Done channel.
func SessionOf(ctx context.Context) *Session {
	if ci := callInfoFrom(ctx); ci != nil {
		return ci.session
	}
	return nil
}
