package mcp

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// slotServer is a server with slots execution slots and a tool "stuck"
// whose handler ignores its context: it returns only when release closes.
func slotServer(t *testing.T, slots int) (srv *Server, clock *core.ManualClock, running *atomic.Int32, release chan struct{}) {
	t.Helper()
	clock = core.NewManualClock(time.Unix(0, 0))
	srv, err := NewServer(Options{Limits: Limits{MaxConcurrentExecutions: slots}, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	running, release = new(atomic.Int32), make(chan struct{})
	if err := srv.AddTool(Tool{Name: "stuck", Timeout: time.Second, Handler: func(context.Context, *CallToolRequest) (any, error) {
		running.Add(1)
		defer running.Add(-1)
		<-release
		return "done", nil
	}}); err != nil {
		t.Fatal(err)
	}
	err = srv.AddTool(Tool{Name: "outer", Handler: func(ctx context.Context, _ *CallToolRequest) (any, error) {
		out, err := srv.InvokeTool(ctx, "inner", nil)
		return string(out), err
	}})
	if err == nil {
		err = srv.AddTool(Tool{Name: "inner", Handler: func(context.Context, *CallToolRequest) (any, error) { return "in", nil }})
	}
	if err != nil {
		t.Fatal(err)
	}
	return srv, clock, running, release
}

// waitFor checks cond on every tick until it holds, for at most 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	limit := time.After(10 * time.Second)
	for !cond() {
		select {
		case <-tick.C:
		case <-limit:
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}

// Repeated timeouts of a handler that ignores its context leave at most
// as many detached runs as there are slots: each keeps its slot until it
// returns, and further calls are refused at once instead of piling up.
func TestInvokeToolDetachedRunsHoldSlots(t *testing.T) {
	const slots = 2
	srv, clock, running, release := slotServer(t, slots)
	ctx := context.Background()
	for i := range slots {
		done := make(chan error, 1)
		go func() {
			_, err := srv.InvokeTool(ctx, "stuck", nil)
			done <- err
		}()
		waitFor(t, "the handler to run", func() bool { return running.Load() == int32(i+1) })
		if err := clock.WaitForTimers(ctx, 1); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
		if err := <-done; core.AsError(err).Code != core.CodeTimeout {
			t.Fatalf("call %d: %v, want TIMEOUT", i, err)
		}
	}
	for i := range 10 {
		_, err := srv.InvokeTool(ctx, "stuck", nil)
		if core.AsError(err).Code != core.CodeResourceExhausted {
			t.Fatalf("call %d with every slot held by a detached run: %v, want RESOURCE_EXHAUSTED", slots+i, err)
		}
	}
	if n, in := running.Load(), srv.slots.InUse(); n != slots || in != slots {
		t.Fatalf("%d detached handlers holding %d slots, want %d and %d", n, in, slots, slots)
	}
	close(release)
	waitFor(t, "the detached runs to give their slots back", func() bool { return srv.slots.InUse() == 0 })
	if out, err := srv.InvokeTool(ctx, "stuck", nil); err != nil || string(out) != `"done"` {
		t.Fatalf("after the detached runs ended: %s, %v", out, err)
	}
	if in := srv.slots.InUse(); in != 0 {
		t.Fatalf("%d slots held after every run returned", in)
	}
}

// A run invoked from a handler borrows its caller's slot: with one slot,
// a call can still invoke another tool, and the slot is the caller's
// again, then free, afterwards.
func TestInvokeToolBorrowsTheCallersSlot(t *testing.T) {
	srv, _, _, _ := slotServer(t, 1)
	out, err := srv.InvokeTool(context.Background(), "outer", nil)
	if err != nil || string(out) != `"\"in\""` {
		t.Fatalf("nested call with one slot: %s, %v", out, err)
	}
	if in := srv.slots.InUse(); in != 0 {
		t.Fatalf("%d slots held after the calls", in)
	}
	var ce *core.Error
	if _, err := srv.InvokeTool(context.Background(), "nope", nil); !errors.As(err, &ce) || ce.Code != core.CodeNotFound {
		t.Fatalf("unknown tool: %v", err)
	}
}
