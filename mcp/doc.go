// Package mcp is the MCP server of mcprt: sessions and their lifecycle,
// version negotiation, the method table, the tool registry and the
// tools/call pipeline, built on the jsonrpc engine and the core
// foundations. It works over any jsonrpc.Stream: stdio lines, in-memory
// pairs, Streamable HTTP.
//
// The smallest server, over stdio:
//
//	srv, err := mcp.NewServer(mcp.Options{Name: "weather", Version: "1.0.0"})
//	if err != nil { ... }
//	err = mcp.AddTypedTool(srv, mcp.Tool{Name: "forecast", Description: "..."},
//		func(ctx context.Context, req *mcp.CallToolRequest, in ForecastIn) (ForecastOut, error) { ... })
//	err = srv.RunStdio(ctx) // until stdin ends, the client sends shutdown, or ctx is done
//
// # Layers
//
// A Server holds the configuration and everything registered; it is shared
// by its sessions and safe for concurrent use. Connect makes a Session over
// a stream; Run connects one, serves it and shuts it down gracefully.
// A Session is the jsonrpc.Dispatcher of its connection: Route is the
// lifecycle gate and method router, the one place that decides what a
// request means in the session's state.
//
// # Lifecycle
//
// A session moves STARTING → INITIALIZING → RUNNING → CLOSED, and only
// through one function. In STARTING only initialize and ping are served;
// initialize negotiates the revision (2024-11-05, 2025-03-26, 2025-06-18,
// 2025-11-25: a requested one is echoed, any other is answered with
// 2025-11-25), keeps the client's capabilities and info, and moves to
// INITIALIZING; notifications/initialized moves to RUNNING. A request other
// than initialize and ping before RUNNING gets -32002 "Not initialized"
// with data {code: "NOT_INITIALIZED", message, correlationId} (the
// connection's correlation id); a second initialize gets -32600. ping is
// answered in every state but CLOSED. shutdown answers {} and closes the
// session. JSON-RPC batches are admitted only under 2025-03-26, the one
// revision that has them. Every error response's data carries a
// correlationId: the client's params._meta.correlationId when it sent one
// (a non-empty string of at most 128 bytes), else the connection's.
//
// A request's protocol revision is a property of the request
// (CallToolRequest.ProtocolVersion): the session's for these revisions.
//
// # Methods
//
// The method table maps each method to its handler, the lifecycle rule
// that gates it, and the capability it implies; initialize advertises the
// capabilities computed from it. Tools live in a registry sorted by name
// and paged with opaque cursors (tools.pageSize per page; a cursor the
// server did not make is -32602); changing it sends
// notifications/tools/list_changed to every running session.
//
// # Tool calls
//
// tools/call runs an ordered pipeline: params shape (-32602), ids
// (correlationId from _meta or generated, a runId per call), payload size
// (RESOURCE_EXHAUSTED over tools.maxPayloadBytes), existence (NOT_FOUND),
// authorization, a concurrency slot taken without waiting
// (RESOURCE_EXHAUSTED), input validation against the schema compiled at
// registration (INVALID_ARGUMENT), the exclusive lock, audit enter, the
// handler under its deadline with panics recovered (INTERNAL), the output
// schema check, audit exit, release, and the wrap into a CallToolResult.
// Failures from the payload step on are tool errors: a result with isError
// true whose first text block is the JSON of {code, message, details?,
// retryable, correlationId, runId}.
//
// At the deadline the handler's context is cancelled (context.Cause is
// ErrTimeout) and the client gets TIMEOUT at once; the slot stays held until
// the handler returns. notifications/cancelled cancels the handler's
// context (ErrCancelled) and no answer is sent. Each call writes one
// completion record to the log (two for a timeout: timeout, then
// late_completed) whose outcome says what the client saw.
//
// # Concurrency
//
// Requests run concurrently; a slow tool never blocks ping. A tool handler
// may be called concurrently with itself unless the tool is Exclusive.
// Every request is answered at most once, whatever races between the
// handler, its deadline, the client's cancellation and the session's end.
package mcp
