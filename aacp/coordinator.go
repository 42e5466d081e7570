package aacp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/mcprt/mcprt/core"
)

// Defaults and limits of the coordinator.
const (
	// DefaultQueueSize is the per-agent queue bound when Options.QueueSize
	// is not positive.
	DefaultQueueSize = 64
	// DefaultMaxPayloadBytes is the message size limit when
	// Options.MaxPayloadBytes is not positive: 1 MiB, the default of
	// tools.maxPayloadBytes.
	DefaultMaxPayloadBytes = 1 << 20
	// MaxAgentIDBytes is the longest agent id RegisterAgent accepts.
	MaxAgentIDBytes = 128
)

// maxListedIDs bounds how many registered ids a NOT_FOUND message names.
const maxListedIDs = 10

// ErrClosed is wrapped by the errors of a closed coordinator: a
// registration or message refused after Close, and a queued message failed
// by Close. Those errors are *core.Error values with code INTERNAL;
// errors.Is(err, ErrClosed) tells them apart from other INTERNAL errors.
var ErrClosed = errors.New("the agent coordinator is closed")

// Options configures a Coordinator. The zero value is ready to use: every
// zero field takes its default.
type Options struct {
	// QueueSize bounds how many messages may wait in one agent's queue,
	// not counting the one its handler is running. A message that finds
	// the queue full is refused at once with RESOURCE_EXHAUSTED.
	// Zero or negative means DefaultQueueSize.
	QueueSize int
	// MaxPayloadBytes bounds the UTF-8 length of a message's JSON
	// encoding (the whole Message: type, payload, sourceAgentId); a larger
	// message is refused with RESOURCE_EXHAUSTED. Embedding programs pass
	// tools.maxPayloadBytes. Zero or negative means
	// DefaultMaxPayloadBytes.
	MaxPayloadBytes int
	// OnStateChange, when set, is called after a message whose handling
	// changed its agent's state, with the agent's id and a copy of the new
	// state that the hook may keep. A change is detected by comparing the
	// JSON encoding of the state before and after the message (map keys
	// sorted), so a change JSON cannot see (say, an int replaced by the
	// equal float64) is no change. The hook runs on the agent's worker
	// goroutine, after AgentState shows the new state and before the
	// sender gets its response; it delays the agent's next message, so it
	// should be quick, and it must not wait for a message to the same
	// agent. A panic in it is recovered and logged.
	OnStateChange func(agentID string, state State)
	// Logger receives the coordinator's diagnostics: recovered panics
	// (with the stack) and states JSON cannot encode. Nil discards them.
	Logger *slog.Logger
}

// Coordinator runs in-process agents. Each registered agent has
// a bounded FIFO queue and one worker goroutine, started at registration,
// that hands it its messages one at a time in arrival order; different
// agents run concurrently. All methods are safe for concurrent use.
type Coordinator struct {
	queueSize     int
	maxPayload    int
	onStateChange func(agentID string, state State)
	log           *slog.Logger

	mu     sync.RWMutex
	agents map[string]*agent // guarded by mu
	closed bool              // guarded by mu

	// workers counts the running worker goroutines; Add happens under mu
	// while !closed, so it never races with Close's Wait.
	workers sync.WaitGroup

	// enqueued, when set (by tests in this package, before any message is
	// sent), is called under the agent's lock each time a message is
	// accepted into its queue: the order of its calls is the arrival order.
	enqueued func(agentID string, msg Message)
}

// NewCoordinator returns a Coordinator with no agents. opts is copied.
func NewCoordinator(opts Options) *Coordinator {
	c := &Coordinator{
		queueSize:     opts.QueueSize,
		maxPayload:    opts.MaxPayloadBytes,
		onStateChange: opts.OnStateChange,
		log:           opts.Logger,
		agents:        make(map[string]*agent),
	}
	if c.queueSize <= 0 {
		c.queueSize = DefaultQueueSize
	}
	if c.maxPayload <= 0 {
		c.maxPayload = DefaultMaxPayloadBytes
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c
}

// RegisterAgent adds an agent with an empty state and starts its worker.
// The id must be 1 to MaxAgentIDBytes bytes of valid UTF-8 and not already
// registered, and h must not be nil (nor a nil HandlerFunc); otherwise the error is an INVALID_ARGUMENT
// *core.Error. After Close it fails with an INTERNAL error wrapping
// ErrClosed.
func (c *Coordinator) RegisterAgent(id string, h Handler) error {
	if err := checkAgentID(id); err != nil {
		return err
	}
	if f, ok := h.(HandlerFunc); h == nil || ok && f == nil {
		return core.Errorf(core.CodeInvalidArgument, "cannot register agent %q: the handler is nil; pass a Handler (HandlerFunc adapts a function)", id)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return core.Errorf(core.CodeInternal, "cannot register agent %q: %w; register agents before Close", id, ErrClosed)
	}
	if _, dup := c.agents[id]; dup {
		return core.Errorf(core.CodeInvalidArgument, "cannot register agent %q: an agent with that id is already registered; choose another id or unregister the existing agent first", id)
	}
	a := newAgent(id, h)
	c.agents[id] = a
	c.workers.Go(func() { c.run(a) })
	return nil
}

// checkAgentID returns an INVALID_ARGUMENT error when id is not an
// acceptable agent id.
func checkAgentID(id string) error {
	switch {
	case id == "":
		return core.NewError(core.CodeInvalidArgument, "agent id is empty; want 1 to 128 bytes of UTF-8 text")
	case len(id) > MaxAgentIDBytes:
		return core.Errorf(core.CodeInvalidArgument, "agent id %q is %d bytes long; want at most %d bytes", shorten(id), len(id), MaxAgentIDBytes)
	case !utf8.ValidString(id):
		return core.Errorf(core.CodeInvalidArgument, "agent id %q is not valid UTF-8; want UTF-8 text", id)
	}
	return nil
}

// UnregisterAgent removes the agent id. Its queued messages fail at once
// with NOT_FOUND ("agent X was unregistered ..."); a message its handler is
// running finishes and its sender gets the response. The id may be
// registered again at once. An unknown id is a NOT_FOUND error.
func (c *Coordinator) UnregisterAgent(id string) error {
	c.mu.Lock()
	a, ok := c.agents[id]
	if ok {
		delete(c.agents, id)
	}
	c.mu.Unlock()
	if !ok {
		return core.Errorf(core.CodeNotFound, "cannot unregister agent %q: no agent has that id", shorten(id))
	}
	a.stop(func() error {
		return core.Errorf(core.CodeNotFound, "agent %q was unregistered before it handled this message", id)
	})
	return nil
}

// AgentIDs returns the ids of the registered agents, sorted. Agents stay
// listed after Close (until unregistered).
func (c *Coordinator) AgentIDs() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Sorted(maps.Keys(c.agents))
}

// AgentState returns a deep copy of the agent's state as it was after the
// last message the agent finished (a message being handled is not seen
// until its handler returns). The copy is a JSON round trip of the state:
// numbers are float64, and changing the copy never changes the agent. An
// unknown id is a NOT_FOUND error; a state JSON cannot encode (a handler
// stored a channel, say, or NaN) is an INTERNAL error. Agents keep their
// last state after Close.
func (c *Coordinator) AgentState(id string) (State, error) {
	a, err := c.lookup(id)
	if err != nil {
		return nil, err
	}
	data, err := a.snapshot()
	if err != nil {
		return nil, core.Errorf(core.CodeInternal, "cannot read the state of agent %q: %v; agent state must hold only JSON-encodable values", id, err)
	}
	st, err := decodeState(data)
	if err != nil {
		return nil, core.Errorf(core.CodeInternal, "cannot copy the state of agent %q: %v", id, err)
	}
	return st, nil
}

// Close stops the coordinator: it refuses new registrations and messages
// (INTERNAL errors wrapping ErrClosed), fails every queued message the
// same way, and waits until every running handler has returned and every
// worker has exited, or until ctx is done (then it returns ctx's cause,
// wrapped, and the workers still finish in the background). Close does not
// cancel running handlers: their senders' contexts do. Calling Close again
// waits again.
func (c *Coordinator) Close(ctx context.Context) error {
	c.mu.Lock()
	c.closed = true
	agents := slices.Collect(maps.Values(c.agents))
	c.mu.Unlock()
	for _, a := range agents {
		a.stop(func() error {
			return core.Errorf(core.CodeInternal, "agent %q did not handle this message: %w", a.id, ErrClosed)
		})
	}
	done := make(chan struct{})
	go func() {
		c.workers.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close the agent coordinator: handlers still running: %w", ctxErr(ctx))
	}
}

// lookup returns the agent registered as id, or a NOT_FOUND error that
// names (some of) the registered agents.
func (c *Coordinator) lookup(id string) (*agent, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if a, ok := c.agents[id]; ok {
		return a, nil
	}
	if len(c.agents) == 0 {
		return nil, core.Errorf(core.CodeNotFound, "no agent %q: no agents are registered", shorten(id))
	}
	ids := slices.Sorted(maps.Keys(c.agents))
	more := ""
	if len(ids) > maxListedIDs {
		more = fmt.Sprintf(" and %d more", len(ids)-maxListedIDs)
		ids = ids[:maxListedIDs]
	}
	return nil, core.Errorf(core.CodeNotFound, "no agent %q; registered agents: %s%s", shorten(id), quoteAll(ids), more)
}

// quoteAll returns the ids quoted and separated by ", ".
func quoteAll(ids []string) string {
	out := make([]byte, 0, 16*len(ids))
	for i, id := range ids {
		if i > 0 {
			out = append(out, ", "...)
		}
		out = fmt.Appendf(out, "%q", id)
	}
	return string(out)
}

// shorten cuts a caller-supplied id that may be huge to MaxAgentIDBytes
// bytes (plus "...") for use in an error message.
func shorten(id string) string { return clip(id, MaxAgentIDBytes) }

// clip cuts s to at most max bytes, on a rune boundary, adding "..." when
// it cuts.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// ctxErr returns ctx's error and, when it differs, its cause, both
// wrapped: errors.Is matches context.Canceled or DeadlineExceeded as well as
// a cause set with context.WithCancelCause.
func ctxErr(ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause == nil || cause == err {
		return err
	}
	return fmt.Errorf("%w: %w", err, cause)
}
