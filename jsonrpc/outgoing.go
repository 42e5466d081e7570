package jsonrpc

import (
	"bytes"
	"context"
	"fmt"
)

// Notify sends a notification to the client. It returns ErrClosed once the
// connection is closed.
func (c *Conn) Notify(method string, params any) error {
	frame, err := encodeCall(ID{}, method, params)
	if err != nil {
		return err
	}
	return c.write(frame)
}

// Call sends a request to the client and waits for its response, ctx, or
// the connection's end. A JSON-RPC error from the client is returned as an
// *Error.
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
	if err := c.write(frame); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, r.Error
		}
		return r.Result, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-c.done:
		return nil, ErrClosed
	}
}

// deliverResponse hands a client's response to the call waiting for it;
// an unmatched response is logged and dropped.
func (c *Conn) deliverResponse(r *Response) {
	c.mu.Lock()
	ch, ok := c.pending[r.ID]
	delete(c.pending, r.ID)
	c.mu.Unlock()
	if !ok {
		c.log.Warn("dropped a response that matches no request the server sent", "id", r.ID.String())
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
