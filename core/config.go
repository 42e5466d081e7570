package core

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// Config is the configuration of mcprt's own sections. Build it with
// DefaultConfig, LoadConfig or NewConfigLoader. The json tags are the key
// names of the configuration file, the config tags the rules of each value
// (see the package documentation), the help tags what each key does.
type Config struct {
	Server    ServerConfig    `json:"server"`    // identity, mode and lifecycle timeouts
	Transport TransportConfig `json:"transport"` // wire limits
	Tools     ToolsConfig     `json:"tools"`     // the tools/call pipeline and admin tools
	Resources ResourcesConfig `json:"resources"` // concurrency limits
	Logging   LoggingConfig   `json:"logging"`   // stderr logging
	Security  SecurityConfig  `json:"security"`  // feature switches that widen the attack surface
	AACP      AACPConfig      `json:"aacp"`      // agents and agent-to-agent messaging
	Stateless StatelessConfig `json:"stateless"` // requests of the stateless revision (2026-07-28)
}

// StatelessConfig is the "stateless" section: how the server answers
// requests of the stateless protocol revision, which carry their protocol
// version and client capabilities in _meta instead of a session.
type StatelessConfig struct {
	RequestStateKeyEnvVar string `json:"requestStateKeyEnvVar" config:"envvar" help:"Environment variable that holds the key (at least 32 bytes) that signs requestState, shared by every replica of one deployment; empty means a random key per process (state from another process is refused)."`
	RequestStateTTLMs     int    `json:"requestStateTtlMs" config:"min=1000" help:"How long a requestState handed to a client stays valid, in milliseconds; an older one is refused."`
	ListTTLMs             int    `json:"listTtlMs" config:"min=0" help:"The ttlMs caching hint on tools/list, prompts/list, resources/list, resources/templates/list and server/discover results, in milliseconds (0: re-fetch every time)."`
	ReadTTLMs             int    `json:"readTtlMs" config:"min=0" help:"The ttlMs caching hint on resources/read results, in milliseconds (0: re-fetch every time)."`
	CacheScope            string `json:"cacheScope" config:"enum=private|public" help:"The cacheScope caching hint: private (a cache may reuse a result only for the same credentials) or public."`
}

// ServerConfig is the "server" section of the configuration.
type ServerConfig struct {
	Name              string `json:"name" config:"nonempty" help:"Server name reported in the initialize serverInfo."`
	Version           string `json:"version" config:"nonempty" help:"Server version reported in the initialize serverInfo."`
	Mode              string `json:"mode" config:"enum=FULL|READONLY|MINIMAL|TEST" help:"Runtime mode: which tools are admitted (FULL, READONLY: read-only tools, MINIMAL: server_ping and health, TEST: FULL plus test fixtures)."`
	ShutdownTimeoutMs int    `json:"shutdownTimeoutMs" help:"How long shutdown waits for in-flight handlers, in milliseconds."`
	StartupTimeoutMs  int    `json:"startupTimeoutMs" help:"Startup must finish within this many milliseconds, or the process exits 75."`
	Instructions      string `json:"instructions" help:"Instructions returned by initialize; empty means the binary's default (who the model is, when to check its inbox, how to answer)."`
	// Fixtures names extra fixture sets, registered in mode TEST only (see
	// FixtureSets); Validate refuses a name that is not one.
	Fixtures []string `json:"fixtures" help:"Extra fixture sets registered in mode TEST only (ignored in other modes): conformance (the tools, resources, prompts and completions the MCP conformance suite exercises). Empty means none."`
}

// Fixture sets of server.fixtures.
const (
	// FixtureConformance is the MCP conformance suite's fixtures: its
	// test_* tools, test:// resources and template, test_* prompts and
	// their completions.
	FixtureConformance = "conformance"
)

// FixtureSets lists the values server.fixtures accepts.
func FixtureSets() []string { return []string{FixtureConformance} }

// Validate checks that every name in Fixtures is a known fixture set.
func (c *ServerConfig) Validate() error {
	for _, f := range c.Fixtures {
		if !slices.Contains(FixtureSets(), f) {
			return &ConfigError{Key: "fixtures",
				Allowed: "a list of fixture sets, each one of " + strings.Join(FixtureSets(), ", ") +
					" (case-sensitive; file: JSON array; env: comma-separated)",
				Reason: "unknown fixture set " + strconv.Quote(f)}
		}
	}
	return nil
}

// TransportConfig is the "transport" section of the configuration.
type TransportConfig struct {
	MaxMessageBytes int `json:"maxMessageBytes" help:"Largest accepted JSON-RPC message (one line), in bytes."`
	MaxInFlight     int `json:"maxInFlight" help:"Most requests in flight on one connection; a request counts until its response is handed to the transport."`
	// MaxOutputBytes bounds the output a connection has accepted and not
	// yet written: while a client does not read, writers wait and the
	// server stops reading its requests.
	MaxOutputBytes int `json:"maxOutputBytes" help:"Most bytes of responses queued for a client that is not reading; past it the server stops reading requests."`
	// MaxBatchResponseBytes bounds the answer to one JSON-RPC batch.
	MaxBatchResponseBytes int `json:"maxBatchResponseBytes" help:"Largest answer to one batch; elements past it are answered with an error saying so."`
}

// ToolsConfig is the "tools" section of the configuration.
type ToolsConfig struct {
	DefaultTimeoutMs         int               `json:"defaultTimeoutMs" help:"Deadline of a tools/call without its own timeout, in milliseconds."`
	ClientRequestTimeoutMs   int               `json:"clientRequestTimeoutMs" help:"How long a request the server sends to the client (ping, roots/list, sampling, elicitation) waits for its answer, in milliseconds, unless the caller's deadline is sooner."`
	MaxPayloadBytes          int               `json:"maxPayloadBytes" help:"Largest tools/call arguments, in bytes."`
	MaxStateBytes            int               `json:"maxStateBytes" help:"Largest agent state returned by agent_get_state, in bytes."`
	MaxResultBytes           int               `json:"maxResultBytes" help:"Largest tool result, in bytes."`
	PageSize                 int               `json:"pageSize" help:"Items per page of list results."`
	AdminRegistrationEnabled bool              `json:"adminRegistrationEnabled" help:"Admin tools exist only when this and security.dynamicRegistrationEnabled are true."`
	AdminPolicy              AdminPolicyConfig `json:"adminPolicy"` // who may call admin tools
	// Profile and Enabled choose the tools a session sees and may call
	// (see ToolProfiles); a transport may let a session choose its own.
	Profile string   `json:"profile" config:"enum=core|messaging|memory|coordination|governance|full" help:"Named set of tools every session sees and may call: core (messaging, memory, reservations, tasks: what a coding session needs daily), messaging, memory, coordination (reservations, tasks), governance (guard, sessions, traces, workflows, and oversight of reservations and tasks) or full (every tool)."`
	Enabled []string `json:"enabled" help:"Explicit list of the tools a session sees: tool names, name prefixes ending in * (memory_*) and profile names; when not empty it replaces tools.profile (file: JSON array; env: comma-separated)."`
}

// Tool profiles of tools.profile.
const (
	ToolProfileCore         = "core"
	ToolProfileMessaging    = "messaging"
	ToolProfileMemory       = "memory"
	ToolProfileCoordination = "coordination"
	ToolProfileGovernance   = "governance"
	ToolProfileFull         = "full" // every tool
)

// ToolProfiles returns the named tool profiles other than full: each a
// list of tool names and name prefixes ending in "*". A name that no
// registered tool has is simply absent from the sessions' lists. Every
// call returns a fresh map.
func ToolProfiles() map[string][]string {
	return map[string][]string{
		ToolProfileCore: {"aacp_send", "aacp_receive", "aacp_ack", "aacp_peek", "aacp_reply",
			"memory_store", "memory_search", "memory_retrieve",
			"reserve_paths", "check_reservations", "release_reservations",
			"task_claim", "task_update", "coord_start", "coord_finish", "server_ping"},
		ToolProfileMessaging: {"aacp_*", "coord_start", "coord_finish", "server_ping"},
		ToolProfileMemory:    {"memory_*", "server_ping"},
		ToolProfileCoordination: {"reserve_paths", "renew_reservations", "release_reservations", "check_reservations",
			"list_reservations", "force_release_reservation", "task_*", "coord_start", "coord_finish", "server_ping"},
		// Governance watches and unblocks the others' work: it sees
		// reservations and tasks and may break a lease, but takes none.
		ToolProfileGovernance: {"guard_*", "session_*", "trace_*", "workflow_*", "list_reservations", "check_reservations",
			"force_release_reservation", "task_list", "task_get", "server_ping", "health"},
	}
}

// Validate checks that every entry of Enabled is a tool name, a name
// prefix ending in "*", or a profile name.
func (c *ToolsConfig) Validate() error {
	for _, e := range c.Enabled {
		if !ValidToolPattern(e) {
			return &ConfigError{Key: "enabled",
				Allowed: "a list of tool names (letters, digits, _ - .), name prefixes ending in * (memory_*) or profile names " +
					"(core, messaging, memory, coordination, governance, full); file: JSON array; env: comma-separated",
				Reason: "not a tool name, prefix or profile: " + strconv.Quote(e)}
		}
	}
	return nil
}

// ValidToolPattern reports whether p is a tool name, or a tool name prefix
// followed by "*" (a lone "*" matches every tool).
func ValidToolPattern(p string) bool {
	name := strings.TrimSuffix(p, "*")
	if len(name) > 128 || (name == "" && p != "*") {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// AdminPolicyConfig is the "tools.adminPolicy" section of the configuration.
type AdminPolicyConfig struct {
	Mode        string `json:"mode" config:"enum=deny_all|local_stdio_only|token" help:"Who may call the admin tools."`
	TokenEnvVar string `json:"tokenEnvVar" config:"envvar" help:"Environment variable that holds the admin token (token mode); empty means none."`
}

// ResourcesConfig is the "resources" section of the configuration.
type ResourcesConfig struct {
	MaxConcurrentExecutions int `json:"maxConcurrentExecutions" help:"Most tool calls executing at once."`
}

// LoggingConfig is the "logging" section of the configuration.
type LoggingConfig struct {
	Level      string   `json:"level" config:"enum=debug|info|warn|error" help:"Least severe level written to stderr."`
	RedactKeys []string `json:"redactKeys" help:"Keys whose values logs replace by [REDACTED] (case-insensitive); replaces the default list."`
	// MaxBufferBytes bounds the log entries waiting for stderr; when
	// stderr is not read, entries beyond it are dropped and counted.
	MaxBufferBytes int `json:"maxBufferBytes" help:"Most bytes of log entries waiting for stderr; beyond it entries are dropped and counted (reported by health)."`
}

// SecurityConfig is the "security" section of the configuration.
type SecurityConfig struct {
	DynamicRegistrationEnabled bool `json:"dynamicRegistrationEnabled" help:"Admin tools exist only when this and tools.adminRegistrationEnabled are true."`
	AllowArbitraryCodeTools    bool `json:"allowArbitraryCodeTools" config:"reserved" help:"Reserved; must stay false."`
}

// AACPConfig is the "aacp" section of the configuration.
type AACPConfig struct {
	DefaultTTLMs int    `json:"defaultTtlMs" help:"Default time-to-live of agent messages, in milliseconds."`
	DataDir      string `json:"dataDir" config:"nonempty" help:"Directory of the agent messaging data (journals, ledgers); relative to the working directory. Sessions meet only when they share one directory: give them the same absolute path."`
	// AgentID is the agent the aacp_* tools act for when a call names
	// none; "" derives one from the host name and the process id.
	AgentID string `json:"agentId" help:"Agent id the aacp_* tools act for by default (letters, digits, '.', '_', '-'; at most 64 bytes); empty derives one from the host name and process id, which changes at every start."`
	// AgentType is the type that agent is registered with on first use.
	AgentType string `json:"agentType" config:"enum=Manager|Implementation|AdHoc" help:"Type the default agent is registered with on first use of an aacp_* tool."`
	// Fsync is the journal's durability policy.
	Fsync string `json:"fsync" config:"enum=always|batch|never" help:"When agent messages reach stable storage: always (before a send returns), batch (every maintenance tick) or never (left to the operating system)."`
	// AckTimeoutMs, when not 0, replaces the per-type acknowledgement
	// timeouts (and then MaxRetries and RetryBaseMs the retry budgets).
	AckTimeoutMs int `json:"ackTimeoutMs" config:"min=0" help:"Acknowledgement timeout of every message type, in milliseconds, counted from when the receiver takes the message; 0 keeps the protocol's per-type table (TASK_ASSIGNMENT 30s, TASK_UPDATE 15s, ...)."`
	MaxRetries   int `json:"maxRetries" config:"min=0,max=100" help:"Retry budget of a NACK with canRetry or an unwritable channel when aacp.ackTimeoutMs is set; ack timeouts re-offer until the ttl."`
	RetryBaseMs  int `json:"retryBaseMs" help:"Wait before the first retry when aacp.ackTimeoutMs is set, in milliseconds; each later retry waits twice as long, with jitter."`
	// IdleAfterMs and StaleAfterMs grade an agent's presence by the time
	// since its last tool call or heartbeat.
	IdleAfterMs  int `json:"idleAfterMs" config:"min=1" help:"An agent whose session is open but that made no tool call or heartbeat for this long shows idle, in milliseconds."`
	StaleAfterMs int `json:"staleAfterMs" config:"min=1" help:"An agent silent for this long shows stale (its session open) or is retired from the registry (its session gone), in milliseconds."`
}

// Mode values of server.mode: which tools a server admits.
const (
	ModeFull     = "FULL"     // everything configured
	ModeReadOnly = "READONLY" // only read-only tools
	ModeMinimal  = "MINIMAL"  // only server_ping and health
	ModeTest     = "TEST"     // FULL plus the test fixtures
)

// Admin policy modes of tools.adminPolicy.mode: who may call the admin
// tools.
const (
	AdminPolicyDenyAll        = "deny_all"         // every admin call is UNAUTHORIZED
	AdminPolicyLocalStdioOnly = "local_stdio_only" // admin calls allowed over stdio only
	AdminPolicyToken          = "token"            // token required (HTTP, later); UNAUTHORIZED over stdio
)

// Where a configuration value came from (ConfigError.Source).
const (
	sourceDefault = "default"
	sourceFile    = "file"
	sourceEnv     = "env"
)

// envConfig is the variable that names the configuration file. LoadConfig
// accepts it in the environment but does not read it: the caller resolves
// the path (flag or variable) and passes it in.
const envConfig = "MCPRT_CONFIG"

// maxConfigInt is the largest accepted number: the largest integer a JSON
// number holds exactly (2^53-1), and no more than an int holds.
const maxConfigInt = min(1<<53-1, math.MaxInt)

// DefaultConfig returns the defaults of every key; version becomes
// Server.Version. Every call returns a fresh value (the RedactKeys slice is
// not shared).
func DefaultConfig(version string) Config {
	return Config{
		Server: ServerConfig{
			Name:              "mcprt",
			Version:           version,
			Mode:              ModeFull,
			ShutdownTimeoutMs: 10000,
			StartupTimeoutMs:  10000,
			Fixtures:          []string{},
		},
		Transport: TransportConfig{MaxMessageBytes: 4194304, MaxInFlight: 1024, MaxOutputBytes: 1048576,
			MaxBatchResponseBytes: 16777216},
		Tools: ToolsConfig{
			DefaultTimeoutMs:       30000,
			ClientRequestTimeoutMs: 60000,
			MaxPayloadBytes:        1048576,
			MaxStateBytes:          262144,
			MaxResultBytes:         10485760,
			PageSize:               100,
			AdminPolicy:            AdminPolicyConfig{Mode: AdminPolicyDenyAll},
			Profile:                ToolProfileFull,
			Enabled:                []string{},
		},
		Resources: ResourcesConfig{MaxConcurrentExecutions: 10},
		Logging: LoggingConfig{
			MaxBufferBytes: 1048576,
			Level:          "info",
			RedactKeys:     DefaultRedactKeys(),
		},
		AACP: AACPConfig{DefaultTTLMs: 86400000, DataDir: ".mcprt", AgentType: "AdHoc", Fsync: "always",
			MaxRetries: 3, RetryBaseMs: 1000, IdleAfterMs: 120000, StaleAfterMs: 900000},
		Stateless: StatelessConfig{RequestStateTTLMs: 600000, CacheScope: "private"},
	}
}

// DefaultRedactKeys returns logging.redactKeys' default: the keys whose
// values logs show as "[REDACTED]" unless configured otherwise.
func DefaultRedactKeys() []string {
	return []string{"token", "key", "secret", "password", "apiKey", "authorization", "bearer", "session", "cookie"}
}

// LoadConfig loads mcprt's own sections: DefaultConfig(version), then the
// JSON file at path (skipped when path == ""), then the MCPRT_* variables
// of environ. It is NewConfigLoader followed by Loader.Load; see Load for
// the rules. On error the Config is the zero value and the error is a
// *ConfigError.
//
// LoadConfig knows only the base sections: a program that adds its own
// uses NewConfigLoader, or else their keys are unknown.
func LoadConfig(path string, environ []string, version string) (Config, error) {
	cfg := DefaultConfig(version)
	if err := NewConfigLoader(&cfg).Load(path, environ); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// ConfigError says which setting is invalid, what it was and what is
// allowed. The mcprt binary logs its fields and exits 78 (EX_CONFIG).
type ConfigError struct {
	// Key is the key path, e.g. "tools.defaultTimeoutMs"; "config" for the
	// configuration file itself; "" for an unknown environment variable.
	Key string
	// Env is the environment variable of Key (e.g.
	// "MCPRT_TOOLS_DEFAULT_TIMEOUT_MS"), "MCPRT_CONFIG" for the file itself,
	// the unknown variable's name, or "" when Key has no variable (a section
	// or an unknown key of the file).
	Env string
	// Value is the offending value as text: file values as compact JSON,
	// environment values verbatim, the file's path for Key "config".
	// Values longer than 256 bytes are shortened, and the value of an
	// unknown key or variable whose name looks secret is "[REDACTED]".
	Value string
	// Allowed says what would be accepted, e.g. "one of FULL, READONLY,
	// MINIMAL, TEST (case-sensitive)".
	Allowed string
	// Source is where Value came from: "file", "env" or "default".
	Source string
	// Reason says briefly what is wrong, e.g. "not an integer", "unknown
	// key", "duplicate key".
	Reason string
}

// Error implements the error interface, e.g.
// `config: tools.defaultTimeoutMs = "abc" (from MCPRT_TOOLS_DEFAULT_TIMEOUT_MS) is invalid: not an integer; allowed: an integer >= 1 and <= 9007199254740991`.
func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	switch {
	case e.Key == "":
		b.WriteString("unknown environment variable " + e.Env + " = " + strconv.Quote(e.Value))
	case e.Key == "config":
		b.WriteString("config file " + strconv.Quote(e.Value) + " (--config or " + envConfig + ")")
	case e.Source == sourceFile:
		b.WriteString(e.Key + " = " + e.Value + " (from the config file)")
	case e.Source == sourceEnv && e.Env == "":
		b.WriteString(e.Key + " = " + strconv.Quote(e.Value) + " (from the environment)")
	case e.Source == sourceEnv:
		b.WriteString(e.Key + " = " + strconv.Quote(e.Value) + " (from " + e.Env + ")")
	default:
		b.WriteString(e.Key + " = " + strconv.Quote(e.Value) + " (" + e.Source + ")")
	}
	b.WriteString(" is invalid")
	if e.Reason != "" {
		b.WriteString(": " + e.Reason)
	}
	b.WriteString("; allowed: " + e.Allowed)
	return b.String()
}

// ConfigKey describes one configuration key (one row of the README table).
type ConfigKey struct {
	Path    string // key path, e.g. "tools.adminPolicy.mode"
	Env     string // its environment variable, e.g. "MCPRT_TOOLS_ADMIN_POLICY_MODE"
	Default string // the default in environment form ("(build version)" for server.version)
	Allowed string // what is accepted
	Meaning string // one line
}

// ConfigKeys returns every key of mcprt's own sections in a stable order
// (the order of the Config fields). The default of server.version is
// shown as "(build version)".
func ConfigKeys() []ConfigKey {
	cfg := DefaultConfig("")
	keys := NewConfigLoader(&cfg).Keys()
	for i := range keys {
		if keys[i].Path == "server.version" {
			keys[i].Default = "(build version)"
		}
	}
	return keys
}

// EnvName returns the environment variable of a key path: "MCPRT_" + the
// path in UPPER_SNAKE_CASE, each dot and each lower-to-upper camelCase
// boundary becoming "_": "tools.adminPolicy.mode" →
// "MCPRT_TOOLS_ADMIN_POLICY_MODE", "aacp.defaultTtlMs" →
// "MCPRT_AACP_DEFAULT_TTL_MS".
func EnvName(keyPath string) string {
	var b strings.Builder
	b.WriteString("MCPRT")
	for seg := range strings.SplitSeq(keyPath, ".") {
		b.WriteByte('_')
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if isASCIIUpper(c) && i > 0 {
				prev := seg[i-1]
				nextLower := i+1 < len(seg) && isASCIILower(seg[i+1])
				if isASCIILower(prev) || isASCIIDigit(prev) || (isASCIIUpper(prev) && nextLower) {
					b.WriteByte('_')
				}
			}
			if isASCIILower(c) {
				c -= 'a' - 'A'
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isASCIIUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isASCIILower(c byte) bool { return 'a' <= c && c <= 'z' }
func isASCIIDigit(c byte) bool { return '0' <= c && c <= '9' }
