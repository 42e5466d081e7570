package mcp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
)

// Options configures a Server. Nil fields get defaults: the default
// configuration, a discarding logger, random UUIDs and the system clock.
type Options struct {
	// Config is the server's configuration (core.DefaultConfig when nil).
	Config *core.Config
	// Logger receives the server's logs; request-scoped loggers derive
	// from it.
	Logger *slog.Logger
	// IDs makes connection correlation ids, correlation ids and run ids.
	IDs core.IDGenerator
	// Clock tells the time.
	Clock core.Clock
	// Transport names the transport sessions arrive on ("stdio" by
	// default); admin policy decisions depend on it.
	Transport string
}

// Server is an MCP server: its configuration and everything registered on
// it, shared by the sessions it serves. Create it with NewServer.
type Server struct {
	cfg       core.Config
	log       *slog.Logger
	ids       core.IDGenerator
	clock     core.Clock
	transport string
}

// NewServer returns a server configured by opts.
func NewServer(opts Options) (*Server, error) {
	s := &Server{
		log:       opts.Logger,
		ids:       opts.IDs,
		clock:     opts.Clock,
		transport: opts.Transport,
	}
	if opts.Config != nil {
		s.cfg = *opts.Config
	} else {
		s.cfg = core.DefaultConfig("dev")
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.ids == nil {
		s.ids = &core.UUIDGenerator{}
	}
	if s.clock == nil {
		s.clock = core.SystemClock{}
	}
	if s.transport == "" {
		s.transport = "stdio"
	}
	if err := validateConfig(s.cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// validateConfig catches a configuration built in code that LoadConfig would
// have refused.
func validateConfig(cfg core.Config) error {
	if cfg.Transport.MaxMessageBytes < 1 || cfg.Transport.MaxInFlight < 1 ||
		cfg.Server.ShutdownTimeoutMs < 1 {
		return fmt.Errorf("mcp: invalid configuration: transport.maxMessageBytes, transport.maxInFlight " +
			"and server.shutdownTimeoutMs must be >= 1 (start from core.DefaultConfig)")
	}
	return nil
}

// Config returns a copy of the server's configuration.
func (s *Server) Config() core.Config { return s.cfg }

// Session is one MCP connection: its lifecycle state, negotiated revision
// and requests in flight.
type Session struct {
	srv  *Server
	conn *jsonrpc.Conn
	log  *slog.Logger
	cid  string // connection correlation id

	mu       sync.Mutex // guards the fields below
	version  string     // negotiated protocol revision
	client   clientInfo
	shutdown bool // the client asked for shutdown
}

// NewSession returns a session that reads messages from r and writes them
// to w. Call Serve to run it.
func (s *Server) NewSession(r io.Reader, w io.Writer) *Session {
	sess := &Session{srv: s, cid: s.ids.NewID()}
	sess.log = s.log.With("connectionCorrelationId", sess.cid)
	sess.conn = jsonrpc.NewConn(r, w, sess.router(), jsonrpc.Options{
		MaxMessageBytes:      s.cfg.Transport.MaxMessageBytes,
		MaxInFlight:          s.cfg.Transport.MaxInFlight,
		Logger:               sess.log,
		CorrelationID:        sess.cid,
		RequestCorrelationID: clientCorrelationID,
	})
	return sess
}

// CorrelationID returns the session's connection correlation id.
func (sess *Session) CorrelationID() string { return sess.cid }

// State returns the session's lifecycle state.
func (sess *Session) State() jsonrpc.State { return sess.conn.State() }

// ProtocolVersion returns the negotiated revision ("" before initialize).
func (sess *Session) ProtocolVersion() string {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.version
}

// ShutdownRequested reports whether the session ended because the client
// sent shutdown.
func (sess *Session) ShutdownRequested() bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.shutdown
}

// Serve runs the session until its input ends, the client sends shutdown,
// ctx is done or Close is called. On return the session is CLOSED: nothing
// more is written and every request's context is cancelled.
func (sess *Session) Serve(ctx context.Context) error {
	sess.log.Info("session started")
	err := sess.conn.Serve(ctx)
	sess.log.Info("session closed")
	return err
}

// Done is closed when the session closes.
func (sess *Session) Done() <-chan struct{} { return sess.conn.Done() }

// Close closes the session (SPEC §4.2): the state becomes CLOSED, no further
// bytes are written, and every in-flight request's context is cancelled.
func (sess *Session) Close() { sess.conn.Close() }

// Wait waits for the session's request handlers to return, or for ctx.
func (sess *Session) Wait(ctx context.Context) error {
	return sess.conn.Wait(ctx)
}
