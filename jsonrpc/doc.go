// Package jsonrpc is mcprt's JSON-RPC 2.0 engine. It depends on nothing
// outside the standard library: besides it, it imports only two of the
// module's internal packages, jsontext (JSON text helpers) and idle (a
// waitable job count), which import the standard library alone. It knows
// nothing about MCP: no method names, no lifecycle, no protocol revisions.
//
// # Layers
//
// A Stream is one connection of a transport: it reads whole incoming
// messages and writes whole outgoing ones. Line is the newline-delimited
// transport (stdio); NewMemoryPair gives two connected in-memory ends, for
// tests and for programs that embed server and client in one process; the
// Streamable HTTP transport lives elsewhere and implements the same
// interface.
//
// A Conn runs one connection over a Stream: it decodes each message
// (Decode walks the top-level object with an encoding/json streaming
// decoder, matches member names case-sensitively, rejects duplicates and
// case variants, and keeps the id as its exact JSON text; the common
// well-formed envelope — one object, only the six envelope members, each
// spelled exactly and once — is taken in one strict pass by
// jsontext.ScanObject instead, and anything else falls back to the
// streaming decoder, the reference that both paths answer alike), keeps the table
// of requests in flight keyed by that text, gives each request a context,
// bounds the requests in flight, recovers panics, and sends requests and
// notifications of its own (Call, Notify). What each message means is the
// business of a Dispatcher, the layer above: it routes requests
// (Dispatcher.Route), handles notifications and says whether batches are
// allowed.
//
// Each message is decoded once. A transport that must decode a message
// itself before handing it over (HTTP answers a POST by what it carries)
// is a MessageReader: it hands the Conn the decoded message (Incoming),
// which the Conn routes as it is. A Decoder decodes message after message
// with its buffers reused; DecodeInPlace, for a message the caller gives
// away (an HTTP body), returns params that are slices of it, not copies.
//
// A minimal server:
//
//	type echo struct{}
//
//	func (echo) Route(ctx context.Context, req *jsonrpc.Request) jsonrpc.Route {
//		return jsonrpc.Route{Handler: jsonrpc.HandlerFunc(
//			func(ctx context.Context, req *jsonrpc.Request) (any, error) { return req.Params, nil })}
//	}
//	func (echo) Notification(context.Context, *jsonrpc.Notification) {}
//	func (echo) Batch() *jsonrpc.Error                                 { return nil }
//
//	conn := jsonrpc.NewConn(jsonrpc.NewLine(os.Stdin, os.Stdout, jsonrpc.LineOptions{}), echo{}, jsonrpc.Options{})
//	err := conn.Serve(ctx)
//
// # Wire rules
//
// Not valid JSON (or not UTF-8, or nested deeper than encoding/json
// accepts) is -32700 with id null. Valid JSON that is no request,
// notification or response is -32600, echoing the id when the message has
// exactly one id member of a valid type. An unknown method is -32601. A
// request whose id equals (as text: 1 and 1.0 differ) that of a request
// still in flight is -32600. Notifications never get a response. A batch
// ([...]) is processed element by element and answered with one array,
// when the Dispatcher allows batches at all; its answer is bounded
// (Options.MaxBatchResponseBytes). Responses from the peer are matched to
// the calls waiting for them; unmatched ones are logged and dropped.
//
// # Execution model
//
// One goroutine at a time is the reader. It reads a message, decodes it,
// and runs the request's handler itself: a fast handler (most are) costs no
// goroutine and no hand-off between threads. If the handler is still
// running after 100 µs, a new goroutine becomes the reader and the old one
// finishes the handler alone, so a slow handler never blocks the next
// request for longer than that. Inline routes (cheap requests that change
// state) always run on the reader, in order. Route and Notification run on
// the reader, in arrival order.
//
// Each request has a context, cancelled by Conn.Cancel (the peer's
// cancellation: no response is sent), by CancelRequest (a deadline in the
// layer above: the handler's answer is still sent), or when the connection
// closes; context.Cause tells which. Respond sends a request's response
// before its handler returns and reports whether the peer got it;
// OnAnswered lets a handler that answers by returning hear the same. Handlers
// must honour their context; the engine cancels it and never kills them.
//
// # Bounds
//
// Requests in flight are bounded (Options.MaxInFlight, default 1024), and a
// request counts until its response is handed to the stream; at the bound
// the reader stops reading. A Stream that is a Pacer (Line is) also stops
// the reader while its queued output is over its budget, so a client that
// does not read its output cannot make the server buffer without bound.
// Line gathers the responses made while more input is buffered and writes
// them together in calls of at most PIPE_BUF bytes of whole lines; a
// gathered batch is written once it holds 64 KiB or has waited 1 ms.
// Because Line is done with a message when Write returns (it copied it or
// wrote it), a Conn over it encodes success responses into buffers it
// reuses.
//
// # Concurrency
//
// Conn's exported methods are safe for concurrent use. Serve is called
// once. Each request's response is written at most once, whatever races
// between the handler, Respond, the peer's cancellation and the close.
package jsonrpc
