package aacp

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// safetyTimeout bounds waits that only end early when something is broken;
// it never decides a passing test.
const safetyTimeout = 60 * time.Second

// harness is a Coordinator whose accepted messages are reported, in
// arrival order, on queued.
type harness struct {
	c      *Coordinator
	queued chan Message
}

// newHarness returns a harness closed when the test ends.
func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	h := &harness{c: NewCoordinator(opts), queued: make(chan Message, 4096)}
	h.c.enqueued = func(_ string, m Message) { h.queued <- m }
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
		defer cancel()
		if err := h.c.Close(ctx); err != nil {
			t.Errorf("Close at cleanup: %v", err)
		}
	})
	return h
}

// register registers h as id or fails the test.
func (h *harness) register(t *testing.T, id string, hd Handler) {
	t.Helper()
	if err := h.c.RegisterAgent(id, hd); err != nil {
		t.Fatalf("RegisterAgent(%q): %v", id, err)
	}
}

// waitQueued waits until n more messages have been accepted and returns
// their types.
func (h *harness) waitQueued(t *testing.T, n int) []string {
	t.Helper()
	var types []string
	for range n {
		select {
		case m := <-h.queued:
			types = append(types, m.Type)
		case <-time.After(safetyTimeout):
			t.Fatalf("only %d of %d messages were accepted", len(types), n)
		}
	}
	return types
}

// result is what SendMessage returned.
type result struct {
	resp any
	err  error
}

// sendAsync calls SendMessage on a new goroutine.
func sendAsync(c *Coordinator, ctx context.Context, target, typ string) <-chan result {
	ch := make(chan result, 1)
	go func() {
		resp, err := c.SendMessage(ctx, target, Message{Type: typ})
		ch <- result{resp, err}
	}()
	return ch
}

// wait receives one result.
func wait(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(safetyTimeout):
		t.Fatal("SendMessage did not return")
		return result{}
	}
}

// gate is a handler that reports each message it starts and then waits
// for release (or for its context).
type gate struct {
	started chan string
	release chan struct{}
	once    sync.Once
}

// newGate returns a gate released when the test ends (before the
// harness closes, as cleanups run last-in first-out).
func newGate(t *testing.T) *gate {
	g := &gate{started: make(chan string, 1024), release: make(chan struct{})}
	t.Cleanup(g.open)
	return g
}

// open lets every waiting and future message through.
func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

// HandleMessage implements Handler.
func (g *gate) HandleMessage(ctx context.Context, msg Message, _ State) (any, error) {
	g.started <- msg.Type
	select {
	case <-g.release:
		return "done " + msg.Type, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// waitStarted waits for the handler to start on a message and returns its
// type.
func (g *gate) waitStarted(t *testing.T) string {
	t.Helper()
	select {
	case typ := <-g.started:
		return typ
	case <-time.After(safetyTimeout):
		t.Fatal("the handler did not start")
		return ""
	}
}

// startedSoFar returns the types of the messages started and not yet
// collected by waitStarted.
func (g *gate) startedSoFar() []string {
	var out []string
	for {
		select {
		case typ := <-g.started:
			out = append(out, typ)
		default:
			return out
		}
	}
}

// codeOf returns the code of err's *core.Error, or "" when it has none.
func codeOf(err error) core.Code {
	var e *core.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// syncBuffer is a bytes.Buffer safe for concurrent writers (a log sink).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newLogger returns a JSON logger writing to a buffer.
func newLogger() (*slog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	return slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// queueLen returns how many messages wait in id's queue.
func queueLen(c *Coordinator, id string) int {
	a, err := c.lookup(id)
	if err != nil {
		return -1
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.queue)
}
