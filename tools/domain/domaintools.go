package domain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/agent"
	"github.com/mcprt/mcprt/domain/guard"
	"github.com/mcprt/mcprt/domain/memory"
	"github.com/mcprt/mcprt/domain/session"
	"github.com/mcprt/mcprt/domain/toolspec"
	"github.com/mcprt/mcprt/domain/trace"
	"github.com/mcprt/mcprt/domain/workflow"
	"github.com/mcprt/mcprt/mcp"
	"github.com/mcprt/mcprt/store"
)

// Options configure New.
type Options struct {
	// Config holds the store, guard, trace, workflow and agent sections.
	Config config.Domain
	// Base is the server's configuration: aacp.dataDir places the
	// default directories, logging.redactKeys redacts captured arguments.
	Base config.Base
	// Logger reports trace write failures; nil discards them.
	Logger *slog.Logger
	// Clock and IDs stamp and name what the domains create; nil means the
	// system clock and UUID v4.
	Clock core.Clock
	IDs   core.IDGenerator
	// Shared, when set, shares the domain state across machines
	// (sharedstate.go).
	Shared *SharedState
}

// Domain holds the domain services over one lazily opened store. Build it
// with New before the server (its AuditSink goes into mcp.Options.Audit),
// register its tools with Register, and Close it at exit.
type Domain struct {
	db       *store.DB
	memory   *memory.Service
	sessions *session.Service
	guard    *guard.Service
	traces   *trace.Service
	agents   *agent.Service
	// runTimeout is agent_run's deadline (agent.runTimeoutMs).
	runTimeout time.Duration
	recorder   *trace.Recorder // nil when tracing is off
	sink       *AuditSink      // nil when tracing is off
	updates    *updates        // resources/updated notifications (updates.go)
	serverID   string
	flows      *workflow.Engine
	clock      core.Clock
	coord      coordination // reservations and the work queue (coordination.go)
	stores     domainStores // the stores the services run on (sharedstate.go)
	agentID    string       // aacp.agentId, named by the check_inbox prompt
}

// New builds the services. It touches no file but the policies directory,
// which it reads (a missing one holds no policies); the store is opened by
// its first use. A policy file that cannot be loaded is a
// *config.Error for guard.policiesDir.
func New(opts Options) (*Domain, error) {
	if opts.Clock == nil {
		opts.Clock = core.SystemClock{}
	}
	if opts.IDs == nil {
		opts.IDs = &core.UUIDGenerator{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	cfg, dataDir := opts.Config, opts.Base.AACP.DataDir
	db, err := store.New(store.Options{Dir: cfg.StoreDir(dataDir),
		BusyTimeout: cfg.Store.BusyTimeout, Clock: opts.Clock})
	if err != nil {
		return nil, err
	}
	d := &Domain{db: db, serverID: opts.IDs.NewID(), runTimeout: cfg.Agent.RunTimeout, clock: opts.Clock, agentID: opts.Base.AACP.AgentID,
		updates: newUpdates(db, cfg.Store.WatchInterval, opts.Clock, opts.Logger)}
	if d.stores, err = newStores(db, opts); err != nil {
		return nil, sharedStateError(err)
	}
	d.memory = memory.NewService(d.stores.memory, opts.Clock)
	d.sessions = session.NewService(d.stores.sessions, opts.Clock, opts.IDs)
	dir := cfg.PoliciesDir(dataDir)
	if d.guard, err = guard.NewService(dir, d.sessions); err != nil {
		source := "file or env"
		if cfg.Guard.PoliciesDir == "" {
			source = "default"
		}
		return nil, &config.Error{Key: "guard.policiesDir", Env: config.EnvName("guard.policiesDir"), Value: dir,
			Allowed: "a directory of valid guard policy files (*.json), or one that does not exist", Source: source,
			Reason: core.AsError(err).Message}
	}
	d.guard.SetWorkspaceRoot(workspaceRoot(cfg.Guard.WorkspaceRoot))
	if d.agents, err = newAgents(cfg, dataDir, opts); err != nil {
		return nil, err
	}
	var flusher trace.Flusher
	if cfg.Trace.Enabled {
		d.recorder = trace.NewRecorder(trace.RecorderOptions{Store: db.Traces(), QueueSize: cfg.Trace.QueueSize,
			BatchSize: cfg.Trace.BatchSize, Capture: cfg.Trace.CaptureArguments, MaxCaptured: cfg.Trace.MaxCapturedBytes,
			Redactor: core.NewRedactor(opts.Base.Logging.RedactKeys),
			MaxAge:   cfg.Trace.RetentionMaxAge, MaxEvents: cfg.Trace.RetentionMaxEvents,
			Linger: cfg.Trace.FlushInterval,
			Clock:  opts.Clock, Logger: opts.Logger})
		d.sink = NewAuditSink(d.recorder, opts.Clock, d.serverID)
		flusher = d.recorder
	}
	d.traces = trace.NewService(db.Traces(), flusher).WithLinger(cfg.Trace.FlushInterval)
	if err := d.newWorkflows(cfg, dataDir, opts); err != nil {
		return nil, err
	}
	d.newCoordination(cfg, opts)
	// A workflow step may run an agent, and an agent may run a workflow:
	// the delegation depth bounds the recursion.
	d.flows.SetAgentRunner(d.agents)
	d.agents.SetWorkflowRunner(d.flows)
	return d, nil
}

// AuditSink returns the sink for mcp.Options.Audit: nil (the server's
// no-op default) when tracing is off.
func (d *Domain) AuditSink() mcp.AuditSink {
	if d.sink == nil {
		return nil
	}
	return d.sink
}

// StorePath returns the database file's path.
func (d *Domain) StorePath() string { return d.db.Path() }

// ServerID returns the id this process records its trace events under.
func (d *Domain) ServerID() string { return d.serverID }

// TraceCounts reports the trace events queued, dropped because the queue
// was full, and lost to write errors (all zero when tracing is off).
func (d *Domain) TraceCounts() (accepted, dropped, failed uint64) {
	if d.recorder == nil {
		return 0, 0, 0
	}
	return d.recorder.Counts()
}

// Close writes the queued trace events (waiting until ctx ends) and closes
// the store.
func (d *Domain) Close(ctx context.Context) error {
	d.agents.Close()
	var errs []error
	d.updates.stop()
	if d.recorder != nil {
		errs = append(errs, d.recorder.Close(ctx))
	}
	if d.stores.shared != nil {
		d.stores.shared.Close()
	}
	errs = append(errs, d.db.Close())
	return errors.Join(errs...)
}

// Register registers the memory_*, session_*, guard_*, trace_*, workflow_*
// and agent_* tools on srv. A tool the server's mode does not admit is
// skipped (READONLY keeps the read-only ones, MINIMAL none). It also
// registers the read-only
// resources and the prompts whose tools were admitted (see the package
// documentation). Call it before serving.
func (d *Domain) Register(srv *mcp.Server) error {
	specs := map[string]toolspec.Spec{}
	for _, list := range [][]toolspec.Spec{memory.ToolSpecs(), session.ToolSpecs(), guard.ToolSpecs(), trace.ToolSpecs(),
		workflow.ToolSpecs(), agent.ToolSpecs(), coordSpecs()} {
		for _, s := range list {
			specs[s.Name] = s
		}
	}
	r := registrar{srv: srv, specs: specs}
	mt := memory.NewTools(d.memory)
	add(&r, "memory_store", mt.Store)
	add(&r, "memory_retrieve", mt.Retrieve)
	add(&r, "memory_search", mt.Search)
	add(&r, "memory_list", mt.List)
	add(&r, "memory_delete", mt.Delete)
	add(&r, "memory_stats", mt.Stats)
	add(&r, "memory_export", mt.Export)
	add(&r, "memory_import", mt.Import)
	st := session.NewTools(d.sessions)
	add(&r, "session_create", st.Create)
	add(&r, "session_status", st.Status)
	add(&r, "session_list", st.List)
	add(&r, "session_complete", st.Complete)
	add(&r, "session_join", st.Join)
	add(&r, "session_leave", st.Leave)
	add(&r, "session_fail", st.Fail)
	gt := guard.NewTools(d.guard)
	add(&r, "guard_list", gt.List)
	add(&r, "guard_check", gt.Check)
	add(&r, "guard_apply", gt.Apply)
	tt := trace.NewTools(d.traces)
	add(&r, "trace_list", tt.List)
	add(&r, "trace_get", tt.Get)
	add(&r, "trace_analyze", tt.Analyze)
	add(&r, "trace_tree", tt.Tree)
	add(&r, "trace_by_session", tt.BySession)
	wt := workflow.NewTools(d.flows, mcp.CorrelationID)
	add(&r, "workflow_run", wt.Run)
	add(&r, "workflow_list", wt.List)
	add(&r, "workflow_describe", wt.Describe)
	d.addAgentTools(&r)
	d.addCoordTools(&r)
	if r.err == nil && len(r.done) != len(specs) {
		for name := range specs {
			if !r.done[name] {
				r.err = fmt.Errorf("domain: tool %q has a spec but no handler", name)
			}
		}
	}
	if r.err == nil {
		r.err = d.registerResources(srv, r.admitted)
	}
	if r.err == nil {
		r.err = d.registerPrompts(srv, r.admitted)
	}
	if r.err == nil {
		r.err = registerInboxPrompt(srv, d.agentID)
	}
	if r.err == nil {
		r.err = d.registerWorkflows(srv, r.admitted)
	}
	if r.err == nil {
		r.err = d.registerAgentExtras(srv, r.admitted)
	}
	if r.err == nil {
		r.err = d.registerCoordResources(srv, r.admitted)
	}
	if r.err == nil {
		d.updates.attach(srv)
	}
	return r.err
}

// registrar registers tools until the first error.
type registrar struct {
	srv   *mcp.Server
	specs map[string]toolspec.Spec
	done  map[string]bool
	// admitted holds the tools the server's mode let in.
	admitted map[string]bool
	err      error
}

// add registers the domain handler h under the spec called name.
func add[In, Out any](r *registrar, name string, h func(context.Context, In) (Out, error)) {
	addTimed(r, name, 0, h)
}

// addTimed is add with the call deadline timeout (0: tools.defaultTimeoutMs).
func addTimed[In, Out any](r *registrar, name string, timeout time.Duration, h func(context.Context, In) (Out, error)) {
	if r.err != nil {
		return
	}
	if r.done == nil {
		r.done, r.admitted = map[string]bool{}, map[string]bool{}
	}
	spec, ok := r.specs[name]
	if !ok {
		r.err = fmt.Errorf("domain: no tool spec is named %q", name)
		return
	}
	r.done[name] = true
	tool := Tool(spec)
	tool.Timeout = timeout
	added, err := r.srv.AddTools(mcp.Typed(tool, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (Out, error) {
		return h(ctx, in)
	}))
	switch {
	case err != nil:
		r.err = fmt.Errorf("domain: %w", err)
	case len(added) == 1:
		r.admitted[name] = true
	}
}

// Tool returns the mcp.Tool of a spec, without handler or schemas. The
// annotations state what differs from MCP's defaults (not read-only,
// destructive, not idempotent, open world): readOnlyHint and
// idempotentHint when true, destructiveHint false for a tool that only
// adds, openWorldHint false (no domain tool reaches outside the server's
// own data unless its spec says so). The title is the tool's own (listed
// from 2025-06-18); the annotations do not repeat it. The output schema
// derived from the result type checks every result but is not listed: it
// would cost a model's context without helping it call the tool.
func Tool(s toolspec.Spec) mcp.Tool {
	a := &mcp.ToolAnnotations{}
	if s.ReadOnly {
		a.ReadOnlyHint = mcp.Bool(true)
	} else if !s.Destructive {
		a.DestructiveHint = mcp.Bool(false)
	}
	if s.Idempotent {
		a.IdempotentHint = mcp.Bool(true)
	}
	if !s.OpenWorld {
		a.OpenWorldHint = mcp.Bool(false)
	}
	return mcp.Tool{Name: s.Name, Title: s.Title, Description: s.Description, Annotations: a, HideOutputSchema: true}
}

// workspaceRoot is guard.workspaceRoot, or the working directory when
// unset ("" if even that is unknown: paths are then judged as spelled).
func workspaceRoot(dir string) string {
	if dir != "" {
		return dir
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return wd
}
