package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/mcprt/mcprt/internal/idle"
)

// Options configures a connection. The zero value of each field means its
// default.
type Options struct {
	// MaxInFlight bounds the requests in flight, counting each until its
	// response has been handed to the transport; at the bound the reader
	// stops reading until one completes (default 1024).
	MaxInFlight int
	// MaxBatchResponseBytes bounds the answer to one batch (default
	// 16 MiB): elements whose responses would pass it are answered with a
	// -32603 error that says so instead.
	MaxBatchResponseBytes int
	// Logger receives the engine's logs (default: discarded). Warnings a
	// client can cause at will (unmatched responses) go here: give it a
	// rate-limited handler if that matters.
	Logger *slog.Logger
	// ErrorData returns the data of an error response whose error has
	// none, or adds to it: it gets the message's params (nil when none
	// could be read) and the data the error carries (nil or a
	// map[string]any it may extend). Default: data is left as it is.
	ErrorData func(params json.RawMessage, data map[string]any) map[string]any
	// CancelCall returns the notification that tells the peer an outgoing
	// call was abandoned (its context ended before the answer came), or
	// method "" to send none. Default: none is sent.
	CancelCall func(id ID, cause error) (method string, params any)
}

const (
	defaultMaxInFlight           = 1024
	defaultMaxBatchResponseBytes = 16 << 20
)

// Route is a Dispatcher's decision about one request.
type Route struct {
	// Handler runs the request under its context. Nil means: answer Err.
	Handler Handler
	// Err is the error answer when Handler is nil.
	Err *Error
	// Inline runs the handler on the reading goroutine, before the next
	// message is read: only for cheap handlers that never block; it makes
	// requests that change the connection's state take effect in order.
	Inline bool
	// CloseAfter closes the connection once the response is written.
	CloseAfter bool
	// Result, if set, is applied to every success result of the request
	// before it is encoded: the handler's and one sent with Respond. A
	// layer uses it to add members its protocol revision requires.
	Result func(result any) any
}

// A Dispatcher is the layer above the engine: it decides what each message
// means. Route and Notification are called on the reading goroutine, one
// message at a time, in arrival order, and must not block; Route must not
// run the request (the Conn does, under the request's context).
type Dispatcher interface {
	// Route decides how to handle a request.
	Route(ctx context.Context, req *Request) Route
	// Notification handles a notification from the peer. ctx is the
	// connection's context.
	Notification(ctx context.Context, n *Notification)
	// Batch returns nil when a JSON-RPC batch may be processed now, or
	// the error to answer it with.
	Batch() *Error
}

// Conn is one JSON-RPC connection over a Stream: the reader, the table of
// requests in flight with their contexts, the outgoing calls waiting for
// answers, and one write path (the stream's). It knows nothing of the
// protocol above; a Dispatcher decides what messages mean. Create it with
// NewConn and run it with Serve.
type Conn struct {
	stream Stream
	pacer  Pacer         // the stream, when it paces its reader; else nil
	reader MessageReader // the stream, when it hands over decoded messages; else nil
	disp   Dispatcher
	opts   Options
	log    *slog.Logger

	sem      chan struct{} // one token per request in flight
	done     chan struct{} // closed by Close
	once     sync.Once
	closed   atomic.Bool
	handlers idle.Group // requests whose handler has not returned
	served   chan error // the last reader's result, for Serve

	frames sync.Pool // *[]byte response buffers, when the stream is a dataCopier

	readerHandoff *handoff // makes a new reader when a handler runs long
	nextID        atomic.Int64
	dec           Decoder // the reader's envelope decoder, reused message after message

	// base carries the connection (ConnFromContext) and nothing else: the
	// requests' contexts derive from it, not from ctx, so that making one
	// does not register it with a parent (a map insert and delete under
	// the parent's lock per request); Close cancels them itself.
	base context.Context

	mu       sync.Mutex // guards the fields below
	ctx      context.Context
	cancel   context.CancelCauseFunc
	inflight map[ID]*inflight
	detached map[*inflight]struct{} // answered by Respond while their handler still runs
	pending  map[ID]chan *Response
}

type connKey struct{}

// ConnFromContext returns the connection serving the request whose context
// ctx is, or nil.
func ConnFromContext(ctx context.Context) *Conn {
	c, _ := ctx.Value(connKey{}).(*Conn)
	return c
}

// NewConn returns a connection over stream whose messages disp interprets.
func NewConn(stream Stream, disp Dispatcher, opts Options) *Conn {
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = defaultMaxInFlight
	}
	if opts.MaxBatchResponseBytes <= 0 {
		opts.MaxBatchResponseBytes = defaultMaxBatchResponseBytes
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Conn{
		stream:   stream,
		disp:     disp,
		opts:     opts,
		log:      logger,
		sem:      make(chan struct{}, opts.MaxInFlight),
		done:     make(chan struct{}),
		inflight: map[ID]*inflight{},
		served:   make(chan error, 1),
		pending:  map[ID]chan *Response{},
	}
	if _, ok := stream.(dataCopier); ok {
		c.frames.New = func() any { return new([]byte) }
	}
	c.pacer, _ = stream.(Pacer)
	c.reader, _ = stream.(MessageReader)
	c.readerHandoff = newHandoff(func() { go c.readLoop() })
	c.base = context.WithValue(context.Background(), connKey{}, c)
	c.ctx, c.cancel = context.WithCancelCause(c.base)
	return c
}

// Done is closed when the connection closes.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Closed reports whether the connection is closed.
func (c *Conn) Closed() bool { return c.closed.Load() }

// Serve reads and handles messages until the input ends, ctx is done, or
// Close is called, and returns promptly in each case. When it returns the
// connection is closed and every request's context is cancelled; use Wait
// to wait for running handlers. It returns nil at the end of the input or
// on a close, and the read error otherwise.
func (c *Conn) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, c.Close)
	defer stop()
	defer c.Close()
	go c.readLoop()
	var failed <-chan struct{}
	if f, ok := c.stream.(Failer); ok {
		failed = f.Failed()
	}
	select {
	case err := <-c.served:
		return err
	case <-failed:
		c.log.Error("the output failed; closing the connection")
		c.Close()
		return nil
	case <-c.done:
		select { // a read error that closed the connection is still reported
		case err := <-c.served:
			return err
		default:
			return nil
		}
	}
}

// readLoop reads and handles messages while its goroutine is the reader:
// it returns when the input ends (reporting to Serve) or when a hand-off
// made another goroutine the reader (see dispatch).
func (c *Conn) readLoop() {
	for {
		if c.pacer != nil {
			c.pacer.Pace(c.done)
		}
		var in Incoming
		var err error
		if c.reader != nil {
			in, err = c.reader.ReadMessage()
		} else {
			in.Data, err = c.stream.Read()
		}
		if c.closed.Load() {
			c.report(nil)
			return
		}
		switch {
		case err == nil && in.Message != nil:
			if !c.route(in.Message, nil) {
				return
			}
		case err == nil:
			if !c.handleMessage(in.Data) {
				return
			}
		case isWireError(err):
			c.replyError(nil, ID{}, nil, asWireError(err))
		case err == io.EOF:
			c.report(nil)
			return
		default:
			c.report(fmt.Errorf("jsonrpc: reading input: %w", err))
			return
		}
	}
}

// isWireError reports whether a read error is a message the transport
// could not deliver, to be answered with that error. (A separate function
// so that the reader's loop allocates nothing for errors.As.)
func isWireError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

func asWireError(err error) *Error {
	var e *Error
	errors.As(err, &e)
	return e
}

// report hands the reader's final result to Serve.
func (c *Conn) report(err error) {
	select {
	case c.served <- err:
	default:
	}
}

// Close closes the connection: nothing more is written, the stream is
// closed, and every request's context and every pending outgoing call is
// cancelled. It is safe to call more than once and from any goroutine.
func (c *Conn) Close() {
	c.once.Do(func() {
		c.closed.Store(true)
		_ = c.stream.Close()
		c.cancel(ErrClosed)
		c.cancelRequests()
		close(c.done)
	})
}

// cancelRequests cancels the context of every request whose handler may
// still run, with ErrClosed. A request dispatched after it finds the
// connection closed and cancels its own (see dispatch).
func (c *Conn) cancelRequests() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.inflight {
		e.cancel(ErrClosed)
	}
	for e := range c.detached {
		e.cancel(ErrClosed)
	}
}

// Wait waits until every request handler has returned, or ctx is done. A
// wait that gives up leaves no goroutine behind.
func (c *Conn) Wait(ctx context.Context) error { return c.handlers.Wait(ctx) }

// Drain waits, after Close, until the stream has written every message it
// accepted (when it is a Drainer), or until ctx is done.
func (c *Conn) Drain(ctx context.Context) {
	if d, ok := c.stream.(Drainer); ok {
		d.Drain(ctx.Done())
	}
}

// Cancel cancels the in-flight request with the given id: its context is
// cancelled with cause, and no response is sent for it. It reports whether
// such a request was in flight.
func (c *Conn) Cancel(id ID, cause error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.inflight[id]
	if ok {
		// Both under the lock: whoever finds the request cancelled (a
		// refused Respond) also finds its context's cause set.
		e.cancelled = true
		e.cancel(cause)
	}
	return ok
}

// handleMessage decodes one message and routes what it holds. It reports
// whether the calling goroutine is still the reader.
func (c *Conn) handleMessage(data []byte) bool {
	if isBatch(data) {
		c.handleBatch(data)
		return true
	}
	msg, derr := c.dec.Decode(data)
	if derr != nil {
		c.log.Debug("rejected a message", "code", derr.Err.Code, "error", derr.Err.Message)
		c.replyError(nil, derr.ID, derr.Params, derr.Err)
		return true
	}
	return c.route(msg, nil)
}

// route sends one decoded message where it belongs. It reports whether the
// calling goroutine is still the connection's reader.
func (c *Conn) route(msg Message, b *batch) bool {
	switch m := msg.(type) {
	case *Request:
		if c.inFlight(m.ID) {
			// Whatever the method: a second response with this id would
			// be ambiguous.
			c.replyError(b, m.ID, m.Params, duplicateID(m.ID))
			return true
		}
		r := c.disp.Route(c.ctx, m)
		if r.Handler == nil {
			e := r.Err
			if e == nil {
				e = methodNotFound(m.Method)
			}
			c.replyError(b, m.ID, m.Params, e)
			return true
		}
		return c.dispatch(m, r, b)
	case *Notification:
		c.notify(m)
	case *Response:
		c.deliverResponse(m)
	}
	return true
}

func methodNotFound(method string) *Error {
	return NewError(CodeMethodNotFound, "Method not found: "+quote(method)+
		" is not a method this server provides")
}

// replyError sends an error response (into the batch b, if any).
func (c *Conn) replyError(b *batch, id ID, params json.RawMessage, e *Error) {
	b.expect()
	c.deliver(b, id, c.encodeError(id, params, e), false)
}

// deliver writes one response frame, or hands it to its batch. A nil frame
// means "no response". It returns the stream's error: ErrClosed when the
// connection closed before the frame could be handed over.
func (c *Conn) deliver(b *batch, id ID, frame []byte, flush bool) error {
	if b != nil {
		b.finish(id, frame)
		return nil
	}
	if frame != nil {
		return c.write(Outgoing{Data: frame, Related: id, Response: true, Flush: flush})
	}
	return nil
}

// write hands one message to the stream. A failed write (the peer went
// away) closes the connection.
func (c *Conn) write(m Outgoing) error {
	err := c.stream.Write(c.ctx, m)
	if err != nil && !errors.Is(err, ErrClosed) && !c.closed.Load() {
		c.log.Error("cannot write to the output; closing the connection", "error", err.Error())
		go c.Close()
	}
	return err
}
