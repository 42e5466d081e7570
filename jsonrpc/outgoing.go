package jsonrpc

import (
	"bytes"
	"context"
	"fmt"
)

// Notify sends a notification to the peer. When ctx is a request's context
// the notification belongs to that request, and the transport is told so
// (Streamable HTTP sends it on that request's stream). It returns ErrClosed
// once the connection is closed.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	frame, err := encodeCall(ID{}, method, params)
	if err != nil {
		return err
	}
	return c.write(Outgoing{Data: frame, Related: c.related(ctx)})
}

// related returns the id of the request of this connection whose context
// ctx is, or the zero ID: a context of another connection's request (a
// handler notifying every session, say) relates to nothing here.
func (c *Conn) related(ctx context.Context) ID {
	if e, ok := ctx.Value(inflightKey{}).(*inflight); ok && e.conn == c {
		return e.req.ID
	}
	return ID{}
}

// Call sends a request to the peer and waits for its response, the end of
// ctx, or the connection's end. When ctx ends first, the peer is told the
// call was abandoned (Options.CancelCall) and the cause of ctx is returned.
// A JSON-RPC error from the peer is returned as an *Error. When ctx is a
// request's context the call belongs to that request (see Notify).
func (c *Conn) Call(ctx context.Context, method string, params any) ([]byte, error) {
	id := StringID(fmt.Sprintf("mcprt-%d", c.nextID.Add(1)))
	frame, err := encodeCall(id, method, params)
	if err != nil {
		return nil, err
	}
	ch := make(chan *Response, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	related := c.related(ctx)
	if err := c.write(Outgoing{Data: frame, Related: related}); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, r.Error
		}
		return r.Result, nil
	case <-ctx.Done():
		cause := context.Cause(ctx)
		if f := c.opts.CancelCall; f != nil && !c.closed.Load() {
			if m, p := f(id, cause); m != "" {
				if frame, err := encodeCall(ID{}, m, p); err == nil {
					_ = c.write(Outgoing{Data: frame, Related: related})
				}
			}
		}
		return nil, cause
	case <-c.done:
		return nil, ErrClosed
	}
}

// deliverResponse hands a peer's response to the call waiting for it; an
// unmatched response is logged and dropped.
func (c *Conn) deliverResponse(r *Response) {
	c.mu.Lock()
	ch, ok := c.pending[r.ID]
	delete(c.pending, r.ID)
	c.mu.Unlock()
	if !ok {
		c.log.Warn("dropped a response that matches no request the server sent", "id", clip([]byte(r.ID.String())))
		return
	}
	ch <- r
}

// encodeCall encodes a request (id set) or notification (zero id).
func encodeCall(id ID, method string, params any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"jsonrpc":"2.0",`)
	if !id.IsZero() {
		buf.WriteString(`"id":`)
		buf.Write(id.appendJSON(buf.AvailableBuffer()))
		buf.WriteByte(',')
	}
	buf.WriteString(`"method":`)
	buf.WriteString(quote(method))
	if params != nil {
		buf.WriteString(`,"params":`)
		if err := appendValue(&buf, params); err != nil {
			return nil, fmt.Errorf("jsonrpc: encoding params of %s: %w", method, err)
		}
	}
	buf.WriteString("}\n")
	return buf.Bytes(), nil
}
