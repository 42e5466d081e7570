package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// handoffAfter is how long the reader runs a request's handler itself
// before a new goroutine takes over the reading. Most handlers finish well
// within it, and then a request costs no goroutine and no hand-off between
// threads; a slower one delays the next message by at most this much.
const handoffAfter = 100 * time.Microsecond

// inflight is a request being handled. It is the request's context too:
// Value finds the inflight (and so the connection) without another
// allocation.
type inflight struct {
	context.Context
	cancel context.CancelCauseFunc
	conn   *Conn
	req    *Request
	route  Route
	batch  *batch

	cancelled bool // the peer cancelled it; guarded by conn.mu
	responded bool // its response was sent (or suppressed); guarded by conn.mu
	returned  bool // its handler returned; guarded by conn.mu
	detached  bool // in conn.detached; guarded by conn.mu

	answerer Answerer // set by the handler (OnAnswered); read by run after it returns
}

type inflightKey struct{}

// Value returns the inflight for inflightKey, the connection for connKey,
// and otherwise asks the parent context.
func (e *inflight) Value(key any) any {
	switch key.(type) {
	case inflightKey:
		return e
	case connKey:
		return e.conn
	}
	return e.Context.Value(key)
}

// RequestID returns the id of the request whose context ctx is, and
// whether ctx is one.
func RequestID(ctx context.Context) (ID, bool) {
	e, ok := ctx.Value(inflightKey{}).(*inflight)
	if !ok {
		return ID{}, false
	}
	return e.req.ID, true
}

// dispatch runs a request's handler. It blocks while MaxInFlight requests
// are in flight (backpressure). Inline routes run on the reader; other
// requests run on the reader too, until handoffAfter passes, when a new
// goroutine becomes the reader and this one finishes the handler alone
// (a slow tool never blocks ping). Elements of a batch run on goroutines of
// their own. dispatch reports whether the caller is still the reader.
func (c *Conn) dispatch(req *Request, r Route, b *batch) bool {
	select {
	case c.sem <- struct{}{}:
	case <-c.done:
		return true
	}
	c.mu.Lock()
	if _, dup := c.inflight[req.ID]; dup {
		c.mu.Unlock()
		<-c.sem
		c.replyError(b, req.ID, req.Params, duplicateID(req.ID))
		return true
	}
	ctx, cancel := context.WithCancelCause(c.base)
	e := &inflight{Context: ctx, cancel: cancel, conn: c, req: req, route: r, batch: b}
	c.inflight[req.ID] = e
	closed := c.closed.Load() // after the insert: Close either sees e or is seen here
	c.mu.Unlock()
	if closed {
		cancel(ErrClosed)
	}
	b.expect()
	switch {
	case r.Inline:
		c.run(e)
		return true
	case b != nil:
		c.handlers.Add(1)
		go func() {
			defer c.handlers.Done()
			c.run(e)
		}()
		return true
	}
	c.handlers.Add(1)
	token := c.readerHandoff.arm()
	c.run(e)
	c.handlers.Done()
	return c.readerHandoff.disarm(token)
}

// inFlight reports whether a request with this id is in flight.
func (c *Conn) inFlight(id ID) bool {
	c.mu.Lock()
	_, ok := c.inflight[id]
	c.mu.Unlock()
	return ok
}

func duplicateID(id ID) *Error {
	return NewError(CodeInvalidRequest, "Invalid Request: id "+clip([]byte(id.String()))+
		" is already used by a request still in flight; use a new id for each request")
}

// finishInflight ends the request's time in the in-flight table: its id
// may be reused from now on. returned says whether its handler has
// returned: a request answered before (Respond) stays among the detached
// ones until then, so that a close still cancels its context. owed
// reports whether this caller settles the request's answer (false when
// Respond already did); send whether that answer is a response (false when
// the peer cancelled the request).
func (c *Conn) finishInflight(e *inflight, returned bool) (owed, send bool) {
	c.mu.Lock()
	if c.inflight[e.req.ID] == e {
		delete(c.inflight, e.req.ID)
	}
	switch {
	case returned:
		e.returned = true
		if e.detached {
			e.detached = false
			delete(c.detached, e)
		}
	case !e.returned && !e.detached:
		if c.detached == nil {
			c.detached = map[*inflight]struct{}{}
		}
		e.detached = true
		c.detached[e] = struct{}{}
	}
	owed = !e.responded
	send = owed && !e.cancelled
	e.responded = true
	c.mu.Unlock()
	return owed, send
}

// Respond sends the response of the request whose context ctx is, at once,
// before its handler returns; whatever the handler returns later is not
// sent. The request's id may be reused from then on. Respond reports
// whether the response was handed to the stream: false when the request
// was cancelled by the peer or already answered, when the connection had
// closed, or when ctx is not a request's context. It is for answers that
// are truly asynchronous (a deadline that passes while the handler runs
// on); a layer that must know what the peer saw (a completion record)
// otherwise returns its answer and registers an Answerer (OnAnswered).
func Respond(ctx context.Context, result any) bool {
	e, ok := ctx.Value(inflightKey{}).(*inflight)
	if !ok {
		return false
	}
	return e.conn.respond(e, result, nil)
}

// RespondError is Respond with an error answer.
func RespondError(ctx context.Context, err error) bool {
	e, ok := ctx.Value(inflightKey{}).(*inflight)
	if !ok {
		return false
	}
	return e.conn.respond(e, nil, err)
}

// respond settles e's answer from outside run.
func (c *Conn) respond(e *inflight, result any, err error) bool {
	owed, send := c.finishInflight(e, false)
	switch {
	case send:
		// The answer counts as sent once the stream accepted it; a
		// connection that closed first refuses it.
		return c.deliver(e.batch, e.req.ID, c.encodeResponse(e.req, e.route.Result, result, err), false) == nil
	case owed:
		c.deliver(e.batch, e.req.ID, nil, false) // cancelled: no response, but the batch is settled
	}
	return false
}

// CancelRequest cancels the context of the request whose context ctx is,
// with cause, as a deadline inside the handler's layer would. Unlike
// Conn.Cancel it does not suppress the response. It reports whether ctx is
// a request's context.
func CancelRequest(ctx context.Context, cause error) bool {
	e, ok := ctx.Value(inflightKey{}).(*inflight)
	if ok {
		e.cancel(cause)
	}
	return ok
}

// run calls the handler and sends its response. The in-flight token is
// given back only once the response is handed to the stream, so responses
// waiting to be written count against MaxInFlight.
func (c *Conn) run(e *inflight) {
	req, r := e.req, e.route
	result, err := c.call(e, req, r.Handler)
	owed, send := c.finishInflight(e, true)
	e.cancel(nil)
	defer func() { <-c.sem }()
	if !send || errors.Is(err, ErrNoResponse) {
		if owed {
			c.deliver(e.batch, req.ID, nil, false) // settles the batch, if any
		}
		e.answered(false)
		if r.CloseAfter {
			c.Close()
		}
		return
	}
	var frame []byte
	var buf *[]byte // a reused buffer that holds frame
	if c.frames.New != nil && err == nil && e.batch == nil && !r.CloseAfter {
		buf = c.frames.Get().(*[]byte)
		frame = c.appendResponse((*buf)[:0], req, r.Result, result)
	} else {
		frame = c.encodeResponse(req, r.Result, result, err)
	}
	var derr error
	switch {
	case r.CloseAfter && e.batch != nil:
		e.batch.closeWhenAnswered() // closing now would drop the batch's answer
		derr = c.deliver(e.batch, req.ID, frame, false)
	case r.CloseAfter:
		derr = c.deliver(nil, req.ID, frame, true) // out before the close
		e.answered(derr == nil)
		c.Close()
		return
	default:
		derr = c.deliver(e.batch, req.ID, frame, false)
	}
	if buf != nil && cap(frame) <= maxReusedFrame {
		*buf = frame[:0] // the stream is done with it (dataCopier)
		c.frames.Put(buf)
	}
	e.answered(derr == nil)
}

// maxReusedFrame bounds the response buffers kept for reuse.
const maxReusedFrame = 16 << 10

// appendResponse is encodeResponse of a success into dst.
func (c *Conn) appendResponse(dst []byte, req *Request, transform func(any) any, result any) []byte {
	if transform != nil {
		result = transform(result)
	}
	frame, err := appendResult(dst, req.ID, result)
	if err != nil {
		c.log.Error("could not encode a result", "method", req.Method, "error", err)
		frame = c.encodeError(req.ID, req.Params, NewError(CodeInternalError,
			"Internal error: the result of "+quote(req.Method)+" could not be encoded as JSON"))
	}
	return frame
}

// encodeResponse encodes a handler's outcome as a response frame; a
// success result passes through transform first, when there is one.
func (c *Conn) encodeResponse(req *Request, transform func(any) any, result any, err error) []byte {
	if err != nil {
		return c.encodeError(req.ID, req.Params, err)
	}
	if transform != nil {
		result = transform(result)
	}
	frame, err := encodeResult(req.ID, result)
	if err != nil {
		c.log.Error("could not encode a result", "method", req.Method, "error", err)
		frame = c.encodeError(req.ID, req.Params, NewError(CodeInternalError,
			"Internal error: the result of "+quote(req.Method)+" could not be encoded as JSON"))
	}
	return frame
}

// call runs h, turning a panic into -32603.
func (c *Conn) call(ctx context.Context, req *Request, h Handler) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("recovered from a panic in a request handler", "method", req.Method,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			result, err = nil, NewError(CodeInternalError, "Internal error: the server failed while handling "+
				quote(req.Method)+"; it keeps serving")
		}
	}()
	return h.Handle(ctx, req)
}

// notify hands a notification to the dispatcher on the reading goroutine,
// recovering a panic.
func (c *Conn) notify(n *Notification) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("recovered from a panic in a notification handler", "method", n.Method,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	c.disp.Notification(c.ctx, n)
}
