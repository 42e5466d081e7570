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

// fixtureTools registers tools that exercise every pipeline step.
func fixtureTools(t *testing.T, gate chan struct{}, seen *atomic.Value) func(*Server) {
	return func(s *Server) {
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(s.AddTool(Tool{Name: "noop", Handler: func(context.Context, json.RawMessage) (any, error) {
			return map[string]any{}, nil
		}}))
		must(s.AddTool(Tool{Name: "capture", Handler: func(ctx context.Context, args json.RawMessage) (any, error) {
			seen.Store(string(args) + "|" + RunID(ctx) + "|" + CorrelationID(ctx))
			return map[string]any{"ok": true}, nil
		}}))
		must(s.AddTool(Tool{Name: "typed", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"n":{"type":"integer","minimum":1},"s":{"type":"string"}},"required":["n"],"additionalProperties":false}`),
			Handler: func(context.Context, json.RawMessage) (any, error) { return map[string]any{"ok": 1}, nil }}))
		must(s.AddTool(Tool{Name: "block", Handler: func(ctx context.Context, _ json.RawMessage) (any, error) {
			select {
			case <-gate:
				return "released", nil
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}}))
		must(s.AddTool(Tool{Name: "stubborn", Timeout: 50 * time.Millisecond,
			Handler: func(context.Context, json.RawMessage) (any, error) { <-gate; return "late", nil }}))
		must(s.AddTool(Tool{Name: "excl", Exclusive: true, Timeout: 100 * time.Millisecond,
			Handler: func(context.Context, json.RawMessage) (any, error) { <-gate; return map[string]any{}, nil }}))
		must(s.AddTool(Tool{Name: "boom", Handler: func(context.Context, json.RawMessage) (any, error) { panic("boom") }}))
		must(s.AddTool(Tool{Name: "oops", Handler: func(context.Context, json.RawMessage) (any, error) {
			return nil, errors.New("disk on fire")
		}}))
		must(s.AddTool(Tool{Name: "domain", Handler: func(context.Context, json.RawMessage) (any, error) {
			return nil, core.NewError("SESSION_NOT_FOUND", "no such session")
		}}))
		must(s.AddTool(Tool{Name: "nan", Handler: func(context.Context, json.RawMessage) (any, error) { return math.NaN(), nil }}))
		must(s.AddTool(Tool{Name: "big", Handler: func(context.Context, json.RawMessage) (any, error) {
			return strings.Repeat("x", 2000), nil
		}}))
		must(s.AddTool(Tool{Name: "typedout", OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
			Handler: func(_ context.Context, args json.RawMessage) (any, error) {
				if strings.Contains(string(args), "bad") {
					return map[string]any{"n": "not a number"}, nil
				}
				return map[string]any{"n": 1}, nil
			}}))
		must(s.AddTool(Tool{Name: "full", Handler: func(context.Context, json.RawMessage) (any, error) {
			return &CallToolResult{Content: []Content{TextContent("hi"), ImageContent("AAAA", "image/png")}}, nil
		}}))
		must(s.AddTool(Tool{Name: "guarded", InputSchema: json.RawMessage(`{"type":"object","required":["x"]}`),
			Authorize: func(context.Context) error { return core.NewError(core.CodeUnauthorized, "not you") },
			Handler:   func(context.Context, json.RawMessage) (any, error) { return nil, nil }}))
		must(s.AddTool(Tool{Name: "watch", Observer: true, Handler: func(context.Context, json.RawMessage) (any, error) {
			return map[string]any{"inUse": s.Stats().ConcurrentExecutions}, nil
		}}))
	}
}

func TestCallPipelineErrors(t *testing.T) {
	cfg := testConfig()
	cfg.Tools.MaxPayloadBytes = 64
	cfg.Tools.MaxResultBytes = 1000
	var seen atomic.Value
	c := newTestClient(t, cfg, Options{}, fixtureTools(t, make(chan struct{}), &seen), Version20251125)

	tests := []struct {
		name, tool, args string
		code             string
		retryable        bool
		detail           string // a substring of the error JSON
	}{
		{"payload over limit", "noop", `{"x":"` + strings.Repeat("a", 100) + `"}`, "RESOURCE_EXHAUSTED", true, `"limit":64`},
		{"unknown tool", "nope", `{}`, "NOT_FOUND", false, `tools/list`},
		{"schema: missing required", "typed", `{}`, "INVALID_ARGUMENT", false, `"errors":[`},
		{"schema: wrong type at path", "typed", `{"n":"x"}`, "INVALID_ARGUMENT", false, `"path":"/n"`},
		{"schema: extra property", "typed", `{"n":1,"zz":1}`, "INVALID_ARGUMENT", false, `zz`},
		{"panic", "boom", `{}`, "INTERNAL", true, `panic`},
		{"handler error", "oops", `{}`, "INTERNAL", true, `disk on fire`},
		{"domain code kept", "domain", `{}`, "SESSION_NOT_FOUND", false, `no such session`},
		{"not serializable", "nan", `{}`, "INTERNAL", true, `result_not_serializable`},
		{"too large", "big", `{}`, "INTERNAL", true, `result_too_large`},
		{"output schema violation", "typedout", `{"bad":1}`, "INTERNAL", true, `output_schema_violation`},
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
}

func TestCallParamsShape(t *testing.T) {
	c := newTestClient(t, testConfig(), Options{}, fixtureTools(t, nil, new(atomic.Value)), Version20251125)
	for _, params := range []string{`{}`, `{"name":1}`, `{"name":"noop","arguments":[]}`,
		`{"name":"noop","arguments":"x"}`, `{"name":"noop","arguments":null}`, `{"name":"noop","_meta":1}`, `[]`} {
		c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`)
		m := c.expect()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32602) {
			t.Errorf("params %s: got %v, want -32602", params, m)
		}
	}
	c.waitRecord(OutcomeProtocolError)
}

func TestCallSuccessShapesAndIDs(t *testing.T) {
	var seen atomic.Value
	for _, tc := range []struct {
		version    string
		structured bool
	}{{Version20251125, true}, {Version20250618, true}, {Version20250326, false}, {Version20241105, false}} {
		c := newTestClient(t, testConfig(), Options{}, fixtureTools(t, nil, &seen), tc.version)
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
	// Arguments arrive exactly as sent (compacted by nobody), without _meta;
	// the client's correlation id reaches the handler.
	c := newTestClient(t, testConfig(), Options{}, fixtureTools(t, nil, &seen), Version20251125)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"capture","arguments":{"z":1,"a":[true]},"_meta":{"correlationId":"cid-7"}}}`)
	c.expect()
	parts := strings.Split(seen.Load().(string), "|")
	if parts[0] != `{"z":1,"a":[true]}` || parts[1] == "" || parts[2] != "cid-7" {
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
}

func TestSlotHeldAfterTimeout(t *testing.T) {
	cfg := testConfig()
	cfg.Resources.MaxConcurrentExecutions = 1
	gate := make(chan struct{})
	c := newTestClient(t, cfg, Options{}, fixtureTools(t, gate, new(atomic.Value)), Version20251125)
	res := c.call("1", "stubborn", "")
	if e := toolError(t, res); e == nil || e["code"] != "TIMEOUT" || e["retryable"] != true {
		t.Fatalf("want TIMEOUT, got %v", res)
	}
	c.waitRecord(OutcomeTimeout)
	// The stubborn handler still runs: the slot is held.
	if e := toolError(t, c.call("2", "noop", "")); e == nil || e["code"] != "RESOURCE_EXHAUSTED" {
		t.Fatalf("want RESOURCE_EXHAUSTED while the late handler holds the slot, got %v", e)
	}
	// Observers answer while saturated.
	if res := c.call("3", "watch", ""); res["isError"] != false {
		t.Fatalf("observer: %v", res)
	}
	if got := c.srv.Stats().ConsecutiveExhausted; got != 1 {
		t.Errorf("ConsecutiveExhausted = %d, want 1 (observers neither raise nor reset it)", got)
	}
	close(gate)
	c.waitRecord(OutcomeLateCompleted)
	c.silence(50 * time.Millisecond) // no second response
	if res := c.call("4", "noop", ""); res["isError"] != false {
		t.Fatalf("noop after release: %v", res)
	}
	if got := c.srv.Stats().ConsecutiveExhausted; got != 0 {
		t.Errorf("ConsecutiveExhausted = %d after a completed call, want 0", got)
	}
}

func TestCancelAndDisconnect(t *testing.T) {
	gate := make(chan struct{})
	c := newTestClient(t, testConfig(), Options{}, fixtureTools(t, gate, new(atomic.Value)), Version20251125)
	c.send(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"block"}}`)
	waitFor(t, func() bool { return c.srv.Stats().ConcurrentExecutions == 1 })
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"user"}}`)
	c.waitRecord(OutcomeAborted)
	c.silence(50 * time.Millisecond)
	waitFor(t, func() bool { return c.srv.Stats().ConcurrentExecutions == 0 })

	c.send(`{"jsonrpc":"2.0","id":"c2","method":"tools/call","params":{"name":"block"}}`)
	waitFor(t, func() bool { return c.srv.Stats().ConcurrentExecutions == 1 })
	c.sess.Close()
	c.waitRecord(OutcomeDisconnectedCompleted)
}

func TestExclusiveAndAudit(t *testing.T) {
	gate := make(chan struct{})
	sink := &recordingSink{}
	c := newTestClient(t, testConfig(), Options{Audit: sink}, fixtureTools(t, gate, new(atomic.Value)), Version20251125)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"excl"}}`)
	waitFor(t, func() bool { n, _ := sink.counts(); return n == 1 })
	// A second exclusive call waits for the lock and times out waiting.
	// Both calls time out (call 1 holds the lock past its deadline); pick
	// call 2's answer by id.
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"excl"}}`)
	var e2 map[string]any
	for seen := 0; seen < 2; seen++ { // the answers to calls 1 and 2, in either order
		m := c.expect()
		if m["id"] == float64(2) {
			e2 = toolError(t, m["result"].(map[string]any))
		}
	}
	if e2["code"] != "TIMEOUT" {
		t.Fatalf("want TIMEOUT waiting for the lock, got %v", e2)
	}
	if n, _ := sink.counts(); n != 1 {
		t.Fatalf("audit enter ran for a call that never got the lock")
	}
	// The lock wait that timed out still gets both records of a timed-out
	// call: timeout, then late_completed.
	waitFor(t, func() bool {
		var seq []string
		for _, r := range c.logBuf.records() {
			if r["runId"] == e2["runId"] {
				seq = append(seq, r["outcome"].(string))
			}
		}
		return strings.Join(seq, ",") == "timeout,late_completed"
	})
	close(gate)
	waitFor(t, func() bool { n, x := sink.counts(); return n == x })

	sink.refuse.Store(true)
	if e := toolError(t, c.call("3", "noop", "")); e == nil || e["code"] != "AUDIT_ENTER_FAILED" || e["retryable"] != true {
		t.Fatalf("want AUDIT_ENTER_FAILED, got %v", e)
	}
	if n, x := sink.counts(); n != x {
		t.Fatalf("enter/exit unpaired: %d/%d", n, x)
	}
	if c.srv.Stats().ConcurrentExecutions != 0 {
		t.Fatal("slot leaked after audit failure")
	}
}

func TestListChangedAndToolsList(t *testing.T) {
	c := newTestClient(t, testConfig(), Options{}, fixtureTools(t, nil, new(atomic.Value)), Version20250618)
	if err := c.srv.AddTool(Tool{Name: "added", Title: "Added", Version: "1.2",
		Handler: func(context.Context, json.RawMessage) (any, error) { return nil, nil }}); err != nil {
		t.Fatal(err)
	}
	if m := c.expect(); m["method"] != NotifyToolsListChanged {
		t.Fatalf("want list_changed, got %v", m)
	}
	if err := c.srv.AddTool(Tool{Name: "added", Handler: func(context.Context, json.RawMessage) (any, error) { return nil, nil }}); err == nil {
		t.Fatal("duplicate accepted")
	}
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	tools := c.expect()["result"].(map[string]any)["tools"].([]any)
	var names []string
	for _, tl := range tools {
		m := tl.(map[string]any)
		names = append(names, m["name"].(string))
		if m["name"] == "added" && (m["title"] != "Added" || m["version"] != "1.2") {
			t.Errorf("listing of added: %v", m)
		}
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Fatalf("not sorted: %v", names)
		}
	}
	if err := c.srv.RemoveTool("added"); err != nil {
		t.Fatal(err)
	}
	if m := c.expect(); m["method"] != NotifyToolsListChanged {
		t.Fatalf("want list_changed after remove, got %v", m)
	}
}

func TestToolsListPagination(t *testing.T) {
	cfg := testConfig()
	cfg.Tools.PageSize = 4
	c := newTestClient(t, cfg, Options{}, fixtureTools(t, nil, new(atomic.Value)), Version20251125)
	var all []string
	cursor := ""
	for page := 0; page < 20; page++ {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":` + quoteString(cursor) + `}`
		}
		c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":` + params + `}`)
		res := c.expect()["result"].(map[string]any)
		tools := res["tools"].([]any)
		if len(tools) > 4 {
			t.Fatalf("page of %d", len(tools))
		}
		for _, tl := range tools {
			all = append(all, tl.(map[string]any)["name"].(string))
		}
		next, ok := res["nextCursor"].(string)
		if !ok {
			break
		}
		cursor = next
	}
	if len(all) != len(c.srv.sortedTools()) {
		t.Fatalf("paged %d tools, registered %d", len(all), len(c.srv.sortedTools()))
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"garbage!"}}`)
	if e := c.expect()["error"].(map[string]any); e["code"] != float64(-32602) {
		t.Fatalf("invalid cursor: %v", e)
	}
}

func TestRegistrationRules(t *testing.T) {
	srv, err := NewServer(Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
	bad := []Tool{
		{Name: "", Handler: h},
		{Name: strings.Repeat("a", 129), Handler: h},
		{Name: "sp ace", Handler: h},
		{Name: "nohandler"},
		{Name: "arr", Handler: h, InputSchema: json.RawMessage(`{"type":"array"}`)},
		{Name: "notype", Handler: h, InputSchema: json.RawMessage(`{"properties":{}}`)},
		{Name: "dialect", Handler: h, InputSchema: json.RawMessage(`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`)},
		{Name: "netref", Handler: h, InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"http://127.0.0.1:1/x.json"}}}`)},
		{Name: "badout", Handler: h, OutputSchema: json.RawMessage(`{"type":"string"}`)},
	}
	for _, tl := range bad {
		err := srv.AddTool(tl)
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Code != core.CodeInvalidArgument {
			t.Errorf("AddTool(%q): got %v, want INVALID_ARGUMENT", clip(tl.Name, 20), err)
		}
	}
	good := Tool{Name: "A-z_0.9", Handler: h, InputSchema: json.RawMessage(
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"x":{"type":"string"}},"properties":{"x":{"$ref":"#/definitions/x"}}}`)}
	if err := srv.AddTool(good); err != nil {
		t.Fatalf("draft-07 tool: %v", err)
	}
	if got := string(srv.tool("A-z_0.9").inRaw); !strings.Contains(got, `"$schema":"http://json-schema.org/draft-07/schema#"`) {
		t.Errorf("listed schema changed: %s", got)
	}
}

func TestModesAdmission(t *testing.T) {
	h := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
	ro := &ToolAnnotations{ReadOnlyHint: Bool(true)}
	for _, tc := range []struct {
		mode string
		want string
	}{
		{core.ModeFull, "health,reader,server_ping,writer"},
		{core.ModeTest, "health,reader,server_ping,writer"},
		{core.ModeReadOnly, "health,reader,server_ping"},
		{core.ModeMinimal, "health,server_ping"},
	} {
		cfg := testConfig()
		cfg.Server.Mode = tc.mode
		srv, err := NewServer(Options{Config: &cfg})
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range []Tool{{Name: "server_ping", Annotations: ro, Handler: h}, {Name: "health", Annotations: ro, Handler: h},
			{Name: "reader", Annotations: ro, Handler: h}, {Name: "writer", Handler: h}} {
			if err := srv.AddTool(tl); err != nil {
				t.Fatal(err)
			}
		}
		var names []string
		for _, rt := range srv.sortedTools() {
			names = append(names, rt.def.Name)
		}
		if got := strings.Join(names, ","); got != tc.want {
			t.Errorf("mode %s: %s, want %s", tc.mode, got, tc.want)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}
