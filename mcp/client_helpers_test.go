package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// Helpers of the client logging, progress, server→client request and
// content tests: a test client over the in-memory transport that sees the
// server's notifications and requests and answers them.

// peer is a testClient with the helpers these tests need.
type peer struct {
	*testClient
	clock *core.ManualClock // the server's clock (nil: the system clock)
	seq   int
}

// peerOptions configure newPeer.
type peerOptions struct {
	version string // "" means LatestVersion
	caps    string // the client's capabilities ("" means {})
	cfg     *Options
	manual  bool // drive the server's clock by hand
	tools   []Tool
}

// newPeer starts a server with the tools and a session over the memory
// transport, and completes the handshake.
func newPeer(t *testing.T, o peerOptions) *peer {
	t.Helper()
	cfg := testConfig()
	if o.cfg != nil {
		cfg = *o.cfg
	}
	var opts Options
	p := &peer{}
	if o.manual {
		p.clock = core.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		opts.Clock = p.clock
	}
	setup := func(s *Server) {
		for _, tool := range o.tools {
			if err := s.AddTool(tool); err != nil {
				t.Fatal(err)
			}
		}
	}
	p.testClient = newTestClient(t, transportMemory, cfg, opts, setup, "")
	if o.version == "" {
		o.version = LatestVersion
	}
	if o.caps == "" {
		o.caps = `{}`
	}
	p.handshake(o.version, o.caps, `{"name":"peer","version":"1"}`)
	return p
}

// startCall sends tools/call and returns its id (JSON text).
func (p *peer) startCall(name, args, meta string) string {
	p.t.Helper()
	p.seq++
	id := `"call-` + strconv.Itoa(p.seq) + `"`
	params := `{"name":` + quoteString(name)
	if args != "" {
		params += `,"arguments":` + args
	}
	if meta != "" {
		params += `,"_meta":` + meta
	}
	p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}}`)
	return id
}

// next returns the next message and its raw form.
func (p *peer) next() (map[string]any, json.RawMessage) {
	p.t.Helper()
	raw := p.expectRaw()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		p.t.Fatalf("not an object: %s", raw)
	}
	return m, raw
}

// untilResponse collects the messages up to the response to id, which it
// returns with them.
func (p *peer) untilResponse(id string) (resp map[string]any, before []json.RawMessage) {
	p.t.Helper()
	for {
		m, raw := p.next()
		if got, _ := json.Marshal(m["id"]); m["method"] == nil && string(got) == id {
			return m, before
		}
		before = append(before, raw)
	}
}

// expectRequest returns the next message, which must be a request of
// method from the server, and its id as JSON text.
func (p *peer) expectRequest(method string) (map[string]any, string) {
	p.t.Helper()
	m, raw := p.next()
	if m["method"] != method || m["id"] == nil {
		p.t.Fatalf("want a %s request from the server, got %s", method, raw)
	}
	id, _ := json.Marshal(m["id"])
	return m, string(id)
}

// expectNotification returns the params of the next message, which must
// be a notification of method.
func (p *peer) expectNotification(method string) map[string]any {
	p.t.Helper()
	m, raw := p.next()
	if m["method"] != method || m["id"] != nil {
		p.t.Fatalf("want a %s notification, got %s", method, raw)
	}
	params, _ := m["params"].(map[string]any)
	return params
}

// reply answers the server's request id with result (JSON text).
func (p *peer) reply(id, result string) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}`)
}

// replyError answers the server's request id with a JSON-RPC error.
func (p *peer) replyError(id string, code int, msg string) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":` + strconv.Itoa(code) + `,"message":` + quoteString(msg) + `}}`)
}

// resultText returns the text of a tools/call response's first block.
func resultText(t *testing.T, resp map[string]any) string {
	t.Helper()
	res, ok := resp["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", resp)
	}
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("no content: %v", resp)
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	return text
}

// errorCodeOf names an error for the tests: its core code, "jsonrpc:N",
// a sentinel's name, or its text.
func errorCodeOf(err error) string {
	var ce *core.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ce):
		return string(ce.Code)
	case errors.Is(err, ErrNoProgressToken):
		return "ErrNoProgressToken"
	case errors.Is(err, ErrProgressEnded):
		return "ErrProgressEnded"
	case errors.Is(err, ErrLogDropped):
		return "ErrLogDropped"
	case errors.Is(err, ErrSessionClosed):
		return "ErrSessionClosed"
	case errors.Is(err, ErrCancelled):
		return "ErrCancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "DeadlineExceeded"
	}
	return err.Error()
}

// handlerTool is a tool whose handler is f.
func handlerTool(name string, f ToolHandler) Tool {
	return Tool{Name: name, Handler: f}
}
