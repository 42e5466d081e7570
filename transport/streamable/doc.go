// Package streamable serves an mcp.Server over MCP's Streamable HTTP
// transport, with the standard library's net/http only.
//
// # The endpoint
//
// One URL path (default /mcp) takes three methods:
//
//   - POST carries one JSON-RPC message from the client (a batch only where
//     the session's negotiated revision, 2025-03-26, has batches; otherwise
//     the session answers it with one -32600). A notification or a response
//     is answered 202 Accepted with no body once the session has read it. A
//     request is answered with its response: as one application/json body
//     (with its Content-Length, never chunked) when the response is the
//     first message the request produces, or else
//     as a text/event-stream that carries, in order, the notifications and
//     requests the server sends while handling it, then the response, and
//     then ends. Config.ResponseMode can force either form ("json" sends
//     what the request produces before its response to the GET stream
//     instead). A POST without Mcp-Session-Id must be initialize: it opens a
//     session, and its answer carries the new Mcp-Session-Id (only when
//     initialize succeeded).
//   - GET opens an event stream for what belongs to no request
//     (list_changed, resource updates, requests of the server's own). A
//     session may have several at once; each message goes to exactly one of
//     them, the newest being read. Messages sent while no GET stream is open
//     wait, within the replay bounds, for the next one.
//   - DELETE ends the session as a server shutdown would (its requests are
//     cancelled and its handlers waited for), then answers 204.
//
// The client must send Content-Type: application/json with a POST (else
// 415) and accept both application/json and text/event-stream (else 406; no
// Accept header accepts anything). A request whose MCP-Protocol-Version is
// not a revision mcprt speaks gets 400; without the header, 2025-03-26 is
// assumed. A request without Mcp-Session-Id (except initialize) gets 400;
// with an id that is unknown, expired or ended, 404: the client should
// initialize again. Every error body is a JSON-RPC error response with id
// null (or the request's id) whose data holds a code (INVALID_ARGUMENT,
// NOT_FOUND, UNAUTHORIZED, RESOURCE_EXHAUSTED), the HTTP status and, when
// the request named a session, its correlationId. Bodies that are not
// valid JSON, or not a JSON-RPC message, get the session's own -32700 or
// -32600 answer with status 400.
//
// # Sessions
//
// The request that opens a session (initialize, or a stateless request)
// may choose the session's tools with the Mcp-Tools header or the tools
// query parameter: profile names, tool names and prefixes ending in "*",
// separated by commas (mcp.Server.SessionToolSet). An entry that matches
// no tool is 400; without either, the server's tools.profile applies.
//
// A session id is 128 random bits from crypto/rand, as text. Each session
// is one mcp.Session over its own jsonrpc.Stream with transport name
// "http" and its own connectionCorrelationId. A POST decodes its message
// once, in place (the params the handler gets are slices of the body),
// and hands the decoded message to the connection (jsonrpc.MessageReader).
// A session's messages reach its connection one at a time, in the order
// their POSTs are read: the
// connection's in-flight bound (transport.maxInFlight) holds further POSTs
// back. A session ends on DELETE, on the client's shutdown request, when
// it has had no request in progress and no open stream for
// sessionIdleTimeoutMs (timed by the injectable core.Clock), or when the
// server shuts down. At most maxSessions sessions exist; initialize
// beyond that gets 503.
//
// A request whose answer has no id (an unreadable message, a batch) is
// served one at a time per session, since such answers can only be told
// apart by order.
//
// # Event streams and resumption
//
// Every event has an id "<stream>-<sequence>", unique within its session.
// Each stream keeps its latest events, at most replayBufferEvents of them
// and at most transport.maxOutputBytes bytes besides the newest, so a
// client that lost a stream may GET with Last-Event-ID and receive what
// followed that event and is still kept, then the live rest. This works
// for GET streams and for a POST's stream alike: a call whose client went
// away runs on (disconnecting does not cancel), and its response waits for
// resumption. A Last-Event-ID of a stream no longer kept opens a new GET
// stream; one whose sequence that stream never issued replays the stream
// from the start of what it keeps; a malformed one gets 400. For sessions of revision 2025-11-25 and
// later, every stream begins with a priming event (an id, a retry delay,
// empty data), so that a client can resume even before the first message;
// and a tool may end its request's stream early (Handler.CloseStream), the
// client then fetching the rest with GET. A POST whose request the client
// cancels (notifications/cancelled) ends: 204 if nothing was sent yet.
//
// Memory stays bounded whatever a client does. While a client reads a
// request's stream, the handler sending to it waits whenever the client is
// a budget behind (backpressure); a message that belongs to no request
// never waits: a GET stream that far behind is cut off instead, and its
// oldest events make room. Every write has a deadline (writeTimeoutMs), so
// a client that stops reading loses its stream, not the server's memory,
// and other clients are not delayed.
//
// # Security
//
// The listener binds 127.0.0.1 by default. Every request passes, in this
// order: the Host check (localhost, loopback addresses, and allowedHosts;
// else 403), the Origin check when the header is present (localhost
// origins and allowedOrigins; else 403) — together the protection against
// DNS rebinding — then, when authTokenEnvVar names a variable, the bearer
// token check (Authorization: Bearer <token>; else 401 with
// WWW-Authenticate: Bearer). Tokens are compared as SHA-256 hashes in
// constant time and never logged. When tools.adminPolicy.mode is token, the
// admin token (tools.adminPolicy.tokenEnvVar) is accepted too; a session
// opened with it must send it with every request (else 403), and
// Handler.AdminAuthorized reports such sessions so that an admin policy
// can admit admin tools on them only. A variable that is named but unset
// or empty stops NewHandler: a server meant to be protected never starts
// open. Serving a non-loopback address without a token logs a warning.
// Allowed origins get CORS headers, and OPTIONS preflights are answered.
//
// # Connections and listens
//
// Serve bounds the open connections (maxConnections, and
// maxConnectionsPerClient per remote IP): a connection over a bound closes
// the oldest connection that serves no request (one sending its headers,
// or idle) to make room, and is refused with 503 only when every counted
// connection is serving a request (conns.go). Every answer given before a
// request's body was read whole carries Connection: close, and the server
// never waits to discard such a body, so a client that promises a body
// and never sends it holds nothing. Serve reads each request, its
// headers and then its body, within readTimeoutMs of its first byte (the
// server's ReadTimeout, which net/http lifts once the body is read whole);
// a Handler mounted in another server bounds the body by readTimeoutMs
// from when it starts reading it. A bearer-token variable whose value
// has white space around it stops NewHandler (no header could carry it).
// A subscriptions/listen request of the stateless revision takes no
// stateless request slot (maxSessions); listens are bounded apart, by
// maxListens and maxListensPerClient (listens.go).
//
// # Shutdown
//
// When Serve's context ends, new sessions and messages get 503 and GET
// streams end, while requests in progress are answered, for up to
// server.shutdownTimeoutMs. Then every session closes as mcp.Server's
// Shutdown closes it, and the connections close.
//
// # Use
//
// The binary calls ListenAndServe; a program that has its own HTTP server
// mounts the Handler:
//
//	h, err := streamable.NewHandler(srv, streamable.DefaultConfig(), streamable.Options{Logger: logger})
//	if err != nil { ... }
//	mux.Handle("/mcp", h)
//	...
//	h.Close(ctx) // at shutdown: ends every session
//
// Config is the "transport.http" section of the mcprt binary's
// configuration: its json, config and help tags are what package config
// loads and documents (MCPRT_TRANSPORT_HTTP_* variables); an embedder
// fills it in code, starting from DefaultConfig. Options.AdminTokenEnvVar names the
// variable of the admin token (AdminAuthorized).
//
// # Concurrency
//
// Handler's methods are safe for concurrent use. The per-session stream
// follows jsonrpc.Stream's contract: Read from one goroutine at a time,
// Write from many, Close at any time and more than once.
package streamable
