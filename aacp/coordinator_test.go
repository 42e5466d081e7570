package aacp

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcprt/mcprt/core"
)

func TestNewCoordinatorDefaults(t *testing.T) {
	c := NewCoordinator(Options{QueueSize: -3, MaxPayloadBytes: 0})
	if c.queueSize != DefaultQueueSize || c.maxPayload != DefaultMaxPayloadBytes || c.log == nil {
		t.Errorf("defaults: queueSize %d, maxPayload %d, log %v; want %d, %d, non-nil",
			c.queueSize, c.maxPayload, c.log, DefaultQueueSize, DefaultMaxPayloadBytes)
	}
	if ids := c.AgentIDs(); len(ids) != 0 {
		t.Errorf("AgentIDs of a new coordinator = %q, want none", ids)
	}
}

func TestRegisterAgentErrors(t *testing.T) {
	h := newHarness(t, Options{})
	h.register(t, "taken", EchoAgent())
	closed := NewCoordinator(Options{})
	if err := closed.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		c       *Coordinator
		id      string
		handler Handler
		code    core.Code // "" means success
		want    string    // a substring of the message
	}{
		{"ok", h.c, "fresh", EchoAgent(), "", ""},
		{"128 bytes", h.c, strings.Repeat("a", 128), EchoAgent(), "", ""},
		{"empty id", h.c, "", EchoAgent(), core.CodeInvalidArgument, "agent id is empty"},
		{"129 bytes", h.c, strings.Repeat("b", 129), EchoAgent(), core.CodeInvalidArgument, "129 bytes long; want at most 128"},
		{"invalid UTF-8", h.c, "bad\xff", EchoAgent(), core.CodeInvalidArgument, "not valid UTF-8"},
		{"nil handler", h.c, "nil", nil, core.CodeInvalidArgument, "the handler is nil"},
		{"nil HandlerFunc", h.c, "nilfunc", HandlerFunc(nil), core.CodeInvalidArgument, "the handler is nil"},
		{"duplicate", h.c, "taken", EchoAgent(), core.CodeInvalidArgument, "already registered"},
		{"after Close", closed, "late", EchoAgent(), core.CodeInternal, "closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.RegisterAgent(tt.id, tt.handler)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("RegisterAgent: %v, want success", err)
				}
				return
			}
			if codeOf(err) != tt.code || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("RegisterAgent error = %v, want code %s containing %q", err, tt.code, tt.want)
			}
		})
	}
	if err := closed.RegisterAgent("late", EchoAgent()); !errors.Is(err, ErrClosed) {
		t.Errorf("RegisterAgent after Close: %v, want it to wrap ErrClosed", err)
	}
	if got, want := h.c.AgentIDs(), []string{strings.Repeat("a", 128), "fresh", "taken"}; !slices.Equal(got, want) {
		t.Errorf("AgentIDs = %q, want %q", got, want)
	}
}

func TestUnregisterAgent(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	if err := h.c.UnregisterAgent("ghost"); codeOf(err) != core.CodeNotFound || !strings.Contains(err.Error(), `"ghost"`) {
		t.Errorf("UnregisterAgent(unknown) = %v, want NOT_FOUND naming it", err)
	}
	h.register(t, "a", CounterAgent())
	h.register(t, "b", EchoAgent())
	if _, err := h.c.SendMessage(ctx, "a", Message{Type: "inc"}); err != nil {
		t.Fatal(err)
	}
	if err := h.c.UnregisterAgent("a"); err != nil {
		t.Fatalf("UnregisterAgent: %v", err)
	}
	if got := h.c.AgentIDs(); !slices.Equal(got, []string{"b"}) {
		t.Errorf("AgentIDs after unregister = %q, want [b]", got)
	}
	if _, err := h.c.SendMessage(ctx, "a", Message{Type: "inc"}); codeOf(err) != core.CodeNotFound {
		t.Errorf("SendMessage to an unregistered agent = %v, want NOT_FOUND", err)
	}
	if _, err := h.c.AgentState("a"); codeOf(err) != core.CodeNotFound {
		t.Errorf("AgentState of an unregistered agent = %v, want NOT_FOUND", err)
	}
	if err := h.c.UnregisterAgent("a"); codeOf(err) != core.CodeNotFound {
		t.Errorf("second UnregisterAgent = %v, want NOT_FOUND", err)
	}
	// The id is free again, with a fresh state.
	h.register(t, "a", CounterAgent())
	resp, err := h.c.SendMessage(ctx, "a", Message{Type: "inc"})
	if err != nil || !cmp.Equal(resp, map[string]any{"count": int64(1)}) {
		t.Errorf("re-registered counter answered %v, %v; want count 1", resp, err)
	}
}

func TestUnregisterWithQueuedMessages(t *testing.T) {
	h := newHarness(t, Options{})
	g := newGate(t)
	h.register(t, "g", g)
	ctx := context.Background()
	first := sendAsync(h.c, ctx, "g", "m1")
	g.waitStarted(t)
	second := sendAsync(h.c, ctx, "g", "m2")
	third := sendAsync(h.c, ctx, "g", "m3")
	h.waitQueued(t, 3)

	if err := h.c.UnregisterAgent("g"); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []<-chan result{second, third} {
		r := wait(t, ch)
		if codeOf(r.err) != core.CodeNotFound || !strings.Contains(r.err.Error(), `agent "g" was unregistered`) {
			t.Errorf("queued message: %v, want NOT_FOUND saying the agent was unregistered", r.err)
		}
	}
	g.open() // the running handler finishes and answers
	if r := wait(t, first); r.err != nil || r.resp != "done m1" {
		t.Errorf("running message: %v, %v; want its response", r.resp, r.err)
	}
	if got := g.startedSoFar(); len(got) != 0 {
		t.Errorf("the handler started %q after unregistration, want nothing", got)
	}
}

func TestAgentStateIsACopy(t *testing.T) {
	h := newHarness(t, Options{})
	h.register(t, "s", HandlerFunc(func(_ context.Context, msg Message, st State) (any, error) {
		switch msg.Type {
		case "init":
			st["n"] = 3 // an int: the copy has float64
			st["list"] = []any{"x"}
			st["nested"] = map[string]any{"k": "v"}
		case "read":
			return st["nested"].(map[string]any)["k"], nil
		}
		return nil, nil
	}))
	st, err := h.c.AgentState("s")
	if err != nil || st == nil || len(st) != 0 {
		t.Fatalf("AgentState before any message = %v, %v; want an empty, non-nil state", st, err)
	}
	ctx := context.Background()
	if _, err := h.c.SendMessage(ctx, "s", Message{Type: "init"}); err != nil {
		t.Fatal(err)
	}
	want := State{"n": 3.0, "list": []any{"x"}, "nested": map[string]any{"k": "v"}}
	st, err = h.c.AgentState("s")
	if err != nil || !cmp.Equal(st, want) {
		t.Fatalf("AgentState = %v, %v; want %v", st, err, want)
	}
	st["nested"].(map[string]any)["k"] = "changed"
	st["list"].([]any)[0] = "changed"
	delete(st, "n")
	if again, _ := h.c.AgentState("s"); !cmp.Equal(again, want) {
		t.Errorf("after changing a copy, AgentState = %v, want %v", again, want)
	}
	if resp, err := h.c.SendMessage(ctx, "s", Message{Type: "read"}); err != nil || resp != "v" {
		t.Errorf("the agent sees nested.k = %v, %v; want v", resp, err)
	}
	if _, err := h.c.AgentState("nobody"); codeOf(err) != core.CodeNotFound {
		t.Errorf("AgentState(unknown) = %v, want NOT_FOUND", err)
	}
}

func TestAgentStateNotEncodable(t *testing.T) {
	logger, logs := newLogger()
	h := newHarness(t, Options{Logger: logger})
	h.register(t, "nan", HandlerFunc(func(_ context.Context, msg Message, st State) (any, error) {
		if msg.Type == "set" {
			st["x"] = math.NaN()
		} else {
			st["x"] = 1
		}
		return nil, nil
	}))
	ctx := context.Background()
	if _, err := h.c.SendMessage(ctx, "nan", Message{Type: "set"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.c.AgentState("nan"); codeOf(err) != core.CodeInternal || !strings.Contains(err.Error(), "JSON-encodable") {
		t.Errorf("AgentState of a NaN state = %v, want INTERNAL about JSON", err)
	}
	if !strings.Contains(logs.String(), "cannot be encoded") {
		t.Errorf("log = %s, want a warning about the state", logs)
	}
	if _, err := h.c.SendMessage(ctx, "nan", Message{Type: "fix"}); err != nil {
		t.Fatal(err)
	}
	if st, err := h.c.AgentState("nan"); err != nil || !cmp.Equal(st, State{"x": 1.0}) {
		t.Errorf("AgentState after the fix = %v, %v; want x: 1", st, err)
	}
}

// panicky is a value whose JSON encoding panics.
type panicky struct{}

func (panicky) MarshalJSON() ([]byte, error) { panic("MarshalJSON broke") }

func TestAgentStateEncodingPanics(t *testing.T) {
	h := newHarness(t, Options{})
	h.register(t, "p", HandlerFunc(func(_ context.Context, _ Message, st State) (any, error) {
		st["v"] = panicky{}
		return "stored", nil
	}))
	if resp, err := h.c.SendMessage(context.Background(), "p", Message{Type: "t"}); err != nil || resp != "stored" {
		t.Fatalf("SendMessage = %v, %v; want the response despite the bad state", resp, err)
	}
	if _, err := h.c.AgentState("p"); codeOf(err) != core.CodeInternal || !strings.Contains(err.Error(), "MarshalJSON broke") {
		t.Errorf("AgentState = %v, want INTERNAL naming the panic", err)
	}
}

func TestOnStateChange(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	var states []State
	h := newHarness(t, Options{OnStateChange: func(id string, st State) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, id)
		states = append(states, st)
		st["count"] = -1.0 // the hook's copy is its own
	}})
	h.register(t, "counter", CounterAgent())
	h.register(t, "echo", EchoAgent())
	ctx := context.Background()
	for range 2 {
		if _, err := h.c.SendMessage(ctx, "counter", Message{Type: "inc"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.c.SendMessage(ctx, "echo", Message{Type: "hi"}); err != nil {
		t.Fatal(err)
	}
	// The hook runs before the response is delivered: no waiting needed.
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(calls, []string{"counter", "counter"}) {
		t.Errorf("hook calls = %q, want two for counter and none for echo", calls)
	}
	if st, _ := h.c.AgentState("counter"); !cmp.Equal(st, State{"count": 2.0}) {
		t.Errorf("AgentState = %v, want count 2 (the hook's changes must not leak)", st)
	}
	if len(states) == 2 && (states[0]["count"] != -1.0 || states[1]["count"] != -1.0) {
		t.Errorf("hook states = %v, want the hook's own copies", states)
	}
}

func TestOnStateChangePanicIsRecovered(t *testing.T) {
	logger, logs := newLogger()
	h := newHarness(t, Options{Logger: logger, OnStateChange: func(string, State) { panic("hook broke") }})
	h.register(t, "counter", CounterAgent())
	for i := range 2 {
		resp, err := h.c.SendMessage(context.Background(), "counter", Message{Type: "inc"})
		if err != nil || !cmp.Equal(resp, map[string]any{"count": int64(i + 1)}) {
			t.Fatalf("message %d: %v, %v; want count %d", i, resp, err, i+1)
		}
	}
	if !strings.Contains(logs.String(), "hook broke") {
		t.Errorf("log = %s, want the hook's panic", logs)
	}
}

func TestClose(t *testing.T) {
	h := newHarness(t, Options{})
	g := newGate(t)
	h.register(t, "g", g)
	h.register(t, "echo", EchoAgent())
	ctx := context.Background()
	running := sendAsync(h.c, ctx, "g", "m1")
	g.waitStarted(t)
	queued := sendAsync(h.c, ctx, "g", "m2")
	h.waitQueued(t, 2)

	expired, cancel := context.WithCancel(ctx)
	cancel()
	if err := h.c.Close(expired); !errors.Is(err, context.Canceled) {
		t.Errorf("Close with a handler running and ctx done = %v, want context.Canceled", err)
	}
	r := wait(t, queued)
	if codeOf(r.err) != core.CodeInternal || !errors.Is(r.err, ErrClosed) {
		t.Errorf("queued message after Close: %v, want INTERNAL wrapping ErrClosed", r.err)
	}
	if _, err := h.c.SendMessage(ctx, "echo", Message{Type: "late"}); codeOf(err) != core.CodeInternal || !errors.Is(err, ErrClosed) {
		t.Errorf("SendMessage after Close = %v, want INTERNAL wrapping ErrClosed", err)
	}
	if err := h.c.RegisterAgent("late", EchoAgent()); !errors.Is(err, ErrClosed) {
		t.Errorf("RegisterAgent after Close = %v, want ErrClosed", err)
	}
	if got := h.c.AgentIDs(); !slices.Equal(got, []string{"echo", "g"}) {
		t.Errorf("AgentIDs after Close = %q, want the agents still listed", got)
	}
	g.open()
	if r := wait(t, running); r.err != nil || r.resp != "done m1" {
		t.Errorf("the running message: %v, %v; want its response", r.resp, r.err)
	}
	for i := range 2 {
		if err := h.c.Close(ctx); err != nil {
			t.Errorf("Close #%d after the handlers finished = %v, want nil", i+2, err)
		}
	}
	if err := h.c.UnregisterAgent("echo"); err != nil {
		t.Errorf("UnregisterAgent after Close = %v, want nil", err)
	}
}
