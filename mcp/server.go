package mcp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
)

// Options configures a Server. Nil fields get defaults: the default
// configuration, a discarding logger, random UUIDs and the system clock.
type Options struct {
	// Name and Version are the serverInfo a client sees. They override
	// server.name and server.version of Config; empty means the
	// configuration's (by default "mcprt" and "dev").
	Name, Version string
	// Config is the server's configuration (core.DefaultConfig when nil).
	// Use core.LoadConfig to read it from a file and MCPRT_* variables.
	Config *core.Config
	// Logger receives the server's logs; request-scoped loggers derive
	// from it.
	Logger *slog.Logger
	// IDs makes connection correlation ids, correlation ids and run ids.
	IDs core.IDGenerator
	// Clock tells the time.
	Clock core.Clock
	// Transport names the transport sessions arrive on when Connect is
	// not told otherwise ("stdio" by default); tools may decide by it
	// (the admin policy does).
	Transport string
	// Audit sees every tools/call that passed validation (default: a
	// no-op sink).
	Audit AuditSink
	// Telemetry samples the runtime for health; nil means the server
	// makes its own. Its owner runs Telemetry.Run to keep the rolling
	// window filled; without it every health call still takes a sample.
	Telemetry *core.Telemetry
	// DroppedLogs reports how many log entries were dropped because the
	// log output was not being read (core.LogWriter.Dropped); the health
	// tool reports it. Nil means none are ever dropped.
	DroppedLogs func() uint64
	// RequestStateKey signs the requestState of stateless input-required
	// results (at least MinRequestStateKeyBytes). Replicas of one
	// deployment share it; nil means a random key per process.
	RequestStateKey []byte
	// Tasks configures the tasks extension (io.modelcontextprotocol/tasks),
	// served by default; see TaskOptions and StartTask.
	Tasks TaskOptions
}

// Server is an MCP server: its configuration and everything registered on
// it, shared by the sessions it serves. Create it with NewServer, register
// tools, then Run it over a transport (or Connect sessions yourself). All
// methods are safe for concurrent use; tools may be added and removed while
// sessions run (they are told with notifications/tools/list_changed).
type Server struct {
	cfg       core.Config
	log       *slog.Logger
	engineLog *slog.Logger // for warnings a client can cause at will
	ids       core.IDGenerator
	clock     core.Clock
	transport string
	audit     AuditSink
	telemetry *core.Telemetry
	dropped   func() uint64
	started   time.Time
	schemas   *schemaCompiler
	slots     *core.Slots
	exhausted core.ExhaustionCounter

	tools     *registry[*registeredTool]
	toolSet   *ToolSet       // tools.profile / tools.enabled: what sessions see unless they choose; nil: all
	resources *resourceSet   // resources, templates, subscriptions
	subHooks  subscribeHooks // OnSubscribe (resources_watch.go)
	prompts   *promptSet

	sessMu   sync.Mutex // guards sessions
	sessions map[*Session]struct{}

	states    *stateSealer // signs and checks requestState
	listeners listeners    // open subscriptions/listen streams
	tasks     *taskStore   // the tasks extension; nil when not served
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
		dropped:   opts.DroppedLogs,
		schemas:   newSchemaCompiler(),
		sessions:  map[*Session]struct{}{},
	}
	if opts.Config != nil {
		s.cfg = *opts.Config
	} else {
		s.cfg = core.DefaultConfig("dev")
	}
	if opts.Name != "" {
		s.cfg.Server.Name = opts.Name
	}
	if opts.Version != "" {
		s.cfg.Server.Version = opts.Version
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
	// Warnings a client can trigger at will (unmatched responses, bad
	// cancellations, over-long lines) pass 10 times a minute per message;
	// the next one that passes says how many were suppressed.
	s.engineLog = slog.New(core.LimitRepeats(s.log.Handler(), s.clock, engineWarnBurst, engineWarnWindow))
	if s.transport == "" {
		s.transport = TransportStdio
	}
	var err error
	if s.toolSet, err = configToolSet(s.cfg.Tools); err != nil {
		return nil, err
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
	if opts.RequestStateKey != nil && len(opts.RequestStateKey) < MinRequestStateKeyBytes {
		return nil, fmt.Errorf("mcp: the requestState key has %d bytes; use at least %d random bytes",
			len(opts.RequestStateKey), MinRequestStateKeyBytes)
	}
	s.states = newStateSealer(opts.RequestStateKey, time.Duration(max(s.cfg.Stateless.RequestStateTTLMs, 1000))*time.Millisecond, s.clock)
	if !opts.Tasks.Disabled {
		s.tasks = newTaskStore(opts.Tasks, s.clock)
	}
	s.slots = core.NewSlots(s.cfg.Resources.MaxConcurrentExecutions)
	s.started = s.clock.Now()
	s.tools = newRegistry("tools", func(rt *registeredTool) string { return rt.def.Name },
		func() { s.notifyRunning(NotifyToolsListChanged) })
	s.resources = newResourceSet(s)
	s.prompts = newPromptSet(s)
	return s, nil
}

// maxDrain bounds how long Shutdown waits for output already accepted.
const maxDrain = 2 * time.Second

const (
	engineWarnBurst  = 10
	engineWarnWindow = time.Minute
)

// TransportStdio is the name of the stdio transport.
const TransportStdio = "stdio"

// validateConfig catches a configuration built in code that LoadConfig would
// have refused.
func validateConfig(cfg core.Config) error {
	if cfg.Transport.MaxMessageBytes < 1 || cfg.Transport.MaxInFlight < 1 ||
		cfg.Transport.MaxOutputBytes < 1 || cfg.Transport.MaxBatchResponseBytes < 1 ||
		cfg.Server.ShutdownTimeoutMs < 1 || cfg.Resources.MaxConcurrentExecutions < 1 ||
		cfg.Tools.DefaultTimeoutMs < 1 || cfg.Tools.MaxPayloadBytes < 1 ||
		cfg.Tools.MaxResultBytes < 1 || cfg.Tools.PageSize < 1 {
		return fmt.Errorf("mcp: invalid configuration: every limit must be >= 1 " +
			"(start from core.DefaultConfig and change what you need)")
	}
	if cfg.Server.Name == "" || cfg.Server.Version == "" {
		return fmt.Errorf("mcp: invalid configuration: server.name and server.version must not be empty")
	}
	return nil
}

// Config returns a copy of the server's configuration.
func (s *Server) Config() core.Config { return s.cfg }

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
	// RESOURCE_EXHAUSTED at the payload or slot step.
	ConsecutiveExhausted int
	// Sessions is the number of sessions being served.
	Sessions int
	// DroppedLogEntries counts log entries dropped because the log output
	// was not being read.
	DroppedLogEntries uint64
}

// Stats returns the server's live figures.
func (s *Server) Stats() Stats {
	s.sessMu.Lock()
	n := len(s.sessions)
	s.sessMu.Unlock()
	var dropped uint64
	if s.dropped != nil {
		dropped = s.dropped()
	}
	return Stats{
		DroppedLogEntries:       dropped,
		Uptime:                  s.clock.Now().Sub(s.started),
		ConcurrentExecutions:    s.slots.InUse(),
		MaxConcurrentExecutions: s.slots.Max(),
		ConsecutiveExhausted:    s.exhausted.Value(),
		Sessions:                n,
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

// Lines returns the newline-delimited transport over r and w, limited as
// the server's configuration says (transport.maxMessageBytes).
func (s *Server) Lines(r io.Reader, w io.Writer) jsonrpc.Stream {
	return jsonrpc.NewLine(r, w, jsonrpc.LineOptions{
		MaxMessageBytes: s.cfg.Transport.MaxMessageBytes,
		OutputBudget:    s.cfg.Transport.MaxOutputBytes,
		Logger:          s.engineLog,
	})
}

// Stdio returns the stdio transport: Lines over the process's standard
// input and output. Logs must go elsewhere (standard error).
func (s *Server) Stdio() jsonrpc.Stream { return s.Lines(os.Stdin, os.Stdout) }

// RunStdio serves one session over standard input and output until the
// input ends, the client sends shutdown, or ctx is done; see Run.
func (s *Server) RunStdio(ctx context.Context) error { return s.Run(ctx, s.Stdio()) }

// Run serves one session over stream until its input ends, the client
// sends shutdown, or ctx is done, and then shuts it down gracefully: the
// session closes (nothing more is written, every request's context is
// cancelled), running handlers get up to server.shutdownTimeoutMs to
// return, and a tool call still running then gets its completion record
// with outcome aborted. Run returns nil after a clean end and the read
// error otherwise.
func (s *Server) Run(ctx context.Context, stream jsonrpc.Stream) error {
	sess := s.Connect(stream, nil)
	err := sess.Serve(ctx)
	s.Shutdown(sess)
	return err
}

// Shutdown closes sess and waits up to server.shutdownTimeoutMs for its
// handlers and then for the output they made; calls still running then
// are recorded as aborted. It reports whether every handler returned in
// time.
func (s *Server) Shutdown(sess *Session) bool {
	wait, cancel := context.WithTimeout(context.Background(),
		time.Duration(s.cfg.Server.ShutdownTimeoutMs)*time.Millisecond)
	defer cancel()
	stopListen, cancelStop := context.WithTimeout(wait, maxDrain)
	s.listeners.stopSession(stopListen, sess) // their answers go out before the close
	cancelStop()
	sess.Close()
	if err := sess.Wait(wait); err != nil {
		sess.log.Warn("shutdown timeout passed with handlers still running; their calls are recorded as aborted",
			"shutdownTimeoutMs", s.cfg.Server.ShutdownTimeoutMs)
		return false
	}
	// Answers already handed to the transport get a moment to reach the
	// client; a client that stopped reading cannot hold the exit up.
	drain, cancelDrain := context.WithTimeout(wait, maxDrain)
	defer cancelDrain()
	sess.conn.Drain(drain)
	return true
}

// notifyRunning sends a parameterless notification to every running
// session.
func (s *Server) notifyRunning(method string) {
	s.listeners.notify(method, "")
	for _, sess := range s.liveSessions() {
		if sess.State() != StateRunning {
			continue
		}
		if err := sess.conn.Notify(context.Background(), method, nil); err != nil {
			sess.log.Debug("could not send a notification", "method", method, "error", err.Error())
		}
	}
}
