package core

import (
	"math"
	"strconv"
	"strings"
)

// Config is the whole configuration of SPEC §10. Build it with
// DefaultConfig or LoadConfig; the JSON tags are the key names of the
// configuration file.
type Config struct {
	Server    ServerConfig    `json:"server"`    // identity, mode and lifecycle timeouts
	Transport TransportConfig `json:"transport"` // wire limits
	Tools     ToolsConfig     `json:"tools"`     // the tools/call pipeline and admin tools
	Resources ResourcesConfig `json:"resources"` // concurrency limits
	Logging   LoggingConfig   `json:"logging"`   // stderr logging
	Security  SecurityConfig  `json:"security"`  // feature switches that widen the attack surface
	AACP      AACPConfig      `json:"aacp"`      // agents and agent-to-agent messaging
}

// ServerConfig is the "server" section of the configuration.
type ServerConfig struct {
	Name              string `json:"name"`              // serverInfo.name; non-empty
	Version           string `json:"version"`           // serverInfo.version; non-empty, defaults to the build version
	Mode              string `json:"mode"`              // one of ModeFull, ModeReadOnly, ModeMinimal, ModeTest
	ShutdownTimeoutMs int    `json:"shutdownTimeoutMs"` // how long shutdown waits for handlers
	StartupTimeoutMs  int    `json:"startupTimeoutMs"`  // startup deadline (exit 75 when missed)
	Instructions      string `json:"instructions"`      // initialize instructions; may be empty
}

// TransportConfig is the "transport" section of the configuration.
type TransportConfig struct {
	MaxMessageBytes int `json:"maxMessageBytes"` // largest accepted line, in bytes
	MaxInFlight     int `json:"maxInFlight"`     // most requests in flight per connection
}

// ToolsConfig is the "tools" section of the configuration.
type ToolsConfig struct {
	DefaultTimeoutMs         int               `json:"defaultTimeoutMs"`         // default tools/call deadline
	MaxPayloadBytes          int               `json:"maxPayloadBytes"`          // largest tools/call arguments
	MaxStateBytes            int               `json:"maxStateBytes"`            // largest agent state returned
	MaxResultBytes           int               `json:"maxResultBytes"`           // largest tool result
	PageSize                 int               `json:"pageSize"`                 // items per list page
	AdminRegistrationEnabled bool              `json:"adminRegistrationEnabled"` // admin tools switch (with security.dynamicRegistrationEnabled)
	AdminPolicy              AdminPolicyConfig `json:"adminPolicy"`              // who may call admin tools
}

// AdminPolicyConfig is the "tools.adminPolicy" section of the configuration.
type AdminPolicyConfig struct {
	Mode        string `json:"mode"`        // one of AdminPolicyDenyAll, AdminPolicyLocalStdioOnly, AdminPolicyToken
	TokenEnvVar string `json:"tokenEnvVar"` // empty, or the variable that holds the admin token
}

// ResourcesConfig is the "resources" section of the configuration.
type ResourcesConfig struct {
	MaxConcurrentExecutions int `json:"maxConcurrentExecutions"` // most tool calls executing at once
}

// LoggingConfig is the "logging" section of the configuration.
type LoggingConfig struct {
	Level      string   `json:"level"`      // one of debug, info, warn, error
	RedactKeys []string `json:"redactKeys"` // keys whose values are redacted in logs
}

// SecurityConfig is the "security" section of the configuration.
type SecurityConfig struct {
	DynamicRegistrationEnabled bool `json:"dynamicRegistrationEnabled"` // admin tools switch (with tools.adminRegistrationEnabled)
	AllowArbitraryCodeTools    bool `json:"allowArbitraryCodeTools"`    // reserved; always false
}

// AACPConfig is the "aacp" section of the configuration.
type AACPConfig struct {
	DefaultTTLMs int    `json:"defaultTtlMs"` // default message time-to-live
	DataDir      string `json:"dataDir"`      // directory for journals and ledgers; non-empty
}

// Mode values of server.mode (SPEC §9).
const (
	ModeFull     = "FULL"     // everything configured
	ModeReadOnly = "READONLY" // only read-only tools
	ModeMinimal  = "MINIMAL"  // only server_ping and health
	ModeTest     = "TEST"     // FULL plus the test fixtures
)

// Admin policy modes of tools.adminPolicy.mode (SPEC §8.2).
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

// DefaultConfig returns the defaults of SPEC §10; version becomes
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
		},
		Transport: TransportConfig{MaxMessageBytes: 4194304, MaxInFlight: 1024},
		Tools: ToolsConfig{
			DefaultTimeoutMs: 30000,
			MaxPayloadBytes:  1048576,
			MaxStateBytes:    262144,
			MaxResultBytes:   10485760,
			PageSize:         100,
			AdminPolicy:      AdminPolicyConfig{Mode: AdminPolicyDenyAll},
		},
		Resources: ResourcesConfig{MaxConcurrentExecutions: 10},
		Logging: LoggingConfig{
			Level: "info",
			RedactKeys: []string{"token", "key", "secret", "password", "apiKey",
				"authorization", "bearer", "session", "cookie"},
		},
		AACP: AACPConfig{DefaultTTLMs: 86400000, DataDir: ".mcprt"},
	}
}

// LoadConfig builds the configuration: the defaults, then the JSON file at
// path (skipped when path == ""), then the MCPRT_* variables of environ
// (os.Environ() form, "K=V"; of a name given twice the first counts, as with
// os.Getenv). Environment beats file beats defaults.
//
// LoadConfig is strict: an unknown, duplicate, null or wrongly typed key in
// the file, an invalid value from any source, and an MCPRT_* variable that
// is not a known key fail the load. MCPRT_CONFIG is accepted but ignored
// (the caller resolves the file path), and so is the variable named by
// tools.adminPolicy.tokenEnvVar. The error is a *ConfigError; of several
// problems the first is reported, in a fixed order: the file (structure in
// file order, then values in ConfigKeys order), then the environment (in
// sorted variable order), then the merged result.
func LoadConfig(path string, environ []string, version string) (Config, error) {
	specs := configSpecs()
	cfg := DefaultConfig(version)
	sources := make(map[string]string, len(specs))
	if path != "" {
		if err := applyFile(&cfg, sources, specs, path); err != nil {
			return Config{}, err
		}
	}
	if err := applyEnv(&cfg, sources, specs, environ); err != nil {
		return Config{}, err
	}
	// Validate the merged result: file and environment values were checked
	// as they were applied, so only a default (an empty version) can fail.
	for i := range specs {
		s := &specs[i]
		src := sources[s.path]
		if src == "" {
			src = sourceDefault
		}
		v := s.get(&cfg)
		if reason := s.check(v); reason != "" {
			return Config{}, s.newError(src, s.text(v), reason)
		}
	}
	return cfg, nil
}

// ConfigError says which setting is invalid, what it was and what is
// allowed. cmd/mcprt logs its fields and exits 78 (SPEC §4.2).
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
	// MINIMAL, TEST".
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

// ConfigKeys returns every configuration key in a stable order (the order
// of the Config fields).
func ConfigKeys() []ConfigKey {
	specs := configSpecs()
	def := DefaultConfig("")
	keys := make([]ConfigKey, len(specs))
	for i := range specs {
		s := &specs[i]
		d := s.text(s.get(&def))
		if s.path == "server.version" {
			d = "(build version)"
		}
		keys[i] = ConfigKey{Path: s.path, Env: EnvName(s.path), Default: d, Allowed: s.allowed(""), Meaning: s.meaning}
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
