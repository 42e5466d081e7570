// Package jsonrpc is mcprt's line-delimited JSON-RPC 2.0 engine. It imports
// the standard library only and knows nothing about MCP methods.
//
// A Framer splits the input into lines under a size limit; Decode walks each
// line's top-level object with an encoding/json streaming decoder, matching
// member names case-sensitively, rejecting duplicates and keeping the id as
// its exact JSON text (type ID). A Conn reads, decodes and routes lines,
// runs request handlers concurrently under a bound on requests in flight,
// and writes every response through one write path. A Router is the state
// machine over (connection state × message kind × method) into which the
// layer above plugs its lifecycle gate and its handlers.
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
// Concurrency: Conn's exported methods are safe for concurrent use. Handlers
// must honour their context; the engine cancels it and never kills them.
package jsonrpc
