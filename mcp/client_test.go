package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/jsonrpc"
)

// clientRequestKind is one kind of request the server sends the client.
type clientRequestKind struct {
	name    string
	version string
	caps    string // what the client must declare
	method  string
	call    func(ctx context.Context, sess *Session) (any, error)
	params  string // the params the client must get ("" for none)
	answer  string // the client's result
	want    string // the decoded result, as JSON
}

var float07 = 0.7

var clientRequestKinds = []clientRequestKind{
	{
		name: "ping", version: Version20241105, caps: `{}`, method: MethodPing,
		call:   func(ctx context.Context, s *Session) (any, error) { return "pong", s.Ping(ctx) },
		answer: `{}`, want: `"pong"`,
	},
	{
		name: "roots", version: Version20250618, caps: `{"roots":{}}`, method: MethodRootsList,
		call:   func(ctx context.Context, s *Session) (any, error) { return s.ListRoots(ctx) },
		answer: `{"roots":[{"uri":"file:///repo","name":"repo"},{"uri":"file:///tmp"}]}`,
		want:   `[{"uri":"file:///repo","name":"repo"},{"uri":"file:///tmp"}]`,
	},
	{
		name: "sampling", version: Version20250326, caps: `{"sampling":{}}`, method: MethodSamplingCreate,
		call: func(ctx context.Context, s *Session) (any, error) {
			return s.CreateMessage(ctx, CreateMessageParams{
				Messages:    []SamplingMessage{{Role: RoleUser, Content: TextContent("Say hi")}},
				MaxTokens:   20,
				Temperature: &float07,
				ModelPreferences: &ModelPreferences{Hints: []ModelHint{{Name: "claude"}},
					SpeedPriority: &float07},
			})
		},
		params: `{"messages":[{"role":"user","content":{"type":"text","text":"Say hi"}}],"maxTokens":20,` +
			`"temperature":0.7,"modelPreferences":{"hints":[{"name":"claude"}],"speedPriority":0.7}}`,
		answer: `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m1","stopReason":"endTurn"}`,
		want:   `{"role":"assistant","content":[{"type":"text","text":"hi"}],"model":"m1","stopReason":"endTurn"}`,
	},
	{
		name: "sampling array content", version: Version20251125, caps: `{"sampling":{}}`, method: MethodSamplingCreate,
		call: func(ctx context.Context, s *Session) (any, error) {
			return s.CreateMessage(ctx, CreateMessageParams{MaxTokens: 5,
				Messages: []SamplingMessage{{Role: RoleUser, Content: TextContent("two blocks")}}})
		},
		params: `{"messages":[{"role":"user","content":{"type":"text","text":"two blocks"}}],"maxTokens":5}`,
		answer: `{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"model":"m"}`,
		want:   `{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"model":"m"}`,
	},
	{
		name: "elicit form", version: Version20250618, caps: `{"elicitation":{}}`, method: MethodElicitationCreate,
		call: func(ctx context.Context, s *Session) (any, error) {
			return s.Elicit(ctx, ElicitParams{Message: "Your name?", URL: "https://ignored", RequestedSchema: json.RawMessage(
				`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
		},
		params: `{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`,
		answer: `{"action":"accept","content":{"name":"Ada"}}`,
		want:   `{"action":"accept","content":{"name":"Ada"}}`,
	},
	{
		name: "elicit form 2025-11-25", version: Version20251125, caps: `{"elicitation":{"form":{}}}`, method: MethodElicitationCreate,
		call: func(ctx context.Context, s *Session) (any, error) {
			return s.Elicit(ctx, ElicitParams{Message: "Age?", RequestedSchema: map[string]any{"type": "object",
				"properties": map[string]any{"age": map[string]any{"type": "integer"}}}})
		},
		params: `{"mode":"form","message":"Age?","requestedSchema":{"properties":{"age":{"type":"integer"}},"type":"object"}}`,
		answer: `{"action":"decline"}`,
		want:   `{"action":"decline"}`,
	},
	{
		name: "elicit url", version: Version20251125, caps: `{"elicitation":{"url":{}}}`, method: MethodElicitationCreate,
		call: func(ctx context.Context, s *Session) (any, error) {
			return s.Elicit(ctx, ElicitParams{Mode: ElicitURL, Message: "Sign in", URL: "https://example.com/login",
				ElicitationID: "e-1", RequestedSchema: map[string]any{"ignored": true}})
		},
		params: `{"mode":"url","message":"Sign in","url":"https://example.com/login","elicitationId":"e-1"}`,
		answer: `{"action":"accept"}`,
		want:   `{"action":"accept"}`,
	},
}

// askTool runs a kind's request from a tool handler and returns
// {result, error}; every outcome also goes to outcomes.
func askTool(k clientRequestKind, outcomes chan<- string) Tool {
	return handlerTool("ask", func(ctx context.Context, req *CallToolRequest) (any, error) {
		v, err := k.call(ctx, req.Session)
		out := map[string]any{"error": errorCodeOf(err)}
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			out["error"] = "jsonrpc:" + je.Message
		}
		if err == nil {
			out["result"] = v
		}
		js, _ := json.Marshal(out)
		outcomes <- string(js)
		return json.RawMessage(js), nil
	})
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return string(mustMarshalAny(x)) == string(mustMarshalAny(y))
}

func mustMarshalAny(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestClientRequests: each request the server sends the client is
// answered, refused at once without the capability, failed by the
// client's error, timed out (the client is then told it is cancelled) and
// cancelled with the tool call (the client is told too).
func TestClientRequests(t *testing.T) {
	for _, k := range clientRequestKinds {
		t.Run(k.name, func(t *testing.T) {
			for _, mode := range []string{"answered", "refused", "client error", "timed out", "cancelled"} {
				if mode == "refused" && k.method == MethodPing {
					continue // ping needs no capability
				}
				t.Run(mode, func(t *testing.T) { testClientRequest(t, k, mode) })
			}
		})
	}
}

func testClientRequest(t *testing.T, k clientRequestKind, mode string) {
	outcomes := make(chan string, 1)
	caps := k.caps
	if mode == "refused" {
		caps = `{}`
	}
	cfg := testConfig()
	cfg.Limits.ClientRequestTimeout = 1500 * time.Millisecond
	p := newPeer(t, peerOptions{version: k.version, caps: caps, cfg: &cfg, manual: true,
		tools: []Tool{askTool(k, outcomes)}})
	id := p.startCall("ask", "", "")
	if mode == "refused" {
		resp, before := p.untilResponse(id)
		if len(before) != 0 || !strings.Contains(resultText(t, resp), `"error":"NOT_IMPLEMENTED"`) {
			t.Errorf("sent %s; result %s", before, resultText(t, resp))
		}
		return
	}
	m, rid := p.expectRequest(k.method)
	gotParams := ""
	if m["params"] != nil {
		gotParams = string(mustMarshalAny(m["params"]))
	}
	if (k.params == "") != (gotParams == "") || (k.params != "" && !sameJSON(gotParams, k.params)) {
		t.Errorf("params %s\nwant   %s", gotParams, k.params)
	}
	wantCancel := func(why string) {
		t.Helper()
		params := p.expectNotification(NotifyCancelled)
		if got := string(mustMarshalAny(params["requestId"])); got != rid {
			t.Errorf("notifications/cancelled names %s, want %s", got, rid)
		}
		if r, _ := params["reason"].(string); !strings.Contains(r, why) {
			t.Errorf("reason %q, want it to say %q", r, why)
		}
	}
	switch mode {
	case "answered":
		p.reply(rid, k.answer)
		resp, _ := p.untilResponse(id)
		if want := `{"error":"","result":` + k.want + `}`; !sameJSON(resultText(t, resp), want) {
			t.Errorf("result %s\nwant   %s", resultText(t, resp), want)
		}
	case "client error":
		p.replyError(rid, -32603, "no LLM today")
		resp, _ := p.untilResponse(id)
		if got := resultText(t, resp); !strings.Contains(got, `"error":"jsonrpc:no LLM today"`) {
			t.Errorf("result %s", got)
		}
	case "timed out":
		p.clock.Advance(1499 * time.Millisecond)
		p.quiet()
		p.clock.Advance(time.Millisecond)
		wantCancel("did not answer " + k.method + " within 1500 ms")
		resp, _ := p.untilResponse(id)
		if got := resultText(t, resp); !strings.Contains(got, `"error":"TIMEOUT"`) {
			t.Errorf("result %s", got)
		}
		p.reply(rid, k.answer) // too late: dropped
		p.quiet()
	case "cancelled":
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)
		wantCancel("the server no longer needs the answer")
		if got := recv(t, outcomes, "the handler's outcome"); !strings.Contains(got, `"error":"ErrCancelled"`) {
			t.Errorf("outcome %s", got)
		}
		p.quiet() // the cancelled call gets no answer
	}
}

// TestClientRequestRefusals: what the client or the revision cannot take
// fails at once with a clear error, and nothing is sent.
func TestClientRequestRefusals(t *testing.T) {
	textMsg := []SamplingMessage{{Role: RoleUser, Content: TextContent("x")}}
	for _, tc := range []struct {
		name, version, caps string
		call                func(context.Context, *Session) error
		code, says          string
	}{
		{"elicit before 2025-06-18", Version20250326, `{"elicitation":{}}`, func(ctx context.Context, s *Session) error {
			_, err := s.Elicit(ctx, ElicitParams{Message: "m", RequestedSchema: map[string]any{}})
			return err
		}, "NOT_IMPLEMENTED", "exists from 2025-06-18"},
		{"elicit url under 2025-06-18", Version20250618, `{"elicitation":{"url":{}}}`, func(ctx context.Context, s *Session) error {
			_, err := s.Elicit(ctx, ElicitParams{Mode: ElicitURL, Message: "m", URL: "https://x", ElicitationID: "1"})
			return err
		}, "NOT_IMPLEMENTED", "url mode exists from revision 2025-11-25"},
		{"elicit url undeclared", Version20251125, `{"elicitation":{}}`, func(ctx context.Context, s *Session) error {
			_, err := s.Elicit(ctx, ElicitParams{Mode: ElicitURL, Message: "m", URL: "https://x", ElicitationID: "1"})
			return err
		}, "NOT_IMPLEMENTED", "elicitation.url capability"},
		{"elicit form with url only", Version20251125, `{"elicitation":{"url":{}}}`, func(ctx context.Context, s *Session) error {
			_, err := s.Elicit(ctx, ElicitParams{Message: "m", RequestedSchema: map[string]any{}})
			return err
		}, "NOT_IMPLEMENTED", "url mode only"},
		{"elicit form without schema", Version20250618, `{"elicitation":{}}`, func(ctx context.Context, s *Session) error {
			_, err := s.Elicit(ctx, ElicitParams{Message: "m"})
			return err
		}, "INVALID_ARGUMENT", "RequestedSchema"},
		{"elicit bad mode", Version20251125, `{"elicitation":{}}`, func(ctx context.Context, s *Session) error {
			_, err := s.Elicit(ctx, ElicitParams{Mode: "voice", Message: "m"})
			return err
		}, "INVALID_ARGUMENT", `not "voice"`},
		{"sampling no messages", Version20250618, `{"sampling":{}}`, func(ctx context.Context, s *Session) error {
			_, err := s.CreateMessage(ctx, CreateMessageParams{MaxTokens: 1})
			return err
		}, "INVALID_ARGUMENT", "Messages is empty"},
		{"sampling no tokens", Version20250618, `{"sampling":{}}`, func(ctx context.Context, s *Session) error {
			_, err := s.CreateMessage(ctx, CreateMessageParams{Messages: textMsg})
			return err
		}, "INVALID_ARGUMENT", "MaxTokens"},
		{"sampling resource link", Version20250618, `{"sampling":{}}`, func(ctx context.Context, s *Session) error {
			_, err := s.CreateMessage(ctx, CreateMessageParams{MaxTokens: 1,
				Messages: []SamplingMessage{{Role: RoleUser, Content: ResourceLinkContent("file:///a", "a")}}})
			return err
		}, "INVALID_ARGUMENT", "sampling takes text, image and audio"},
		{"sampling bad role", Version20250618, `{"sampling":{}}`, func(ctx context.Context, s *Session) error {
			_, err := s.CreateMessage(ctx, CreateMessageParams{MaxTokens: 1,
				Messages: []SamplingMessage{{Role: "system", Content: TextContent("x")}}})
			return err
		}, "INVALID_ARGUMENT", "use user or assistant"},
		{"sampling context undeclared", Version20251125, `{"sampling":{}}`, func(ctx context.Context, s *Session) error {
			_, err := s.CreateMessage(ctx, CreateMessageParams{MaxTokens: 1, Messages: textMsg, IncludeContext: IncludeAllServers})
			return err
		}, "NOT_IMPLEMENTED", "sampling.context"},
		{"sampling bad context", Version20250618, `{"sampling":{}}`, func(ctx context.Context, s *Session) error {
			_, err := s.CreateMessage(ctx, CreateMessageParams{MaxTokens: 1, Messages: textMsg, IncludeContext: "everything"})
			return err
		}, "INVALID_ARGUMENT", "includeContext"},
		{"roots undeclared", Version20250618, `{"sampling":{}}`, func(ctx context.Context, s *Session) error {
			_, err := s.ListRoots(ctx)
			return err
		}, "NOT_IMPLEMENTED", "roots capability"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan error, 1)
			tool := handlerTool("refuse", func(ctx context.Context, req *CallToolRequest) (any, error) {
				got <- tc.call(ctx, req.Session)
				return "ok", nil
			})
			p := newPeer(t, peerOptions{version: tc.version, caps: tc.caps, tools: []Tool{tool}})
			_, before := p.untilResponse(p.startCall("refuse", "", ""))
			err := recv(t, got, "the outcome")
			if errorCodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %v, want %s saying %q", err, tc.code, tc.says)
			}
			if len(before) != 0 {
				t.Errorf("sent %s", before)
			}
		})
	}
}

// TestClientRequestStates: requests wait for the running session (ping
// also while it initializes) and fail once it is closed.
func TestClientRequestStates(t *testing.T) {
	c := newTestClient(t, transportMemory, testConfig(), Options{}, nil, "")
	ctx := context.Background()
	if err := c.sess.Ping(ctx); errorCodeOf(err) != "NOT_INITIALIZED" {
		t.Errorf("Ping before initialize: %v", err)
	}
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	c.expect()
	if _, err := c.sess.ListRoots(ctx); errorCodeOf(err) != "NOT_INITIALIZED" {
		t.Errorf("ListRoots before initialized: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- c.sess.Ping(ctx) }()
	m := c.expect()
	if m["method"] != MethodPing {
		t.Fatalf("want ping, got %v", m)
	}
	id, _ := json.Marshal(m["id"])
	c.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{}}`)
	if err := recv(t, done, "Ping's answer"); err != nil {
		t.Errorf("Ping while initializing: %v", err)
	}
	c.sess.Close()
	if err := c.sess.Ping(ctx); err != ErrSessionClosed {
		t.Errorf("Ping after close: %v", err)
	}
}

// TestClientRequestCallerDeadline: the caller's deadline ends the wait
// when it is sooner than tools.clientRequestTimeoutMs; its cause is
// returned and the client is told.
func TestClientRequestCallerDeadline(t *testing.T) {
	p := newPeer(t, peerOptions{})
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.sess.Ping(ctx) }()
	_, rid := p.expectRequest(MethodPing)
	stop := errors.New("caller gave up")
	cancel(stop)
	if params := p.expectNotification(NotifyCancelled); string(mustMarshalAny(params["requestId"])) != rid {
		t.Errorf("cancelled %v, want %s", params, rid)
	}
	if err := recv(t, done, "Ping's end"); err != stop {
		t.Errorf("Ping: %v", err)
	}
}
