package mcp

import (
	"context"
	"testing"
)

// TestWaitWithoutSlot: with one execution slot, a call waiting in
// WaitWithoutSlot holds none (another call runs), takes it back when the
// wait ends, and gives it back when it returns; outside a call it just
// runs the wait.
func TestWaitWithoutSlot(t *testing.T) {
	cfg := testConfig()
	cfg.Limits.MaxConcurrentExecutions = 1
	waiting, gate := make(chan struct{}), make(chan struct{})
	setup := func(s *Server) {
		for _, tl := range []Tool{
			{Name: "noop", Handler: func(context.Context, *CallToolRequest) (any, error) { return map[string]any{}, nil }},
			{Name: "longpoll", Handler: func(ctx context.Context, _ *CallToolRequest) (any, error) {
				err := WaitWithoutSlot(ctx, func(context.Context) error {
					waiting <- struct{}{}
					<-gate
					return nil
				})
				return map[string]any{"inUse": s.Stats().ConcurrentExecutions}, err
			}},
		} {
			if err := s.AddTool(tl); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := newTestClient(t, transportLines, cfg, Options{}, setup, Version20251125)
	c.send(`{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"longpoll"}}`)
	recv(t, waiting, "the long poll waiting")
	if n := c.srv.Stats().ConcurrentExecutions; n != 0 {
		t.Fatalf("%d slots in use while the call waits, want 0", n)
	}
	if res := c.call("1", "noop", ""); res["isError"] != false {
		t.Fatalf("noop beside a waiting call: %v", res)
	}
	close(gate)
	m := c.expect()
	res, _ := m["result"].(map[string]any)
	if sc, _ := res["structuredContent"].(map[string]any); sc == nil || sc["inUse"] != float64(1) {
		t.Fatalf("after the wait the call should hold its slot again: %v", m)
	}
	c.quiet()
	if n := c.srv.Stats().ConcurrentExecutions; n != 0 {
		t.Fatalf("%d slots in use after the call returned", n)
	}
	ran := false
	if err := WaitWithoutSlot(context.Background(), func(context.Context) error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("outside a call: ran %v, err %v", ran, err)
	}
}
