package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
)

// Options configures a connection. The zero value of each field means its
// default.
type Options struct {
	// MaxMessageBytes bounds one line (default 4 MiB).
	MaxMessageBytes int
	// MaxInFlight bounds the requests in flight; at the bound the reader
	// stops reading until one completes (default 1024).
	MaxInFlight int
	// Logger receives the engine's logs (default: discarded).
	Logger *slog.Logger
	// CorrelationID is the connection's correlation id, used in error data
	// when the message carries none of its own.
	CorrelationID string
	// RequestCorrelationID returns the client-supplied correlation id found
	// in a message's params, or "" (default: none is ever found).
	RequestCorrelationID func(params json.RawMessage) string
}

const (
	defaultMaxMessageBytes = 4 << 20
	defaultMaxInFlight     = 1024
)

// Conn is one JSON-RPC connection: a reader that frames and decodes lines
// and routes them, one writer that owns the output, and the table of
// requests in flight. Create it with NewConn and run it with Serve.
type Conn struct {
	router *Router
	opts   Options
	log    *slog.Logger
	framer *Framer

	state    atomic.Int32 // a State
	batching atomic.Bool
	sem      chan struct{} // one token per request in flight
	done     chan struct{} // closed by Close
	once     sync.Once
	handlers sync.WaitGroup // requests whose handler has not returned
	served   chan error     // the last reader's result, for Serve

	readerHandoff *handoff // makes a new reader when a handler runs long
	nextID        atomic.Int64
	dec           decoder // the reader's envelope decoder, reused line after line

	wr *writer // the one write path

	mu       sync.Mutex // guards the fields below
	ctx      context.Context
	cancel   context.CancelCauseFunc
	inflight map[ID]*inflight
	pending  map[ID]chan *Response
}

type connKey struct{}

// ConnFromContext returns the connection serving the request whose context
// ctx is, or nil.
func ConnFromContext(ctx context.Context) *Conn {
	c, _ := ctx.Value(connKey{}).(*Conn)
	return c
}

// NewConn returns a connection reading from r and writing to w, routing
// with router.
func NewConn(r io.Reader, w io.Writer, router *Router, opts Options) *Conn {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = defaultMaxMessageBytes
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = defaultMaxInFlight
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Conn{
		router:   router,
		opts:     opts,
		log:      logger,
		framer:   NewFramer(r, opts.MaxMessageBytes),
		sem:      make(chan struct{}, opts.MaxInFlight),
		done:     make(chan struct{}),
		inflight: map[ID]*inflight{},
		served:   make(chan error, 1),
		pending:  map[ID]chan *Response{},
	}
	c.readerHandoff = newHandoff(func() { go c.readLoop() })
	c.wr = newWriter(w, func(err error) {
		c.log.Error("cannot write to the output; closing the connection", "error", err.Error())
		go c.Close()
	})
	c.ctx, c.cancel = context.WithCancelCause(context.WithValue(context.Background(), connKey{}, c))
	return c
}

// State returns the connection's lifecycle state.
func (c *Conn) State() State { return State(c.state.Load()) }

// CorrelationID returns the connection's correlation id.
func (c *Conn) CorrelationID() string { return c.opts.CorrelationID }

// SetBatching turns JSON-RPC batches on or off (off by default: a batch is
// answered with one -32600).
func (c *Conn) SetBatching(on bool) { c.batching.Store(on) }

// Done is closed when the connection closes.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Serve reads and handles messages until the input ends, ctx is done, or
// Close is called. When it returns the connection is CLOSED and every
// request's context is cancelled; use Wait to wait for running handlers.
// It returns nil at the end of the input and the read error otherwise.
func (c *Conn) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, c.Close)
	defer stop()
	defer c.Close()
	go c.readLoop()
	return <-c.served
}

// readLoop reads and handles lines while its goroutine is the reader: it
// returns when the input ends (reporting to Serve) or when a hand-off made
// another goroutine the reader (see dispatch).
func (c *Conn) readLoop() {
	for {
		// Responses gather while more input is already buffered and go
		// out in one write before the reader waits for input.
		if c.framer.Buffered() == 0 {
			c.wr.uncork()
		}
		line, err := c.framer.Next()
		if err != nil {
			c.wr.uncork()
		} else if c.framer.Buffered() > 0 {
			c.wr.cork()
		}
		if c.State() == StateClosed {
			c.served <- nil
			return
		}
		switch {
		case err == nil:
			if !c.handleLine(line) {
				return
			}
		case errors.Is(err, ErrLineTooLong):
			c.log.Warn("discarded a message over the size limit", "limit", c.opts.MaxMessageBytes)
			e := &Error{Code: CodeInvalidRequest, Message: "Invalid Request: the message is longer than " +
				strconv.Itoa(c.opts.MaxMessageBytes) + " bytes (transport.maxMessageBytes) and was discarded; " +
				"send smaller messages or raise the limit",
				Data: map[string]any{"correlationId": c.opts.CorrelationID, "maxMessageBytes": c.opts.MaxMessageBytes}}
			c.replyError(nil, ID{}, nil, e)
		case errors.Is(err, ErrPartialLine):
			c.log.Warn("input ended in the middle of a line; the fragment was discarded")
			c.served <- nil
			return
		case err == io.EOF:
			c.served <- nil
			return
		default:
			c.served <- fmt.Errorf("jsonrpc: reading input: %w", err)
			return
		}
	}
}

// Close closes the connection: the state becomes CLOSED, nothing more is
// written, every request's context and every pending outgoing call is
// cancelled. It is safe to call more than once and from any goroutine.
func (c *Conn) Close() {
	c.once.Do(func() {
		c.wr.close()
		c.state.Store(int32(StateClosed))
		c.cancel(ErrClosed)
		close(c.done)
	})
}

// Wait waits until every request handler has returned, or ctx is done.
func (c *Conn) Wait(ctx context.Context) error {
	ch := make(chan struct{})
	go func() { c.handlers.Wait(); close(ch) }()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Cancel cancels the in-flight request with the given id: its context is
// cancelled with cause, and no response is sent for it. It reports whether
// such a request was in flight.
func (c *Conn) Cancel(id ID, cause error) bool {
	c.mu.Lock()
	e, ok := c.inflight[id]
	if ok {
		e.cancelled = true
	}
	c.mu.Unlock()
	if ok {
		e.cancel(cause)
	}
	return ok
}

// handleLine decodes one line and routes what it holds. It reports
// whether the calling goroutine is still the reader.
func (c *Conn) handleLine(line []byte) bool {
	if isBatch(line) {
		c.handleBatch(line)
		return true
	}
	msg, derr := c.dec.decode(line)
	if derr != nil {
		c.log.Debug("rejected a message", "code", derr.Err.Code, "error", derr.Err.Message)
		c.replyError(nil, derr.ID, derr.Params, derr.Err)
		return true
	}
	return c.route(msg, nil)
}

// correlationFor returns the correlation id for error data: the client's,
// read from params, or the connection's.
func (c *Conn) correlationFor(params json.RawMessage) string {
	if f := c.opts.RequestCorrelationID; f != nil && len(params) > 0 {
		if id := f(params); id != "" {
			return id
		}
	}
	return c.opts.CorrelationID
}

// replyError sends an error response (into the batch b, if any).
func (c *Conn) replyError(b *batch, id ID, params json.RawMessage, e *Error) {
	b.expect()
	c.deliver(b, c.encodeError(id, params, e))
}

// deliver writes one response frame, or hands it to its batch. A nil frame
// means "no response".
func (c *Conn) deliver(b *batch, frame []byte) {
	if b != nil {
		b.finish(frame)
		return
	}
	if frame != nil {
		c.write(frame)
	}
}

// write sends one response frame (ending in "\n") through the one write
// path. Nothing is written once the connection is closed.
func (c *Conn) write(frame []byte) error {
	return c.wr.write(frame, false)
}
