package jsonrpc

import "context"

// Handler handles one request. It returns the result to send (any value
// encoding/json can encode; a json.RawMessage is sent compacted, a
// CompactJSON as it is) or an error: an *Error is sent as that JSON-RPC
// error, ErrNoResponse sends nothing (the handler answered through Respond,
// or must not answer), and any other error becomes -32603.
//
// Handlers run concurrently with each other unless their Route is Inline.
// ctx is cancelled when the peer cancels the request (Conn.Cancel), the
// layer above cancels it (CancelRequest), or the connection closes;
// context.Cause tells which. ConnFromContext(ctx) is the connection and
// RequestID(ctx) the request's id.
type Handler interface {
	Handle(ctx context.Context, req *Request) (any, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req *Request) (any, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, req *Request) (any, error) { return f(ctx, req) }

var _ Handler = HandlerFunc(nil)
