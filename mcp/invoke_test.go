package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// invokeServer is a server with the tools InvokeTool is tested on.
func invokeServer(t *testing.T) (*Server, *core.ManualClock) {
	t.Helper()
	cfg := testConfig()
	cfg.Limits.MaxPayloadBytes = 1024
	clock := core.NewManualClock(time.Unix(0, 0))
	srv, err := NewServer(withConfig(Options{Clock: clock}, cfg))
	if err != nil {
		t.Fatal(err)
	}
	type in struct {
		N int `json:"n" jsonschema:"a number"`
	}
	type out struct {
		Double int    `json:"double"`
		CID    string `json:"cid"`
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(AddTypedTool(srv, Tool{Name: "double"}, func(_ context.Context, req *CallToolRequest, i in) (out, error) {
		return out{Double: 2 * i.N, CID: req.CorrelationID}, nil
	}))
	must(srv.AddTool(Tool{Name: "text", Handler: func(context.Context, *CallToolRequest) (any, error) { return "plain", nil }}))
	must(srv.AddTool(Tool{Name: "full", Handler: func(context.Context, *CallToolRequest) (any, error) {
		return &CallToolResult{Content: []Content{TextContent("hi")}, StructuredContent: map[string]any{"k": 1}}, nil
	}}))
	must(srv.AddTool(Tool{Name: "blocks", Handler: func(context.Context, *CallToolRequest) (any, error) {
		return &CallToolResult{Content: []Content{TextContent("only text")}}, nil
	}}))
	must(srv.AddTool(Tool{Name: "iserror", Handler: func(context.Context, *CallToolRequest) (any, error) {
		return &CallToolResult{Content: []Content{TextContent(`{"code":"QUOTA_EXCEEDED","message":"no more","retryable":false}`)}, IsError: true}, nil
	}}))
	must(srv.AddTool(Tool{Name: "fails", Handler: func(context.Context, *CallToolRequest) (any, error) {
		return nil, errors.New("plain failure")
	}}))
	must(srv.AddTool(Tool{Name: "panics", Handler: func(context.Context, *CallToolRequest) (any, error) { panic("kaboom") }}))
	must(srv.AddTool(Tool{Name: "badout", OutputSchema: json.RawMessage(`{"type":"object","required":["x"]}`),
		Handler: func(context.Context, *CallToolRequest) (any, error) { return map[string]int{"y": 1}, nil }}))
	must(srv.AddTool(Tool{Name: "denied", Handler: func(context.Context, *CallToolRequest) (any, error) { return "ran", nil },
		Authorize: func(context.Context, *CallToolRequest) error { return core.NewError(core.CodeUnauthorized, "not you") }}))
	must(srv.AddTool(Tool{Name: "slow", Timeout: time.Second, Handler: func(ctx context.Context, _ *CallToolRequest) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}))
	return srv, clock
}

func TestInvokeTool(t *testing.T) {
	srv, _ := invokeServer(t)
	ctx := WithCorrelationID(context.Background(), "T/step")
	tests := []struct {
		name, tool, args, want string
		code                   core.Code
	}{
		{"typed", "double", `{"n":21}`, `{"double":42,"cid":"T/step"}`, ""},
		{"string", "text", ``, `"plain"`, ""},
		{"structured", "full", `{}`, `{"k":1}`, ""},
		{"content only", "blocks", `{}`, `{"content":[{"type":"text","text":"only text"}],"isError":false}`, ""},
		{"unknown", "nope", `{}`, "unknown tool", core.CodeNotFound},
		{"schema", "double", `{"n":"x"}`, "do not match the inputSchema", core.CodeInvalidArgument},
		{"not an object", "double", `[1]`, "must be a JSON object", core.CodeInvalidArgument},
		{"too large", "double", `{"pad":"` + strings.Repeat("x", 2000) + `"}`, "tools.maxPayloadBytes", core.CodeResourceExhausted},
		{"authorize", "denied", `{}`, "not you", core.CodeUnauthorized},
		{"isError result", "iserror", `{}`, "no more", "QUOTA_EXCEEDED"},
		{"plain error", "fails", `{}`, "plain failure", core.CodeInternal},
		{"panic", "panics", `{}`, "panicked", core.CodeInternal},
		{"output schema", "badout", `{}`, "outputSchema", core.CodeInternal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var args json.RawMessage
			if tc.args != "" {
				args = json.RawMessage(tc.args)
			}
			out, err := srv.InvokeTool(ctx, tc.tool, args)
			if tc.code == "" {
				if err != nil || string(out) != tc.want {
					t.Fatalf("got %s, %v; want %s", out, err, tc.want)
				}
				return
			}
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Code != tc.code || !strings.Contains(ce.Message, tc.want) {
				t.Fatalf("got %s, %v; want a %s error saying %q", out, err, tc.code, tc.want)
			}
		})
	}
}

func TestInvokeToolDeadlineAndCancel(t *testing.T) {
	srv, clock := invokeServer(t)
	done := make(chan error, 1)
	go func() {
		_, err := srv.InvokeTool(context.Background(), "slow", nil)
		done <- err
	}()
	if err := clock.WaitForTimers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := <-done; core.AsError(err).Code != core.CodeTimeout || core.AsError(err).Details["timeoutMs"] != int64(1000) {
		t.Fatalf("deadline: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, err := srv.InvokeTool(ctx, "slow", nil)
		done <- err
	}()
	if err := clock.WaitForTimers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || core.AsError(err).Code != core.CodeInternal {
		t.Fatalf("cancel: %v", err)
	}
}
