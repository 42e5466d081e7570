package config

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/setting"
	"github.com/mcprt/mcprt/mcp"
	"github.com/mcprt/mcprt/tools/messaging"
)

// Base is the configuration of mcprt's own sections. Build it with
// DefaultBase or Load (its Base field). The json tags are the key
// names of the configuration file, the config tags the rules of each value
// (see the package documentation), the help tags what each key does.
type Base struct {
	Server    ServerConfig     `json:"server"`    // identity, mode and lifecycle timeouts
	Transport TransportConfig  `json:"transport"` // wire limits
	Tools     ToolsConfig      `json:"tools"`     // the tools/call pipeline and admin tools
	Resources ResourcesConfig  `json:"resources"` // concurrency limits
	Logging   LoggingConfig    `json:"logging"`   // stderr logging
	Security  SecurityConfig   `json:"security"`  // feature switches that widen the attack surface
	AACP      messaging.Config `json:"aacp"`      // agents and agent-to-agent messaging
	Stateless StatelessConfig  `json:"stateless"` // requests of the stateless revision (2026-07-28)
}

// StatelessConfig is the "stateless" section: how the server answers
// requests of the stateless protocol revision, which carry their protocol
// version and client capabilities in _meta instead of a session.
type StatelessConfig struct {
	RequestStateKeyEnvVar string        `json:"requestStateKeyEnvVar" config:"envvar" help:"Environment variable that holds the key (at least 32 bytes) that signs requestState, shared by every replica of one deployment; empty means a random key per process (state from another process is refused)."`
	RequestStateTTL       time.Duration `json:"requestStateTtlMs" config:"min=1000" help:"How long a requestState handed to a client stays valid, in milliseconds; an older one is refused."`
	ListTTL               time.Duration `json:"listTtlMs" config:"min=0" help:"The ttlMs caching hint on tools/list, prompts/list, resources/list, resources/templates/list and server/discover results, in milliseconds (0: re-fetch every time)."`
	ReadTTL               time.Duration `json:"readTtlMs" config:"min=0" help:"The ttlMs caching hint on resources/read results, in milliseconds (0: re-fetch every time)."`
	CacheScope            string        `json:"cacheScope" config:"enum=private|public" help:"The cacheScope caching hint: private (a cache may reuse a result only for the same credentials) or public."`
}

// ServerConfig is the "server" section of the configuration.
type ServerConfig struct {
	Name            string        `json:"name" config:"nonempty" help:"Server name reported in the initialize serverInfo."`
	Version         string        `json:"version" config:"nonempty" help:"Server version reported in the initialize serverInfo."`
	Mode            string        `json:"mode" config:"enum=FULL|READONLY|MINIMAL|TEST" help:"Runtime mode: which tools are admitted (FULL, READONLY: read-only tools, MINIMAL: server_ping and health, TEST: FULL plus test fixtures)."`
	ShutdownTimeout time.Duration `json:"shutdownTimeoutMs" help:"How long shutdown waits for in-flight handlers, in milliseconds."`
	StartupTimeout  time.Duration `json:"startupTimeoutMs" help:"Startup must finish within this many milliseconds, or the process exits 75."`
	Instructions    string        `json:"instructions" help:"Instructions returned by initialize; empty means the binary's default (who the model is, when to check its inbox, how to answer)."`
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
			return &Error{Key: "fixtures",
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
	DefaultTimeout           time.Duration     `json:"defaultTimeoutMs" help:"Deadline of a tools/call without its own timeout, in milliseconds."`
	ClientRequestTimeout     time.Duration     `json:"clientRequestTimeoutMs" help:"How long a request the server sends to the client (ping, roots/list, sampling, elicitation) waits for its answer, in milliseconds, unless the caller's deadline is sooner."`
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

// Validate checks that every entry of Enabled is a tool name, a name
// prefix ending in "*", or a profile name.
func (c *ToolsConfig) Validate() error {
	for _, e := range c.Enabled {
		if !mcp.ValidToolPattern(e) {
			return &Error{Key: "enabled",
				Allowed: "a list of tool names (letters, digits, _ - .), name prefixes ending in * (memory_*) or profile names " +
					"(core, messaging, memory, coordination, governance, full); file: JSON array; env: comma-separated",
				Reason: "not a tool name, prefix or profile: " + strconv.Quote(e)}
		}
	}
	return nil
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

// Admin policy modes of tools.adminPolicy.mode: who may call the admin
// tools.
const (
	AdminPolicyDenyAll        = "deny_all"         // every admin call is UNAUTHORIZED
	AdminPolicyLocalStdioOnly = "local_stdio_only" // admin calls allowed over stdio only
	AdminPolicyToken          = "token"            // token required (HTTP, later); UNAUTHORIZED over stdio
)

// Where a configuration value came from (Error.Source).
const (
	sourceDefault = "default"
	sourceFile    = "file"
	sourceEnv     = "env"
)

// envConfig is the variable that names the configuration file. loadBase
// accepts it in the environment but does not read it: the caller resolves
// the path (flag or variable) and passes it in.
const envConfig = "MCPRT_CONFIG"

// maxConfigInt is the largest accepted number: the largest integer a JSON
// number holds exactly (2^53-1), and no more than an int holds.
const maxConfigInt = min(1<<53-1, math.MaxInt)

// DefaultBase returns the defaults of every key; version becomes
// Server.Version. Every call returns a fresh value (the RedactKeys slice is
// not shared).
func DefaultBase(version string) Base {
	return Base{
		Server: ServerConfig{
			Name:            "mcprt",
			Version:         version,
			Mode:            mcp.ModeFull,
			ShutdownTimeout: 10 * time.Second,
			StartupTimeout:  10 * time.Second,
			Fixtures:        []string{},
		},
		Transport: TransportConfig{MaxMessageBytes: 4194304, MaxInFlight: 1024, MaxOutputBytes: 1048576,
			MaxBatchResponseBytes: 16777216},
		Tools: ToolsConfig{
			DefaultTimeout:       30 * time.Second,
			ClientRequestTimeout: time.Minute,
			MaxPayloadBytes:      1048576,
			MaxStateBytes:        262144,
			MaxResultBytes:       10485760,
			PageSize:             100,
			AdminPolicy:          AdminPolicyConfig{Mode: AdminPolicyDenyAll},
			Profile:              ToolProfileFull,
			Enabled:              []string{},
		},
		Resources: ResourcesConfig{MaxConcurrentExecutions: 10},
		Logging: LoggingConfig{
			MaxBufferBytes: 1048576,
			Level:          "info",
			RedactKeys:     core.DefaultRedactKeys(),
		},
		AACP:      messaging.DefaultConfig(),
		Stateless: StatelessConfig{RequestStateTTL: 10 * time.Minute, CacheScope: "private"},
	}
}

// Error says which setting is invalid, what it was and what is
// allowed. The mcprt binary logs its fields and exits 78 (EX_CONFIG).
type Error struct {
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
func (e *Error) Error() string {
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

// Key describes one configuration key (one row of the README table).
type Key struct {
	Path    string // key path, e.g. "tools.adminPolicy.mode"
	Env     string // its environment variable, e.g. "MCPRT_TOOLS_ADMIN_POLICY_MODE"
	Default string // the default in environment form ("(build version)" for server.version)
	Allowed string // what is accepted
	Meaning string // one line
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

// fromSetting is the *Error of a *setting.Error: its key, value, reason
// and what is allowed; the caller fills in the variable and the source.
func fromSetting(se *setting.Error) *Error {
	return &Error{Key: se.Key, Value: se.Value, Reason: se.Reason, Allowed: se.Allowed}
}

// AsError finds the invalid setting in err's chain: a *Error as it is,
// or a *setting.Error (a package below config reporting a key by its full
// path) with its key's environment variable. It reports false when err
// names no setting.
func AsError(err error) (*Error, bool) {
	var ce *Error
	if errors.As(err, &ce) {
		return ce, true
	}
	var se *setting.Error
	if errors.As(err, &se) {
		ce = fromSetting(se)
		ce.Env = EnvName(se.Key)
		return ce, true
	}
	return nil, false
}
