package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/mcprt/mcprt/jsonrpc"
)

// Session is one MCP connection: its lifecycle state, the revision and
// client it negotiated, and its requests in flight. Create it with
// Server.Connect and run it with Serve (Server.Run does both). Its methods
// are safe for concurrent use.
type Session struct {
	srv       *Server
	conn      *jsonrpc.Conn
	log       *slog.Logger
	cid       string // connection correlation id
	transport string
	routes    map[string]jsonrpc.Route // the method table, bound to this session
	stateless bool                     // every request is of the stateless revision
	tools     *ToolSet                 // the tools it sees and may call; nil: all

	state atomic.Int32 // a State; changed only by advance

	mu         sync.Mutex // guards the fields below
	version    string     // negotiated protocol revision
	clientCaps ClientCapabilities
	clientInfo Implementation
	shutdown   bool                   // the client asked for shutdown
	calls      map[*toolCall]struct{} // tool calls whose handler has not returned

	clientLog clientLog  // client logging: the level and rate limit (clientlog.go)
	roots     rootsState // the client's roots: cache and hook (client_roots.go)
}

// SessionOptions configures one session; nil means defaults.
type SessionOptions struct {
	// Transport names the transport the session arrived on (default: the
	// server's Options.Transport).
	Transport string
	// Stateless makes every request of the session one of the stateless
	// revision: there is no initialize, and a request without the _meta
	// that revision requires is -32602. A transport that serves each
	// stateless request on a session of its own sets it.
	Stateless bool
	// Tools, when not nil, is the session's own choice of tools (see
	// Server.SessionToolSet); nil means the server's Options.Tools.
	Tools *ToolSet
}

// Connect returns a session over stream. Call Serve to run it.
func (s *Server) Connect(stream jsonrpc.Stream, opts *SessionOptions) *Session {
	sess := &Session{srv: s, cid: s.ids.NewID(), transport: s.transport, calls: map[*toolCall]struct{}{}}
	if opts != nil && opts.Transport != "" {
		sess.transport = opts.Transport
	}
	sess.stateless = opts != nil && opts.Stateless
	sess.tools = s.toolSet
	if opts != nil && opts.Tools != nil {
		sess.tools = opts.Tools
	}
	sess.log = s.log.With("connectionCorrelationId", sess.cid)
	sess.routes = bindMethods(sess)
	sess.conn = jsonrpc.NewConn(stream, (*dispatcher)(sess), jsonrpc.Options{
		MaxInFlight:           s.opts.Limits.MaxInFlight,
		MaxBatchResponseBytes: s.opts.Limits.MaxBatchResponseBytes,
		Logger:                s.engineLog.With("connectionCorrelationId", sess.cid),
		ErrorData:             sess.errorData,
		CancelCall:            cancelNotification,
	})
	return sess
}

// CorrelationID returns the session's connection correlation id.
func (sess *Session) CorrelationID() string { return sess.cid }

// Transport names the transport the session arrived on ("stdio", ...).
func (sess *Session) Transport() string { return sess.transport }

// Server returns the server the session belongs to.
func (sess *Session) Server() *Server { return sess.srv }

// State returns the session's lifecycle state.
func (sess *Session) State() State { return State(sess.state.Load()) }

// ProtocolVersion returns the negotiated revision ("" before initialize).
func (sess *Session) ProtocolVersion() string {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.version
}

// ClientCapabilities returns what the client declared in initialize.
func (sess *Session) ClientCapabilities() ClientCapabilities {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.clientCaps
}

// ClientInfo returns the client's name and version from initialize.
func (sess *Session) ClientInfo() Implementation {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.clientInfo
}

// ShutdownRequested reports whether the session ended because the client
// sent shutdown.
func (sess *Session) ShutdownRequested() bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.shutdown
}

// Notify sends a notification to the client. When ctx is a request
// handler's context, the notification belongs to that request (a
// transport with a stream per request sends it there). It returns an error
// once the session is closed.
func (sess *Session) Notify(ctx context.Context, method string, params any) error {
	return sess.conn.Notify(ctx, method, params)
}

// Call sends a request to the client and decodes its result into result
// (when not nil). It returns when the answer arrives, ctx ends (the client
// is then sent notifications/cancelled), or the session closes. A JSON-RPC
// error from the client is returned as a *jsonrpc.Error.
func (sess *Session) Call(ctx context.Context, method string, params, result any) error {
	raw, err := sess.conn.Call(ctx, method, params)
	if err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	return json.Unmarshal(raw, result)
}

// Serve runs the session until its input ends, the client sends shutdown,
// ctx is done or Close is called, and returns promptly in each case. On
// return the session is CLOSED: nothing more is written and every
// request's context is cancelled; handlers may still be running (Wait).
func (sess *Session) Serve(ctx context.Context) error {
	s := sess.srv
	s.sessMu.Lock()
	s.sessions[sess] = struct{}{}
	s.sessMu.Unlock()
	defer func() {
		s.sessMu.Lock()
		delete(s.sessions, sess)
		s.sessMu.Unlock()
	}()
	sess.log.Info("session started", "transport", sess.transport)
	err := sess.conn.Serve(ctx)
	sess.advance(evClose)
	sess.log.Info("session closed")
	return err
}

// Done is closed when the session closes.
func (sess *Session) Done() <-chan struct{} { return sess.conn.Done() }

// Close closes the session: the state becomes CLOSED, no further bytes are
// written, and every in-flight request's context is cancelled.
func (sess *Session) Close() {
	sess.advance(evClose)
	sess.conn.Close()
}

// Wait waits for the session's request and tool handlers to return (a tool
// handler may outlive its request's TIMEOUT answer), or for ctx. When ctx
// ends first, every tool call still running gets its completion record
// with outcome aborted and ctx's error is returned.
func (sess *Session) Wait(ctx context.Context) error {
	if err := sess.conn.Wait(ctx); err != nil {
		sess.abandonCalls()
		return err
	}
	return nil
}
