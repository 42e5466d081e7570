package mcp

import (
	"context"
	"strings"

	"github.com/mcprt/mcprt/jsonrpc"
)

// listTools is tools/list: the session's tools (see ToolSet) sorted by
// name, tools.pageSize at a time, each listed as the session's revision
// allows.
func (sess *Session) listTools(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	var keep func(*registeredTool) bool // nil: every tool, no copy
	if sess.tools != nil {
		keep = func(rt *registeredTool) bool { return sess.tools.Allows(rt.def.Name) }
	}
	tools, next, err := sess.srv.tools.pageOf(p.Cursor, sess.srv.opts.Limits.PageSize, keep)
	if err != nil {
		return nil, err
	}
	version := sess.versionFor(ctx)
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i, rt := range tools {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(rt.listing(version))
	}
	b.WriteByte(']')
	if next != "" {
		b.WriteString(`,"nextCursor":`)
		b.Write(mustJSON(next)) // never clipped: a cursor can be longer than jsontext.MaxEcho
	}
	b.WriteByte('}')
	return jsonrpc.CompactJSON(b.String()), nil
}
