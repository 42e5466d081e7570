package mcp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

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
	// Audit sees every tools/call that passed validation (default: a
	// no-op sink).
	Audit AuditSink
	// Telemetry samples the runtime for health; nil means the server
	// makes its own. Its owner runs Telemetry.Run to keep the rolling
	// window filled; without it every health call still takes a sample.
	Telemetry *core.Telemetry
}

// Server is an MCP server: its configuration and everything registered on
// it, shared by the sessions it serves. Create it with NewServer.
type Server struct {
	cfg       core.Config
	log       *slog.Logger
	ids       core.IDGenerator
	clock     core.Clock
	transport string
	audit     AuditSink
	telemetry *core.Telemetry
	started   time.Time
	schemas   *schemaCompiler
	slots     *core.Slots
	exhausted core.ExhaustionCounter

	toolsMu  sync.RWMutex // guards tools and toolList
	tools    map[string]*registeredTool
	toolList []*registeredTool // sorted by name

	sessMu   sync.Mutex // guards sessions
	sessions map[*Session]struct{}
}

// NewServer returns a server configured by opts.
func NewServer(opts Options) (*Server, error) {
	s := &Server{
		log:       opts.Logger,
		ids:       opts.IDs,
		clock:     opts.Clock,
		transport: opts.Transport,
		audit:     opts.Audit,
		telemetry: opts.Telemetry,
		schemas:   newSchemaCompiler(),
		tools:     map[string]*registeredTool{},
		sessions:  map[*Session]struct{}{},
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
	if s.audit == nil {
		s.audit = NopAuditSink{}
	}
	if s.telemetry == nil {
		s.telemetry = core.NewTelemetry(s.clock)
	}
	if err := validateConfig(s.cfg); err != nil {
		return nil, err
	}
	s.slots = core.NewSlots(s.cfg.Resources.MaxConcurrentExecutions)
	s.started = s.clock.Now()
	return s, nil
}

// validateConfig catches a configuration built in code that LoadConfig would
// have refused.
func validateConfig(cfg core.Config) error {
	if cfg.Transport.MaxMessageBytes < 1 || cfg.Transport.MaxInFlight < 1 ||
		cfg.Server.ShutdownTimeoutMs < 1 || cfg.Resources.MaxConcurrentExecutions < 1 ||
		cfg.Tools.DefaultTimeoutMs < 1 || cfg.Tools.MaxPayloadBytes < 1 ||
		cfg.Tools.MaxResultBytes < 1 || cfg.Tools.PageSize < 1 {
		return fmt.Errorf("mcp: invalid configuration: every limit must be >= 1 " +
			"(start from core.DefaultConfig and change what you need)")
	}
	return nil
}

// Config returns a copy of the server's configuration.
func (s *Server) Config() core.Config { return s.cfg }

// Transport returns the name of the transport the server serves ("stdio").
func (s *Server) Transport() string { return s.transport }

// Telemetry returns the server's runtime sampler.
func (s *Server) Telemetry() *core.Telemetry { return s.telemetry }

// Stats are the server's live figures, as the health tool reports them.
type Stats struct {
	// Uptime is the time since NewServer.
	Uptime time.Duration
	// ConcurrentExecutions is the number of concurrency slots in use.
	ConcurrentExecutions int
	// MaxConcurrentExecutions is resources.maxConcurrentExecutions.
	MaxConcurrentExecutions int
	// ConsecutiveExhausted counts consecutive tools/call rejections with
	// RESOURCE_EXHAUSTED at the payload or slot step (SPEC §8.1).
	ConsecutiveExhausted int
}

// Stats returns the server's live figures.
func (s *Server) Stats() Stats {
	return Stats{
		Uptime:                  s.clock.Now().Sub(s.started),
		ConcurrentExecutions:    s.slots.InUse(),
		MaxConcurrentExecutions: s.slots.Max(),
		ConsecutiveExhausted:    s.exhausted.Value(),
	}
}

// liveSessions returns the sessions being served.
func (s *Server) liveSessions() []*Session {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	out := make([]*Session, 0, len(s.sessions))
	for sess := range s.sessions {
		out = append(out, sess)
	}
	return out
}

// Session is one MCP connection: its lifecycle state, negotiated revision
// and requests in flight.
type Session struct {
	srv  *Server
	conn *jsonrpc.Conn
	log  *slog.Logger
	cid  string // connection correlation id

	mu       sync.Mutex             // guards the fields below
	version  string                 // negotiated protocol revision
	shutdown bool                   // the client asked for shutdown
	calls    map[*toolCall]struct{} // tool calls whose handler has not returned
}

// NewSession returns a session that reads messages from r and writes them
// to w. Call Serve to run it.
func (s *Server) NewSession(r io.Reader, w io.Writer) *Session {
	sess := &Session{srv: s, cid: s.ids.NewID(), calls: map[*toolCall]struct{}{}}
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
	s := sess.srv
	s.sessMu.Lock()
	s.sessions[sess] = struct{}{}
	s.sessMu.Unlock()
	defer func() {
		s.sessMu.Lock()
		delete(s.sessions, sess)
		s.sessMu.Unlock()
	}()
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

// Wait waits for the session's request and tool handlers to return (a tool
// handler may outlive its request's TIMEOUT answer), or for ctx. When ctx
// ends first, every tool call still running gets its completion record
// with outcome aborted (SPEC §4.2) and ctx's error is returned.
func (sess *Session) Wait(ctx context.Context) error {
	if err := sess.conn.Wait(ctx); err != nil {
		sess.abandonCalls()
		return err
	}
	return nil
}
