package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
)

// TestWrapResultLimit: the limit applies to the encoded CallToolResult,
// exactly, for plain results, structured results and full results; a
// result over it is INTERNAL result_too_large with the limit, not
// retryable.
func TestWrapResultLimit(t *testing.T) {
	forEachTransport(t, testWrapResultLimit)
}

func testWrapResultLimit(t *testing.T, tr transportKind) {
	const limit = 1000
	cfg := testConfig()
	cfg.Limits.MaxResultBytes = limit
	var n int // the size the next call's result is made to have
	c := newTestClient(t, transportMemory, cfg, Options{}, func(s *Server) {
		for name, h := range map[string]ToolHandler{
			"str": func(context.Context, *CallToolRequest) (any, error) { return strings.Repeat("x", n), nil },
			"obj": func(context.Context, *CallToolRequest) (any, error) {
				return map[string]string{"s": strings.Repeat("é", n)}, nil
			},
			"full": func(context.Context, *CallToolRequest) (any, error) {
				return &CallToolResult{Content: []Content{TextContent(strings.Repeat("\n", n))}}, nil
			},
		} {
			if err := s.AddTool(Tool{Name: name, Handler: h}); err != nil {
				t.Fatal(err)
			}
		}
	}, Version20251125)
	// size returns the wire size of the result for n, or 0 for a tool error.
	size := func(tool string) (int, map[string]any) {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q}}`, tool))
		m := c.expect()
		res, _ := json.Marshal(m["result"])
		if r, _ := m["result"].(map[string]any); r["isError"] == true {
			return 0, toolError(t, r)
		}
		return len(res), nil
	}
	for _, tool := range []string{"str", "obj", "full"} {
		n = 10
		small, _ := size(tool)
		n = 20
		larger, _ := size(tool)
		per := (larger - small) / 10 // bytes per unit of n
		// The largest n that fits, then one more.
		n = 10 + (limit-small)/per
		if got, _ := size(tool); got > limit || got <= limit-per {
			t.Fatalf("%s: n=%d gives %d bytes, want the largest size up to %d", tool, n, got, limit)
		}
		n++
		got, e := size(tool)
		if got != 0 || e["code"] != "INTERNAL" {
			t.Fatalf("%s: one more unit: size %d, error %v", tool, got, e)
		}
		d, _ := e["details"].(map[string]any)
		if d["reason"] != "result_too_large" || d["limit"] != float64(limit) || e["retryable"] != false {
			t.Errorf("%s: details %v", tool, d)
		}
	}
}

// TestWrapHugeResultMemory: a 64 MiB result under a 1 MiB limit fails
// having allocated about the limit, not the result (before: the result
// encoded whole, several times over).
func TestWrapHugeResultMemory(t *testing.T) {
	forEachTransport(t, testWrapHugeResultMemory)
}

func testWrapHugeResultMemory(t *testing.T, tr transportKind) {
	const limit = 1 << 20
	cfg := testConfig()
	cfg.Limits.MaxResultBytes = limit
	huge := strings.Repeat("x", 64<<20)
	c := newTestClient(t, transportMemory, cfg, Options{}, func(s *Server) {
		for name, v := range map[string]any{"str": huge, "obj": map[string]any{"s": huge}, "full": &CallToolResult{
			Content: []Content{TextContent("x")}, StructuredContent: map[string]any{"s": huge}}} {
			if err := s.AddTool(Tool{Name: name, Handler: func(context.Context, *CallToolRequest) (any, error) { return v, nil }}); err != nil {
				t.Fatal(err)
			}
		}
	}, Version20251125)
	for _, tool := range []string{"str", "obj", "full"} {
		var res map[string]any
		bytes, _ := allocation(func() { res = c.call("1", tool, `{}`) })
		if e := toolError(t, res); e == nil || !strings.Contains(fmt.Sprint(e["details"]), "result_too_large") {
			t.Fatalf("%s: got %v", tool, res)
		}
		if bytes > 4*limit {
			t.Errorf("%s: the call allocated %d bytes under a limit of %d", tool, bytes, limit)
		}
	}
}

// TestResultErrorsNotRetryable: the same call would return the same result.
func TestResultErrorsNotRetryable(t *testing.T) {
	for name, e := range map[string]*core.Error{
		"too large":        resultTooLarge(10, 0),
		"too large, sized": resultTooLarge(10, 11),
		"not serializable": resultEncodingError("result", errors.New("json: unsupported value: NaN"), 10, 0),
		"over the limit":   resultEncodingError("result", errOverLimit, 10, 0),
	} {
		if e.Retryable || e.Code != core.CodeInternal || e.Details["reason"] == nil {
			t.Errorf("%s: %+v", name, e)
		}
		if strings.Contains(name, "large") || name == "over the limit" {
			if e.Details["reason"] != "result_too_large" || e.Details["limit"] != 10 {
				t.Errorf("%s: details %v", name, e.Details)
			}
		}
	}
}
