package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcprt/mcprt/jsonrpc"
)

// What a tool handler gets: its request, its session and the client, and
// the ways back to the client (Notify, Call).

// seenRequest is what the inspect tool saw.
type seenRequest struct {
	sess         *Session
	name, args   string
	meta         string
	token        string
	hasToken     bool
	version      string
	caps         ClientCapabilities
	info         Implementation
	runID, cid   string
	ctxRun       string
	sessFromConn bool
}

func TestCallToolRequest(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		seen := make(chan seenRequest, 1)
		for _, v := range []string{Version20241105, Version20251125} {
			c := newTestClient(t, tr, testConfig(), Options{}, func(s *Server) {
				err := s.AddTool(Tool{Name: "inspect", Handler: func(ctx context.Context, req *CallToolRequest) (any, error) {
					tok, ok := req.Meta.ProgressToken()
					seen <- seenRequest{sess: req.Session, name: req.Name, args: string(req.Arguments), meta: string(req.Meta),
						token: string(tok), hasToken: ok, version: req.ProtocolVersion,
						caps: req.Session.ClientCapabilities(), info: req.Session.ClientInfo(),
						runID: req.RunID, cid: req.CorrelationID, ctxRun: RunID(ctx),
						sessFromConn: jsonrpc.ConnFromContext(ctx) == req.Session.conn}
					return "ok", nil
				}})
				if err != nil {
					t.Fatal(err)
				}
			}, "")
			caps := `{"roots":{"listChanged":true},"sampling":{},"experimental":{"x-test":{"on":true}}}`
			c.handshake(v, caps, `{"name":"inspector","title":"The Inspector","version":"3.1"}`)
			for i, tc := range []struct {
				meta, token string
				has         bool
			}{
				{`{"progressToken":"tok-1","correlationId":"c-1"}`, `"tok-1"`, true},
				{`{"progressToken":42}`, `42`, true},
				{`{"progressToken":-7}`, `-7`, true},
				{`{"progressToken":{"a":1}}`, ``, false},
				{`{"progressToken":null}`, ``, false},
				{`{}`, ``, false},
				{``, ``, false},
			} {
				params := `{"name":"inspect","arguments":{"k":1}`
				if tc.meta != "" {
					params += `,"_meta":` + tc.meta
				}
				m := c.request(itoa(i+1), MethodToolsCall, params+"}")
				if res, _ := m["result"].(map[string]any); res == nil || res["isError"] != false {
					t.Fatalf("%s: %v", params, m)
				}
				s := recv(t, seen, "the handler")
				if s.sess != c.sess || s.name != "inspect" || s.args != `{"k":1}` || s.meta != tc.meta {
					t.Errorf("%s: session %v name %q args %s meta %s", params, s.sess == c.sess, s.name, s.args, s.meta)
				}
				if s.hasToken != tc.has || s.token != tc.token {
					t.Errorf("%s: ProgressToken() = %s %v, want %s %v", params, s.token, s.hasToken, tc.token, tc.has)
				}
				if s.version != v || s.version != c.sess.ProtocolVersion() {
					t.Errorf("%s: ProtocolVersion %q, negotiated %q", params, s.version, v)
				}
				if s.runID == "" || s.runID != s.ctxRun || s.cid == "" || (i == 0 && s.cid != "c-1") {
					t.Errorf("%s: runId %q (context %q) correlationId %q", params, s.runID, s.ctxRun, s.cid)
				}
				if !s.sessFromConn {
					t.Errorf("%s: the handler's context is not its session's connection's", params)
				}
				if s.caps.Roots == nil || !s.caps.Roots.ListChanged || s.caps.Sampling == nil || s.caps.Elicitation != nil ||
					string(s.caps.Experimental["x-test"]) != `{"on":true}` || string(s.caps.Raw) != caps {
					t.Errorf("ClientCapabilities() = %+v (raw %s)", s.caps, s.caps.Raw)
				}
				if s.info != (Implementation{Name: "inspector", Title: "The Inspector", Version: "3.1"}) {
					t.Errorf("ClientInfo() = %+v", s.info)
				}
			}
		}
	})
}

// TestSessionNotifyFromHandler: a notification a handler sends reaches the
// client before the call's answer.
func TestSessionNotifyFromHandler(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		c := newTestClient(t, tr, testConfig(), Options{}, func(s *Server) {
			err := s.AddTool(Tool{Name: "progress", Handler: func(ctx context.Context, req *CallToolRequest) (any, error) {
				tok, ok := req.Meta.ProgressToken()
				if !ok {
					return nil, errors.New("no progress token")
				}
				for i := 1; i <= 2; i++ {
					if err := req.Session.Notify(ctx, "notifications/progress",
						map[string]any{"progressToken": tok, "progress": i, "total": 2}); err != nil {
						return nil, err
					}
				}
				return "done", nil
			}})
			if err != nil {
				t.Fatal(err)
			}
		}, Version20251125)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"p"}}}`)
		for i := 1; i <= 2; i++ {
			m := c.expect()
			p, _ := m["params"].(map[string]any)
			if m["method"] != "notifications/progress" || m["id"] != nil || p["progressToken"] != "p" || p["progress"] != float64(i) {
				t.Fatalf("notification %d: %v", i, m)
			}
		}
		if m := c.expect(); m["id"] != float64(1) || m["result"].(map[string]any)["isError"] != false {
			t.Fatalf("answer: %v", m)
		}
		// Once the session is closed, Notify says so.
		c.sess.Close()
		if err := c.sess.Notify(context.Background(), "notifications/message", nil); !errors.Is(err, jsonrpc.ErrClosed) {
			t.Fatalf("Notify after Close: %v, want ErrClosed", err)
		}
	})
}

// TestSessionCallToClient: a handler's request to the client gets the
// client's answer (a result or an error); when its context ends first the
// client is sent notifications/cancelled naming it.
func TestSessionCallToClient(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		cancelNow := make(chan struct{})
		callErr := make(chan error, 1)
		c := newTestClient(t, tr, testConfig(), Options{}, func(s *Server) {
			err := s.AddTool(Tool{Name: "roots", Handler: func(ctx context.Context, req *CallToolRequest) (any, error) {
				var out struct {
					Roots []struct {
						URI string `json:"uri"`
					} `json:"roots"`
				}
				if err := req.Session.Call(ctx, "roots/list", nil, &out); err != nil {
					return nil, err
				}
				return map[string]any{"first": out.Roots[0].URI}, nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			err = s.AddTool(Tool{Name: "abandon", Handler: func(ctx context.Context, req *CallToolRequest) (any, error) {
				cctx, cancel := context.WithCancel(ctx)
				go func() { <-cancelNow; cancel() }()
				err := req.Session.Call(cctx, "sampling/createMessage", map[string]any{"maxTokens": 1}, nil)
				callErr <- err
				return "abandoned", nil
			}})
			if err != nil {
				t.Fatal(err)
			}
		}, Version20251125)

		// A result.
		c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots"}}`)
		req := c.expect()
		if req["method"] != "roots/list" || req["id"] == nil {
			t.Fatalf("want a roots/list request, got %v", req)
		}
		id, _ := json.Marshal(req["id"])
		c.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"roots":[{"uri":"file:///w"}]}}`)
		m := c.expect()
		if m["id"] != float64(1) || m["result"].(map[string]any)["structuredContent"].(map[string]any)["first"] != "file:///w" {
			t.Fatalf("answer: %v", m)
		}
		// An error from the client is the handler's error.
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"roots"}}`)
		req = c.expect()
		id, _ = json.Marshal(req["id"])
		c.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32601,"message":"no roots here"}}`)
		e := toolError(t, c.expect()["result"].(map[string]any))
		if e == nil || e["code"] != "INTERNAL" {
			t.Fatalf("client error: %v", e)
		}

		// Abandoned: the client hears notifications/cancelled for its id.
		c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"abandon"}}`)
		req = c.expect()
		if req["method"] != "sampling/createMessage" || req["id"] == nil {
			t.Fatalf("want a sampling/createMessage request, got %v", req)
		}
		close(cancelNow)
		note := c.expect()
		p, _ := note["params"].(map[string]any)
		if note["method"] != NotifyCancelled || note["id"] != nil || p["requestId"] != req["id"] || p["reason"] == "" {
			t.Fatalf("want notifications/cancelled for %v, got %v", req["id"], note)
		}
		if err := recv(t, callErr, "Call's error"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Call returned %v, want context.Canceled", err)
		}
		if m := c.expect(); m["id"] != float64(3) || m["result"] == nil {
			t.Fatalf("answer after the abandoned call: %v", m)
		}
		// A late answer to the abandoned request is dropped.
		id, _ = json.Marshal(req["id"])
		c.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{}}`)
		c.quiet()
	})
}
