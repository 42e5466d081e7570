// Package jsonrpc is mcprt's line-delimited JSON-RPC 2.0 engine. It imports
// the standard library only and knows nothing about MCP methods.
//
// A Framer splits the input into lines under a size limit; Decode walks each
// line's top-level object with an encoding/json streaming decoder
// (json.Decoder.Token), matching member names case-sensitively, rejecting
// duplicates and keeping the id as its exact JSON text (type ID). A Conn
// reads, decodes and routes lines, runs request handlers under a bound on
// requests in flight, and writes every response through one write path. A
// Router is the state machine over (connection state × message kind ×
// method) into which the layer above plugs its lifecycle gate and handlers.
//
// A minimal server:
//
//	r := jsonrpc.NewRouter(jsonrpc.RouterConfig{})
//	r.Handle("ping", jsonrpc.Method{Phase: jsonrpc.PhaseAlways, Inline: true,
//		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
//			return struct{}{}, nil
//		})})
//	conn := jsonrpc.NewConn(os.Stdin, os.Stdout, r, jsonrpc.Options{})
//	err := conn.Serve(ctx)
//
// # Execution model
//
// One goroutine at a time is the reader. It decodes a line and runs the
// request's handler itself: a fast handler (most are) costs no goroutine and
// no hand-off between threads. If the handler is still running after
// 100 µs, a new goroutine becomes the reader and the old one finishes the
// handler alone, so a slow handler never blocks the next request for longer
// than that. Methods registered Inline (cheap lifecycle methods) always run
// on the reader, in order.
//
// Responses go through one write path (a group commit): a lone response is
// written at once by the goroutine that made it; responses made while the
// reader still has input buffered, or while another write is in progress,
// are gathered and written together, in calls of at most PIPE_BUF bytes of
// whole frames, so a cut-short write never leaves half a line.
//
// Each request has a context, cancelled by Conn.Cancel (the client's
// cancellation: no response is sent), by CancelRequest (a deadline in the
// layer above), or when the connection closes. Respond sends a request's
// response before its handler returns (an early TIMEOUT answer). Handlers
// must honour their context; the engine cancels it and never kills them.
//
// Concurrency: Conn's exported methods are safe for concurrent use.
package jsonrpc
