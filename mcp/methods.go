package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/mcprt/mcprt/jsonrpc"
)

// MCP method names served in RUNNING.
const (
	MethodToolsList        = "tools/list"
	MethodToolsCall        = "tools/call"
	NotifyToolsListChanged = "notifications/tools/list_changed"
	cursorPrefix           = "mcprt-tools:"
)

// registerMethods adds the MCP methods served in RUNNING.
func (sess *Session) registerMethods(r *jsonrpc.Router) {
	r.Handle(MethodToolsList, jsonrpc.Method{Inline: true, Handler: jsonrpc.HandlerFunc(sess.listTools)})
	r.Handle(MethodToolsCall, jsonrpc.Method{Handler: jsonrpc.HandlerFunc(sess.handleCall)})
}

// capabilities returns what the server advertises in initialize: exactly
// what is implemented.
func (s *Server) capabilities() capabilities {
	return capabilities{Tools: &listChanged{ListChanged: true}}
}

// notifyToolsChanged sends notifications/tools/list_changed to a running
// session.
func (sess *Session) notifyToolsChanged() {
	if sess.conn.State() != jsonrpc.StateRunning {
		return
	}
	if err := sess.conn.Notify(NotifyToolsListChanged, nil); err != nil {
		sess.log.Debug("could not send tools/list_changed", "error", err.Error())
	}
}

// listTools is tools/list (SPEC §7.2): admitted tools sorted by name, a
// page at a time.
func (sess *Session) listTools(_ context.Context, req *jsonrpc.Request) (any, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	after := ""
	if p.Cursor != nil {
		name, ok := decodeCursor(*p.Cursor)
		if !ok {
			return nil, invalidParams("invalid cursor " + quoteString(clip(*p.Cursor, 64)) +
				": pass the nextCursor of the previous tools/list result unchanged, or omit it for the first page")
		}
		after = name
	}
	version := sess.ProtocolVersion()
	tools := sess.srv.sortedTools()
	start := 0
	if after != "" {
		for start < len(tools) && tools[start].def.Name <= after {
			start++
		}
	}
	size := sess.srv.cfg.Tools.PageSize
	end := min(start+size, len(tools))
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i, rt := range tools[start:end] {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(rt.listing(version))
	}
	b.WriteByte(']')
	if end < len(tools) {
		b.WriteString(`,"nextCursor":`)
		b.WriteString(quoteString(encodeCursor(tools[end-1].def.Name)))
	}
	b.WriteByte('}')
	return json.RawMessage(b.String()), nil
}

func encodeCursor(name string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + name))
}

func decodeCursor(c string) (string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(raw), cursorPrefix) {
		return "", false
	}
	name := strings.TrimPrefix(string(raw), cursorPrefix)
	return name, validToolName(name)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
