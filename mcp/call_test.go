package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// recordingSink counts audit events and can refuse Enter.
type recordingSink struct {
	refuse atomic.Bool
	mu     sync.Mutex
	enters []ToolEnterEvent
	exits  []ToolExitEvent
}

func (s *recordingSink) Enter(_ context.Context, ev ToolEnterEvent) error {
	if s.refuse.Load() {
		return errors.New("disk full")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.enters = append(s.enters, ev)
	return nil
}

func (s *recordingSink) Exit(_ context.Context, ev ToolExitEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exits = append(s.exits, ev)
}

func (s *recordingSink) counts() (int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.enters), len(s.exits)
}

// fixture holds the tools that exercise every pipeline step and the
// channels the tests steer them with.
type fixture struct {
	gate    chan struct{} // releases block, stubborn and excl
	started chan string   // block, honest, stubborn and excl send their name when their handler starts
	causes  chan error    // block and honest send context.Cause of their cancelled context
	seen    atomic.Value  // what capture saw
}

func newFixture() *fixture {
	return &fixture{gate: make(chan struct{}), started: make(chan string, 64), causes: make(chan error, 64)}
}

func (f *fixture) setup(t *testing.T) func(*Server) {
	return func(s *Server) {
		add := func(tl Tool) {
			if err := s.AddTool(tl); err != nil {
				t.Fatal(err)
			}
		}
		ok := func(v any) ToolHandler {
			return func(context.Context, *CallToolRequest) (any, error) { return v, nil }
		}
		add(Tool{Name: "noop", Handler: ok(map[string]any{})})
		add(Tool{Name: "capture", Handler: func(ctx context.Context, req *CallToolRequest) (any, error) {
			f.seen.Store(string(req.Arguments) + "|" + RunID(ctx) + "|" + CorrelationID(ctx) + "|" +
				req.RunID + "|" + req.CorrelationID)
			return map[string]any{"ok": true}, nil
		}})
		add(Tool{Name: "typed", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"n":{"type":"integer","minimum":1},"s":{"type":"string"}},"required":["n"],"additionalProperties":false}`),
			Handler: ok(map[string]any{"ok": 1})})
		add(Tool{Name: "block", Handler: func(ctx context.Context, _ *CallToolRequest) (any, error) {
			f.started <- "block"
			select {
			case <-f.gate:
				return "released", nil
			case <-ctx.Done():
				f.causes <- context.Cause(ctx)
				return nil, context.Cause(ctx)
			}
		}})
		add(Tool{Name: "stubborn", Timeout: 50 * time.Millisecond,
			Handler: func(context.Context, *CallToolRequest) (any, error) {
				f.started <- "stubborn"
				<-f.gate
				return "late", nil
			}})
		add(Tool{Name: "excl", Exclusive: true, Timeout: 100 * time.Millisecond,
			Handler: func(context.Context, *CallToolRequest) (any, error) {
				f.started <- "excl"
				<-f.gate
				return map[string]any{}, nil
			}})
		add(Tool{Name: "honest", Timeout: 30 * time.Millisecond,
			Handler: func(ctx context.Context, _ *CallToolRequest) (any, error) {
				f.started <- "honest"
				<-ctx.Done()
				f.causes <- context.Cause(ctx)
				return nil, context.Cause(ctx)
			}})
		add(Tool{Name: "boom", Handler: func(context.Context, *CallToolRequest) (any, error) { panic("boom") }})
		add(Tool{Name: "oops", Handler: func(context.Context, *CallToolRequest) (any, error) {
			return nil, errors.New("disk on fire")
		}})
		add(Tool{Name: "domain", Handler: func(context.Context, *CallToolRequest) (any, error) {
			return nil, core.NewError("SESSION_NOT_FOUND", "no such session")
		}})
		add(Tool{Name: "nan", Handler: ok(math.NaN())})
		add(Tool{Name: "big", Handler: ok(strings.Repeat("x", 2000))})
		add(Tool{Name: "typedout", OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
			Handler: func(_ context.Context, req *CallToolRequest) (any, error) {
				if strings.Contains(string(req.Arguments), "bad") {
					return map[string]any{"n": "not a number"}, nil
				}
				return map[string]any{"n": 1}, nil
			}})
		add(Tool{Name: "full", Handler: ok(&CallToolResult{Content: []Content{TextContent("hi"), ImageContent("AAAA", "image/png")}})})
		add(Tool{Name: "guarded", InputSchema: json.RawMessage(`{"type":"object","required":["x"]}`),
			Authorize: func(_ context.Context, req *CallToolRequest) error {
				if req.Session == nil || req.Name != "guarded" || string(req.Arguments) != `{}` {
					return core.NewError(core.CodeInternal, "Authorize saw the wrong request")
				}
				return core.NewError(core.CodeUnauthorized, "not you")
			},
			Handler: ok(nil)})
		add(Tool{Name: "watch", Observer: true, Handler: func(context.Context, *CallToolRequest) (any, error) {
			return map[string]any{"inUse": s.Stats().ConcurrentExecutions}, nil
		}})
	}
}

func TestCallPipelineErrors(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		cfg := testConfig()
		cfg.Limits.MaxPayloadBytes = 64
		cfg.Limits.MaxResultBytes = 1000
		c := newTestClient(t, tr, cfg, Options{}, newFixture().setup(t), Version20251125)

		tests := []struct {
			name, tool, args string
			code             string
			retryable        bool   // by cause: a panic is, a payload over the limit is not
			detail           string // a substring of the error JSON
		}{
			{"payload over limit", "noop", `{"x":"` + strings.Repeat("a", 100) + `"}`, "RESOURCE_EXHAUSTED", false, `"reason":"payload_too_large"`},
			{"unknown tool", "nope", `{}`, "NOT_FOUND", false, `tools/list`},
			{"schema: missing required", "typed", `{}`, "INVALID_ARGUMENT", false, `"errors":[`},
			{"schema: wrong type at path", "typed", `{"n":"x"}`, "INVALID_ARGUMENT", false, `"path":"/n"`},
			{"schema: extra property", "typed", `{"n":1,"zz":1}`, "INVALID_ARGUMENT", false, `zz`},
			{"panic", "boom", `{}`, "INTERNAL", true, `"reason":"panic"`},
			{"handler error", "oops", `{}`, "INTERNAL", false, `disk on fire`},
			{"domain code kept", "domain", `{}`, "SESSION_NOT_FOUND", false, `no such session`},
			{"not serializable", "nan", `{}`, "INTERNAL", false, `result_not_serializable`},
			{"too large", "big", `{}`, "INTERNAL", false, `result_too_large`},
			{"output schema violation", "typedout", `{"bad":1}`, "INTERNAL", false, `output_schema_violation`},
			{"authorization before validation", "guarded", `{}`, "UNAUTHORIZED", false, `not you`},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := c.call(itoa(100+i), tt.tool, tt.args)
				e := toolError(t, res)
				if e == nil {
					t.Fatalf("expected a tool error, got %v", res)
				}
				if e["code"] != tt.code || e["retryable"] != tt.retryable {
					t.Errorf("got code %v retryable %v, want %s %v: %v", e["code"], e["retryable"], tt.code, tt.retryable, e)
				}
				if e["correlationId"] == "" || e["runId"] == "" || e["correlationId"] == nil || e["runId"] == nil {
					t.Errorf("missing ids: %v", e)
				}
				raw, _ := json.Marshal(e)
				if !strings.Contains(string(raw), tt.detail) {
					t.Errorf("error %s lacks %q", raw, tt.detail)
				}
			})
		}
		// The server kept serving after all that.
		if res := c.call("200", "noop", ""); res["isError"] != false {
			t.Fatalf("noop after errors: %v", res)
		}
	})
}

func TestCallParamsShape(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		c := newTestClient(t, tr, testConfig(), Options{}, newFixture().setup(t), Version20251125)
		for _, params := range []string{`{}`, `{"name":1}`, `{"name":"noop","arguments":[]}`,
			`{"name":"noop","arguments":"x"}`, `{"name":"noop","arguments":null}`, `{"name":"noop","_meta":1}`, `[]`} {
			m := c.request("1", MethodToolsCall, params)
			if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(-32602) {
				t.Errorf("params %s: got %v, want -32602", params, m)
			}
		}
		c.waitRecord(OutcomeProtocolError)
	})
}

func TestCallSuccessShapesAndIDs(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		for _, tc := range []struct {
			version    string
			structured bool
		}{{Version20251125, true}, {Version20250618, true}, {Version20250326, false}, {Version20241105, false}} {
			c := newTestClient(t, tr, testConfig(), Options{}, newFixture().setup(t), tc.version)
			res := c.call("1", "capture", `{"b":[1,2],"a":{"x":null}}`)
			if res["isError"] != false {
				t.Fatalf("%s: %v", tc.version, res)
			}
			text := res["content"].([]any)[0].(map[string]any)["text"]
			if text != `{"ok":true}` {
				t.Errorf("%s: text %v", tc.version, text)
			}
			if _, has := res["structuredContent"]; has != tc.structured {
				t.Errorf("%s: structuredContent present=%v want %v", tc.version, has, tc.structured)
			}
		}
		// Arguments arrive exactly as sent (compacted by nobody), without
		// _meta; the client's correlation id reaches the handler, through
		// its context and its request alike.
		f := newFixture()
		c := newTestClient(t, tr, testConfig(), Options{}, f.setup(t), Version20251125)
		c.request("2", MethodToolsCall, `{"name":"capture","arguments":{"z":1,"a":[true]},"_meta":{"correlationId":"cid-7"}}`)
		parts := strings.Split(f.seen.Load().(string), "|")
		if parts[0] != `{"z":1,"a":[true]}` || parts[1] == "" || parts[2] != "cid-7" || parts[3] != parts[1] || parts[4] != "cid-7" {
			t.Errorf("handler saw %q", parts)
		}
		rec := c.waitRecord(OutcomeSuccess)
		for _, k := range []string{"connectionCorrelationId", "correlationId", "runId", "tool", "durationMs", "payloadBytes"} {
			if _, ok := rec[k]; !ok {
				t.Errorf("record lacks %s: %v", k, rec)
			}
		}
		if _, ok := rec["arguments"]; ok {
			t.Error("record holds arguments")
		}
		// A handler's full result passes through.
		res := c.call("3", "full", "")
		content := res["content"].([]any)
		if len(content) != 2 || content[1].(map[string]any)["type"] != "image" {
			t.Errorf("full result: %v", res)
		}
	})
}
