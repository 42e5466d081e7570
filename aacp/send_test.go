package aacp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

func TestSendMessageErrors(t *testing.T) {
	sized := Message{Type: "t", Payload: json.RawMessage(`{"data":"xxxxxxxx"}`)}
	size, err := core.JSONSize(sized)
	if err != nil {
		t.Fatal(err)
	}
	empty := newHarness(t, Options{})
	h := newHarness(t, Options{MaxPayloadBytes: size})
	h.register(t, "echo", EchoAgent())
	h.register(t, "counter", CounterAgent())
	crowded := newHarness(t, Options{})
	for i := range 15 {
		crowded.register(t, fmt.Sprintf("agent-%02d", i), EchoAgent())
	}
	cancelled, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("caller went away")
	cancel(cause)
	bigger := sized
	bigger.Payload = json.RawMessage(`{"data":"xxxxxxxxx"}`)

	tests := []struct {
		name   string
		c      *Coordinator
		ctx    context.Context
		target string
		msg    Message
		code   core.Code // "" means success
		want   string
	}{
		{"at the size limit", h.c, context.Background(), "echo", sized, "", ""},
		{"no agents", empty.c, context.Background(), "x", Message{Type: "t"}, core.CodeNotFound, `no agent "x": no agents are registered`},
		{"unknown target", h.c, context.Background(), "ekho", Message{Type: "t"}, core.CodeNotFound, `no agent "ekho"; registered agents: "counter", "echo"`},
		{"unknown target, bounded list", crowded.c, context.Background(), "x", Message{Type: "t"}, core.CodeNotFound, `"agent-09" and 5 more`},
		{"huge unknown target", h.c, context.Background(), strings.Repeat("z", 5000), Message{Type: "t"}, core.CodeNotFound, strings.Repeat("z", 128) + `..."`},
		{"over the size limit", h.c, context.Background(), "echo", bigger, core.CodeResourceExhausted, fmt.Sprintf("is %d bytes of JSON, over the limit of %d bytes", size+1, size)},
		{"payload not JSON", h.c, context.Background(), "echo", Message{Type: "t", Payload: json.RawMessage(`{"a":`)}, core.CodeInvalidArgument, "the payload must be valid JSON"},
		{"ctx already done", h.c, cancelled, "echo", Message{Type: "t"}, "", "caller went away"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.c.SendMessage(tt.ctx, tt.target, tt.msg)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("SendMessage: %v, want success", err)
				}
				return
			}
			if err == nil || codeOf(err) != tt.code || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("SendMessage error = %v, want code %q containing %q", err, tt.code, tt.want)
			}
		})
	}
	_, err = h.c.SendMessage(cancelled, "echo", Message{Type: "t"})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, cause) {
		t.Errorf("SendMessage with a cancelled ctx = %v, want context.Canceled and the cause", err)
	}
	_, err = h.c.SendMessage(context.Background(), "echo", bigger)
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Details["limitBytes"] != size || ce.Details["sizeBytes"] != size+1 || !ce.Retryable {
		t.Errorf("oversized message error = %#v, want details sizeBytes %d, limitBytes %d, retryable", ce, size+1, size)
	}
	if st, _ := h.c.AgentState("counter"); len(st) != 0 {
		t.Errorf("a refused message reached the counter: state %v", st)
	}
}

func TestHandlerErrorIsReturnedAsIs(t *testing.T) {
	h := newHarness(t, Options{})
	sentinel := errors.New("the agent says no")
	h.register(t, "no", HandlerFunc(func(context.Context, Message, State) (any, error) {
		return "partial", sentinel
	}))
	resp, err := h.c.SendMessage(context.Background(), "no", Message{Type: "t"})
	if err != sentinel || resp != "partial" {
		t.Errorf("SendMessage = %v, %v; want the handler's own response and error", resp, err)
	}
}

func TestQueueFullDoesNotBlock(t *testing.T) {
	h := newHarness(t, Options{QueueSize: 1})
	g := newGate(t)
	h.register(t, "g", g)
	ctx := context.Background()
	first := sendAsync(h.c, ctx, "g", "m1")
	g.waitStarted(t) // m1 runs: it takes no queue room
	second := sendAsync(h.c, ctx, "g", "m2")
	h.waitQueued(t, 2) // m2 waits: the queue is full

	r := wait(t, sendAsync(h.c, ctx, "g", "m3")) // fails the test if it blocks
	var ce *core.Error
	if !errors.As(r.err, &ce) || ce.Code != core.CodeResourceExhausted || !strings.Contains(ce.Message, "queue limit") || ce.Details["queueSize"] != 1 {
		t.Fatalf("SendMessage to a full queue = %v, want RESOURCE_EXHAUSTED about the queue limit", r.err)
	}
	g.open()
	for _, ch := range []<-chan result{first, second} {
		if r := wait(t, ch); r.err != nil {
			t.Errorf("accepted message failed: %v", r.err)
		}
	}
	if got := g.startedSoFar(); len(got) != 1 || got[0] != "m2" {
		t.Errorf("started after m1: %q, want only m2 (m3 was refused)", got)
	}
}

func TestCancelWhileQueued(t *testing.T) {
	h := newHarness(t, Options{QueueSize: 1})
	g := newGate(t)
	h.register(t, "g", g)
	ctx := context.Background()
	first := sendAsync(h.c, ctx, "g", "m1")
	g.waitStarted(t)
	qctx, cancel := context.WithCancelCause(ctx)
	queued := sendAsync(h.c, qctx, "g", "m2")
	h.waitQueued(t, 2)

	cause := errors.New("user pressed stop")
	cancel(cause)
	r := wait(t, queued)
	if !errors.Is(r.err, context.Canceled) || !errors.Is(r.err, cause) || !strings.Contains(r.err.Error(), "did not start") {
		t.Errorf("cancelled queued message: %v, want context.Canceled with the cause", r.err)
	}
	if n := queueLen(h.c, "g"); n != 0 {
		t.Errorf("queue holds %d messages after the cancellation, want 0 (the room is free at once)", n)
	}
	third := sendAsync(h.c, ctx, "g", "m3") // fits: QueueSize is 1
	h.waitQueued(t, 1)
	g.open()
	for _, ch := range []<-chan result{first, third} {
		if r := wait(t, ch); r.err != nil {
			t.Errorf("message failed: %v", r.err)
		}
	}
	if got := g.startedSoFar(); len(got) != 1 || got[0] != "m3" {
		t.Errorf("started after m1: %q, want only m3 (m2 was cancelled)", got)
	}
}

func TestCancelledMessageIsSkippedWhenDequeued(t *testing.T) {
	// A sender whose ctx ends just as the worker takes its message: the
	// worker must skip it. Put such a message in the queue directly.
	h := newHarness(t, Options{})
	var seen []string
	var mu sync.Mutex
	h.register(t, "rec", HandlerFunc(func(_ context.Context, msg Message, _ State) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, msg.Type)
		return nil, nil
	}))
	a, _ := h.c.lookup("rec")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stale := &request{ctx: ctx, msg: Message{Type: "stale"}, done: make(chan outcome, 1)}
	if err := h.c.enqueue(a, stale); err != nil {
		t.Fatal(err)
	}
	if _, err := h.c.SendMessage(context.Background(), "rec", Message{Type: "fresh"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "fresh" {
		t.Errorf("handler saw %q, want only fresh", seen)
	}
}

func TestCancelReachesRunningHandler(t *testing.T) {
	h := newHarness(t, Options{})
	started := make(chan struct{})
	sawCancel := make(chan error, 1)
	proceed := make(chan struct{}) // the handler returns only after the sender has
	h.register(t, "slow", HandlerFunc(func(ctx context.Context, msg Message, _ State) (any, error) {
		if msg.Type != "wait" {
			return "ok", nil
		}
		close(started)
		<-ctx.Done()
		sawCancel <- context.Cause(ctx)
		<-proceed
		return "late answer, discarded", nil
	}))
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.c.SendMessage(ctx, "slow", Message{Type: "wait"})
		done <- err
	}()
	<-started
	cause := errors.New("deadline of the tool call")
	cancel(cause)
	if err := <-done; !errors.Is(err, cause) || !errors.Is(err, context.Canceled) {
		t.Errorf("SendMessage = %v, want the cancellation and its cause", err)
	}
	close(proceed)
	select {
	case got := <-sawCancel:
		if got != cause {
			t.Errorf("handler saw cause %v, want %v", got, cause)
		}
	case <-time.After(safetyTimeout):
		t.Fatal("the handler never saw the cancellation")
	}
	if resp, err := h.c.SendMessage(context.Background(), "slow", Message{Type: "next"}); err != nil || resp != "ok" {
		t.Errorf("next message: %v, %v; want ok", resp, err)
	}
}

func TestPanicIsRecovered(t *testing.T) {
	logger, logs := newLogger()
	h := newHarness(t, Options{Logger: logger})
	h.register(t, "p", HandlerFunc(func(_ context.Context, msg Message, st State) (any, error) {
		st["seen"] = msg.Type
		if msg.Type == "boom" {
			panic("secret-in-panic-value")
		}
		return "fine", nil
	}))
	ctx := context.Background()
	_, err := h.c.SendMessage(ctx, "p", Message{Type: "boom"})
	if codeOf(err) != core.CodeInternal || !strings.Contains(err.Error(), `agent "p" panicked while handling a "boom" message`) {
		t.Fatalf("SendMessage to a panicking handler = %v, want INTERNAL", err)
	}
	if strings.Contains(err.Error(), "secret-in-panic-value") {
		t.Errorf("the panic value reached the caller: %v", err)
	}
	if out := logs.String(); !strings.Contains(out, "secret-in-panic-value") || !strings.Contains(out, "stack") {
		t.Errorf("log = %s, want the panic value and stack", out)
	}
	if st, _ := h.c.AgentState("p"); st["seen"] != "boom" {
		t.Errorf("state after the panic = %v, want the change made before it", st)
	}
	if resp, err := h.c.SendMessage(ctx, "p", Message{Type: "next"}); err != nil || resp != "fine" {
		t.Errorf("message after the panic: %v, %v; want fine", resp, err)
	}
}

func TestGoexitInHandler(t *testing.T) {
	h := newHarness(t, Options{})
	h.register(t, "x", HandlerFunc(func(_ context.Context, msg Message, _ State) (any, error) {
		if msg.Type == "exit" {
			runtime.Goexit()
		}
		return "fine", nil
	}))
	ctx := context.Background()
	if _, err := h.c.SendMessage(ctx, "x", Message{Type: "exit"}); codeOf(err) != core.CodeInternal || !strings.Contains(err.Error(), "runtime.Goexit") {
		t.Fatalf("SendMessage to a handler calling Goexit = %v, want INTERNAL", err)
	}
	if resp, err := h.c.SendMessage(ctx, "x", Message{Type: "next"}); err != nil || resp != "fine" {
		t.Errorf("message after Goexit: %v, %v; want fine from a new worker", resp, err)
	}
}

func TestAgentsRunConcurrently(t *testing.T) {
	h := newHarness(t, Options{})
	var arrived sync.WaitGroup
	arrived.Add(2)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	barrier := HandlerFunc(func(ctx context.Context, _ Message, _ State) (any, error) {
		arrived.Done()
		select {
		case <-all: // both handlers are running at once
			return "met", nil
		case <-ctx.Done():
			return nil, errors.New("the other agent's handler never ran alongside this one")
		}
	})
	h.register(t, "left", barrier)
	h.register(t, "right", barrier)
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	l, r := sendAsync(h.c, ctx, "left", "go"), sendAsync(h.c, ctx, "right", "go")
	for _, ch := range []<-chan result{l, r} {
		if res := wait(t, ch); res.err != nil || res.resp != "met" {
			t.Errorf("barrier handler: %v, %v; want met", res.resp, res.err)
		}
	}
}

func TestUnregisterRacesWithSend(t *testing.T) {
	// Senders racing with UnregisterAgent get a response or NOT_FOUND,
	// never a hang or a lost message.
	h := newHarness(t, Options{QueueSize: 1000})
	h.register(t, "r", CounterAgent())
	var ok, gone atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				_, err := h.c.SendMessage(context.Background(), "r", Message{Type: "inc"})
				switch codeOf(err) {
				case "":
					if err != nil {
						t.Errorf("unexpected error: %v", err)
					}
					ok.Add(1)
				case core.CodeNotFound:
					gone.Add(1)
				default:
					t.Errorf("unexpected error: %v", err)
				}
			}
		})
	}
	runtime.Gosched()
	if err := h.c.UnregisterAgent("r"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if ok.Load()+gone.Load() != 200 {
		t.Errorf("%d answered + %d not found, want 200 in all", ok.Load(), gone.Load())
	}
}
