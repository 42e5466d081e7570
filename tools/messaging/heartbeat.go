package messaging

import (
	"context"

	"github.com/mcprt/mcprt/mcp"
)

// AuditSink returns an mcp.AuditSink that counts every tools/call of a
// session with an agent identity as that agent's heartbeat, then passes
// the call on to next (nil: nothing more). The heartbeat touches memory
// only; the disk is written at most once a second per agent, off the
// call's path.
func (s *Service) AuditSink(next mcp.AuditSink) mcp.AuditSink {
	if next == nil {
		next = mcp.NopAuditSink{}
	}
	return heartbeatSink{s: s, next: next}
}

type heartbeatSink struct {
	s    *Service
	next mcp.AuditSink
}

func (h heartbeatSink) Enter(ctx context.Context, ev mcp.ToolEnterEvent) error {
	h.s.Heartbeat(ctx)
	return h.next.Enter(ctx, ev)
}

func (h heartbeatSink) Exit(ctx context.Context, ev mcp.ToolExitEvent) { h.next.Exit(ctx, ev) }
