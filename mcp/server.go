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

// Options configures a Server. Every field is optional: a zero value (nil,
// "", 0) means the default, so Options{} is a working server.
type Options struct {
	// Name and Version are the serverInfo a client sees ("mcprt" and
	// "dev" when empty).
	Name, Version string
	// Instructions is the initialize result's instructions for the model;
	// empty means none.
	Instructions string
	// Mode decides which tools are admitted (ModeFull, ModeReadOnly,
	// ModeMinimal, ModeTest; see AddTool); empty means ModeFull.
	Mode string
	// Tools is the set of tools sessions see unless they choose their own
	// (SessionOptions.Tools); nil means every registered tool. Build it
	// with ParseToolSet.
	Tools *ToolSet
	// Profiles names tool sets that Tools and a session's own choice
	// (Server.SessionToolSet) may name: each a list of tool names and
	// name prefixes ending in "*". nil names none besides "full" (every
	// tool).
	Profiles map[string][]string
	// Limits bound messages, calls and listings; zero fields get
	// defaults.
	Limits Limits
	// Stateless configures the caching hints and requestState of the
	// stateless protocol; zero fields get defaults.
	Stateless StatelessOptions
	// RedactKeys are the keys whose values logs sent to the client
	// (notifications/message) show as "[REDACTED]"; nil means
	// core.DefaultRedactKeys().
	RedactKeys []string
	// Logger receives the server's logs; request-scoped loggers derive
	// from it. Nil discards them.
	Logger *slog.Logger
	// IDs makes connection correlation ids, correlation ids and run ids
	// (random UUIDs when nil).
	IDs core.IDGenerator
	// Clock tells the time (the system clock when nil).
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

// Limits bound what a server accepts and does. A zero field means its
// default (in parentheses); a negative one is refused by NewServer.
type Limits struct {
	// MaxMessageBytes is the longest message a line transport reads (4 MiB).
	MaxMessageBytes int
	// MaxOutputBytes is how much output a session may have queued for a
	// client that is not reading (1 MiB).
	MaxOutputBytes int
	// MaxInFlight is how many requests of one session run at once (1024).
	MaxInFlight int
	// MaxBatchResponseBytes bounds the response to one JSON-RPC batch
	// (16 MiB).
	MaxBatchResponseBytes int
	// MaxConcurrentExecutions is how many tool calls run at once over
	// all sessions (10); observers take no slot.
	MaxConcurrentExecutions int
	// MaxPayloadBytes bounds a tool call's arguments (1 MiB).
	MaxPayloadBytes int
	// MaxResultBytes bounds a tool call's, a prompt's or a resource
	// read's result (10 MiB).
	MaxResultBytes int
	// PageSize is how many entries a list result holds (100).
	PageSize int
	// ToolTimeout is a tool call's deadline unless the tool sets its own
	// (30 s).
	ToolTimeout time.Duration
	// ClientRequestTimeout is how long a request the server sends to the
	// client waits for its answer, unless the caller's deadline is
	// sooner (60 s).
	ClientRequestTimeout time.Duration
	// ShutdownTimeout is how long Run and Shutdown wait for running
	// handlers (10 s).
	ShutdownTimeout time.Duration
}

// StatelessOptions configure the stateless protocol's results.
type StatelessOptions struct {
	// RequestStateTTL is how long a requestState handed to a client stays
	// valid (10 min; at least a second).
	RequestStateTTL time.Duration
	// ListTTL and ReadTTL are the ttlMs caching hints of list results and
	// of resources/read results (0: re-fetch every time).
	ListTTL, ReadTTL time.Duration
	// CacheScope is the cacheScope caching hint: "private" (the default)
	// or "public".
	CacheScope string
}

// The defaults of Options.
const (
	DefaultName                    = "mcprt"
	DefaultVersion                 = "dev"
	DefaultMaxMessageBytes         = 4 << 20
	DefaultMaxOutputBytes          = 1 << 20
	DefaultMaxInFlight             = 1024
	DefaultMaxBatchResponseBytes   = 16 << 20
	DefaultMaxConcurrentExecutions = 10
	DefaultMaxPayloadBytes         = 1 << 20
	DefaultMaxResultBytes          = 10 << 20
	DefaultPageSize                = 100
	DefaultToolTimeout             = 30 * time.Second
	DefaultClientRequestTimeout    = 60 * time.Second
	DefaultShutdownTimeout         = 10 * time.Second
	DefaultRequestStateTTL         = 10 * time.Minute
)

// resolve returns opts with every zero field set to its default, or an
// error naming the first invalid field.
func (opts Options) resolve() (Options, error) {
	l := &opts.Limits
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"MaxMessageBytes", &l.MaxMessageBytes, DefaultMaxMessageBytes},
		{"MaxOutputBytes", &l.MaxOutputBytes, DefaultMaxOutputBytes},
		{"MaxInFlight", &l.MaxInFlight, DefaultMaxInFlight},
		{"MaxBatchResponseBytes", &l.MaxBatchResponseBytes, DefaultMaxBatchResponseBytes},
		{"MaxConcurrentExecutions", &l.MaxConcurrentExecutions, DefaultMaxConcurrentExecutions},
		{"MaxPayloadBytes", &l.MaxPayloadBytes, DefaultMaxPayloadBytes},
		{"MaxResultBytes", &l.MaxResultBytes, DefaultMaxResultBytes},
		{"PageSize", &l.PageSize, DefaultPageSize},
	} {
		if *f.v < 0 {
			return Options{}, fmt.Errorf("mcp: Limits.%s is %d; use a positive number, or 0 for the default %d", f.name, *f.v, f.def)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"Limits.ToolTimeout", &l.ToolTimeout, DefaultToolTimeout},
		{"Limits.ClientRequestTimeout", &l.ClientRequestTimeout, DefaultClientRequestTimeout},
		{"Limits.ShutdownTimeout", &l.ShutdownTimeout, DefaultShutdownTimeout},
		{"Stateless.RequestStateTTL", &opts.Stateless.RequestStateTTL, DefaultRequestStateTTL},
	} {
		if *f.v < 0 {
			return Options{}, fmt.Errorf("mcp: %s is %v; use a positive duration, or 0 for the default %v", f.name, *f.v, f.def)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	opts.Stateless.RequestStateTTL = max(opts.Stateless.RequestStateTTL, time.Second)
	if opts.Stateless.ListTTL < 0 || opts.Stateless.ReadTTL < 0 {
		return Options{}, fmt.Errorf("mcp: Stateless.ListTTL and ReadTTL must not be negative; use 0 for no caching")
	}
	switch opts.Stateless.CacheScope {
	case "":
		opts.Stateless.CacheScope = "private"
	case "private", "public":
	default:
		return Options{}, fmt.Errorf("mcp: Stateless.CacheScope is %q; use \"private\" or \"public\"", opts.Stateless.CacheScope)
	}
	switch opts.Mode {
	case "":
		opts.Mode = ModeFull
	case ModeFull, ModeReadOnly, ModeMinimal, ModeTest:
	default:
		return Options{}, fmt.Errorf("mcp: Mode is %q; use one of %s, %s, %s, %s", opts.Mode,
			ModeFull, ModeReadOnly, ModeMinimal, ModeTest)
	}
	if opts.Name == "" {
		opts.Name = DefaultName
	}
	if opts.Version == "" {
		opts.Version = DefaultVersion
	}
	if opts.RedactKeys == nil {
		opts.RedactKeys = core.DefaultRedactKeys()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.IDs == nil {
		opts.IDs = &core.UUIDGenerator{}
	}
	if opts.Clock == nil {
		opts.Clock = core.SystemClock{}
	}
	if opts.Transport == "" {
		opts.Transport = TransportStdio
	}
	if opts.Audit == nil {
		opts.Audit = NopAuditSink{}
	}
	if opts.RequestStateKey != nil && len(opts.RequestStateKey) < MinRequestStateKeyBytes {
		return Options{}, fmt.Errorf("mcp: the requestState key has %d bytes; use at least %d random bytes",
			len(opts.RequestStateKey), MinRequestStateKeyBytes)
	}
	return opts, nil
}

// Server is an MCP server: its configuration and everything registered on
// it, shared by the sessions it serves. Create it with NewServer, register
// tools, then Run it over a transport (or Connect sessions yourself). All
// methods are safe for concurrent use; tools may be added and removed while
// sessions run (they are told with notifications/tools/list_changed).
type Server struct {
	opts      Options // resolved: every default filled in
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
	deadlines *deadlines // the tools/calls' (deadlines.go)

	tools     *registry[*registeredTool]
	toolSet   *ToolSet       // Options.Tools: what sessions see unless they choose; nil: all
	resources *resourceSet   // resources, templates, subscriptions
	subHooks  subscribeHooks // OnSubscribe (resources_watch.go)
	prompts   *promptSet

	sessMu   sync.Mutex // guards sessions
	sessions map[*Session]struct{}

	states    *stateSealer // signs and checks requestState
	listeners listeners    // open subscriptions/listen streams
	tasks     *taskStore   // the tasks extension; nil when not served
}

// NewServer returns a server configured by opts, with the defaults of
// every field left zero. It fails, saying which, on an invalid field.
func NewServer(opts Options) (*Server, error) {
	opts, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:      opts,
		log:       opts.Logger,
		ids:       opts.IDs,
		clock:     opts.Clock,
		transport: opts.Transport,
		audit:     opts.Audit,
		telemetry: opts.Telemetry,
		dropped:   opts.DroppedLogs,
		toolSet:   opts.Tools,
		schemas:   newSchemaCompiler(),
		sessions:  map[*Session]struct{}{},
		deadlines: newDeadlines(opts.Clock),
	}
	if s.toolSet != nil && s.toolSet.all {
		s.toolSet = nil
	}
	// Warnings a client can trigger at will (unmatched responses, bad
	// cancellations, over-long lines) pass 10 times a minute per message;
	// the next one that passes says how many were suppressed.
	s.engineLog = slog.New(core.LimitRepeats(s.log.Handler(), s.clock, engineWarnBurst, engineWarnWindow))
	if s.telemetry == nil {
		s.telemetry = core.NewTelemetry(s.clock)
	}
	s.states = newStateSealer(opts.RequestStateKey, opts.Stateless.RequestStateTTL, s.clock)
	if !opts.Tasks.Disabled {
		s.tasks = newTaskStore(opts.Tasks, s.clock)
	}
	s.slots = core.NewSlots(opts.Limits.MaxConcurrentExecutions)
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

// Mode returns the server's mode (Options.Mode, ModeFull by
// default).
func (s *Server) Mode() string { return s.opts.Mode }

// Info returns the serverInfo a client sees: Options.Name and Version.
func (s *Server) Info() Implementation {
	return Implementation{Name: s.opts.Name, Version: s.opts.Version}
}

// Limits returns the server's limits, every default filled in.
func (s *Server) Limits() Limits { return s.opts.Limits }

// Telemetry returns the server's runtime sampler.
func (s *Server) Telemetry() *core.Telemetry { return s.telemetry }

// Stats are the server's live figures, as the health tool reports them.
type Stats struct {
	// Uptime is the time since NewServer.
	Uptime time.Duration
	// ConcurrentExecutions is the number of concurrency slots in use.
	ConcurrentExecutions int
	// MaxConcurrentExecutions is Limits.MaxConcurrentExecutions.
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

// Lines returns the newline-delimited transport over r and w, limited by
// Limits.MaxMessageBytes and MaxOutputBytes.
func (s *Server) Lines(r io.Reader, w io.Writer) jsonrpc.Stream {
	return jsonrpc.NewLine(r, w, jsonrpc.LineOptions{
		MaxMessageBytes: s.opts.Limits.MaxMessageBytes,
		OutputBudget:    s.opts.Limits.MaxOutputBytes,
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
// cancelled), running handlers get up to Limits.ShutdownTimeout to
// return, and a tool call still running then gets its completion record
// with outcome aborted. Run returns nil after a clean end and the read
// error otherwise.
func (s *Server) Run(ctx context.Context, stream jsonrpc.Stream) error {
	sess := s.Connect(stream, nil)
	err := sess.Serve(ctx)
	// ctx may be what ended the session: the shutdown still gets its time.
	s.Shutdown(context.WithoutCancel(ctx), sess)
	return err
}

// Shutdown closes sess and waits, until ctx is done and at most
// Limits.ShutdownTimeout, for its handlers and then for the output they
// made; calls still running then are recorded as aborted. It reports
// whether every handler returned in time.
func (s *Server) Shutdown(ctx context.Context, sess *Session) bool {
	wait, cancel := context.WithTimeout(ctx, s.opts.Limits.ShutdownTimeout)
	defer cancel()
	stopListen, cancelStop := context.WithTimeout(wait, maxDrain)
	s.listeners.stopSession(stopListen, sess) // their answers go out before the close
	cancelStop()
	sess.Close()
	if err := sess.Wait(wait); err != nil {
		sess.log.Warn("shutdown timeout passed with handlers still running; their calls are recorded as aborted",
			"shutdownTimeoutMs", s.opts.Limits.ShutdownTimeout.Milliseconds())
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
