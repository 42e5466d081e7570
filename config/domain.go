package config

import (
	"path/filepath"
	"time"

	"github.com/mcprt/mcprt/domain/agent"
	"github.com/mcprt/mcprt/domain/reservation"
	"github.com/mcprt/mcprt/domain/trace"
	"github.com/mcprt/mcprt/store"
)

// StoreConfig is the "store" section of the configuration.
type StoreConfig struct {
	Dir         string        `json:"dir" help:"Directory of the shared SQLite store (memory, sessions, traces); empty means {aacp.dataDir}/store. Processes given the same absolute path share one store."`
	BusyTimeout time.Duration `json:"busyTimeoutMs" config:"max=600000" help:"How long a write waits for another process's write, in milliseconds."`
	// WatchInterval paces the polling of the change feed (updates.go).
	WatchInterval time.Duration `json:"watchIntervalMs" config:"min=10,max=60000" help:"While a session subscribes to a memory://, sessions:// or traces:// resource, how often the store is checked for other processes' writes, in milliseconds (this process's own writes notify at once)."`
}

// GuardConfig is the "guard" section of the configuration.
type GuardConfig struct {
	PoliciesDir   string `json:"policiesDir" help:"Directory of guard policy files (one policy per *.json); empty means {aacp.dataDir}/policies. A missing directory holds none; the built-in policies default and docs-only always exist."`
	WorkspaceRoot string `json:"workspaceRoot" help:"Directory that guard_check's changed paths are relative to; empty means the server's working directory. A changed path that goes through a symbolic link is also judged at its real location, and one that leads outside this directory is forbidden."`
}

// WorkflowConfig is the "workflow" section of the configuration.
type WorkflowConfig struct {
	Dir string `json:"dir" help:"Directory of workflow definitions (one per *.json, see docs/workflow.schema.json); empty means {aacp.dataDir}/workflows. A missing directory holds none; the bundled workflows remember-and-recall and check-change always exist (a file with the same id replaces one)."`
}

// TraceConfig is the "trace" section of the configuration.
type TraceConfig struct {
	Enabled            bool          `json:"enabled" help:"Record every tools/call that passes validation as a trace event in the store ({aacp.dataDir}/store unless store.dir is set). The call only queues the event; a background writer stores it in batches, and a full queue drops events rather than wait."`
	CaptureArguments   bool          `json:"captureArguments" help:"Also keep each call's arguments and result, redacted with logging.redactKeys and bounded by trace.maxCapturedBytes."`
	MaxCapturedBytes   int           `json:"maxCapturedBytes" config:"min=64,max=1048576" help:"Largest captured arguments or result per call, in bytes of JSON; longer ones keep a preview."`
	QueueSize          int           `json:"queueSize" config:"max=1000000" help:"Trace events waiting to be written; when full, new events are dropped and counted (the call never waits)."`
	BatchSize          int           `json:"batchSize" config:"max=10000" help:"Most trace events written in one transaction."`
	RetentionMaxAge    time.Duration `json:"retentionMaxAgeMs" help:"Trace events older than this are deleted, in milliseconds."`
	RetentionMaxEvents int           `json:"retentionMaxEvents" help:"At most this many trace events are kept (the oldest go first)."`
	FlushInterval      time.Duration `json:"flushIntervalMs" config:"max=60000" help:"How long the trace writer waits for more events before it writes a batch that is not full, in milliseconds (0: at once). Reading traces writes what is pending first."`
}

// AgentConfig is the "agent" section of the configuration.
type AgentConfig struct {
	Dir                string        `json:"dir" help:"Directory of agent profiles (one profile per *.json); empty means {aacp.dataDir}/agents. A missing directory holds none; a bad file stops the server."`
	MaxDelegationDepth int           `json:"maxDelegationDepth" config:"min=0,max=16" help:"Deepest delegation at which an agent whose profile sets no orchestration.maxDelegationDepth may run (agent_run)."`
	RunTimeout         time.Duration `json:"runTimeoutMs" config:"min=1,max=3600000" help:"Deadline of an agent_run call, in milliseconds: how long a run (a workflow, a delegated task, an in-process agent) may take."`
}

// CoordConfig is the "coord" section of the configuration: file
// reservations and the work queue (coordination.go).
type CoordConfig struct {
	MaxReservationsPerAgent int           `json:"maxReservationsPerAgent" config:"min=1,max=100000" help:"Most active file reservations one agent may hold; reserve_paths over it fails with RESOURCE_EXHAUSTED."`
	DefaultTTL              time.Duration `json:"defaultTtlSeconds" config:"min=1,max=604800" help:"Lease time of a reservation whose reserve_paths call gives no ttlSeconds, in seconds."`
}

// Domain holds the sections of the domain tools (package tools/domain).
type Domain struct {
	Store    StoreConfig
	Guard    GuardConfig
	Trace    TraceConfig
	Workflow WorkflowConfig
	Agent    AgentConfig
	Coord    CoordConfig
}

// DefaultDomain returns the defaults: the store and policies under
// aacp.dataDir, tracing on without arguments.
func DefaultDomain() Domain {
	return Domain{
		Store: StoreConfig{BusyTimeout: store.DefaultBusyTimeout,
			WatchInterval: store.DefaultWatchInterval},
		Trace: TraceConfig{Enabled: true, MaxCapturedBytes: trace.DefaultMaxCaptured, QueueSize: trace.DefaultQueueSize,
			BatchSize: trace.DefaultBatchSize, FlushInterval: 200 * time.Millisecond, RetentionMaxAge: trace.DefaultMaxAge,
			RetentionMaxEvents: trace.DefaultMaxEvents},
		Agent: AgentConfig{MaxDelegationDepth: agent.DefaultMaxDelegationDepth, RunTimeout: 5 * time.Minute},
		Coord: CoordConfig{MaxReservationsPerAgent: reservation.DefaultMaxPerAgent, DefaultTTL: time.Hour},
	}
}

// StoreDir returns the store's directory: store.dir, or {dataDir}/store.
func (c Domain) StoreDir(dataDir string) string { return dirOr(c.Store.Dir, dataDir, "store") }

// PoliciesDir returns the policies directory: guard.policiesDir, or
// {dataDir}/policies.
func (c Domain) PoliciesDir(dataDir string) string {
	return dirOr(c.Guard.PoliciesDir, dataDir, "policies")
}

// WorkflowsDir returns the workflows directory: workflow.dir, or
// {dataDir}/workflows.
func (c Domain) WorkflowsDir(dataDir string) string {
	return dirOr(c.Workflow.Dir, dataDir, "workflows")
}

// AgentsDir returns the agent profiles directory: agent.dir, or
// {dataDir}/agents.
func (c Domain) AgentsDir(dataDir string) string { return dirOr(c.Agent.Dir, dataDir, "agents") }

// dirOr is dir when set, else {dataDir}/name.
func dirOr(dir, dataDir, name string) string {
	if dir != "" {
		return dir
	}
	return filepath.Join(dataDir, name)
}
