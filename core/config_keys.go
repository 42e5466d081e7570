package core

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// valueKind is the type of a configuration value.
type valueKind int

const (
	kindInt    valueKind = iota // an integer in [1, maxConfigInt]
	kindBool                    // true or false
	kindString                  // a string, possibly restricted
	kindList                    // a list of non-empty strings
)

// keySpec describes one configuration key: its path, type, rules and where
// it lives in a Config.
type keySpec struct {
	path       string
	meaning    string
	kind       valueKind
	enum       []string // kindString: the allowed values; nil means any
	nonEmpty   bool     // kindString: "" is rejected
	envVarName bool     // kindString: "" or an environment variable name
	reserved   bool     // kindBool: only false is accepted
	field      func(*Config) any
}

// configSpecs returns the key table in Config field order. It is built on
// every call so that no package state exists to be mutated.
func configSpecs() []keySpec {
	i := func(path, meaning string, f func(*Config) any) keySpec {
		return keySpec{path: path, meaning: meaning, kind: kindInt, field: f}
	}
	b := func(path, meaning string, f func(*Config) any) keySpec {
		return keySpec{path: path, meaning: meaning, kind: kindBool, field: f}
	}
	s := func(path, meaning string, f func(*Config) any) keySpec {
		return keySpec{path: path, meaning: meaning, kind: kindString, field: f}
	}
	nonEmpty := func(k keySpec) keySpec { k.nonEmpty = true; return k }
	enum := func(k keySpec, values ...string) keySpec { k.enum = values; return k }
	return []keySpec{
		nonEmpty(s("server.name", "Server name reported in the initialize serverInfo.",
			func(c *Config) any { return &c.Server.Name })),
		nonEmpty(s("server.version", "Server version reported in the initialize serverInfo.",
			func(c *Config) any { return &c.Server.Version })),
		enum(s("server.mode", "Runtime mode: which tools are admitted (SPEC §9).",
			func(c *Config) any { return &c.Server.Mode }), ModeFull, ModeReadOnly, ModeMinimal, ModeTest),
		i("server.shutdownTimeoutMs", "How long shutdown waits for in-flight handlers, in milliseconds.",
			func(c *Config) any { return &c.Server.ShutdownTimeoutMs }),
		i("server.startupTimeoutMs", "Startup must finish within this many milliseconds, or the process exits 75.",
			func(c *Config) any { return &c.Server.StartupTimeoutMs }),
		s("server.instructions", "Instructions returned by initialize; empty means none.",
			func(c *Config) any { return &c.Server.Instructions }),
		i("transport.maxMessageBytes", "Largest accepted JSON-RPC message (one line), in bytes.",
			func(c *Config) any { return &c.Transport.MaxMessageBytes }),
		i("transport.maxInFlight", "Most requests in flight on one connection.",
			func(c *Config) any { return &c.Transport.MaxInFlight }),
		i("tools.defaultTimeoutMs", "Deadline of a tools/call without its own timeout, in milliseconds.",
			func(c *Config) any { return &c.Tools.DefaultTimeoutMs }),
		i("tools.maxPayloadBytes", "Largest tools/call arguments, in bytes.",
			func(c *Config) any { return &c.Tools.MaxPayloadBytes }),
		i("tools.maxStateBytes", "Largest agent state returned by agent_get_state, in bytes.",
			func(c *Config) any { return &c.Tools.MaxStateBytes }),
		i("tools.maxResultBytes", "Largest tool result, in bytes.",
			func(c *Config) any { return &c.Tools.MaxResultBytes }),
		i("tools.pageSize", "Items per page of list results.",
			func(c *Config) any { return &c.Tools.PageSize }),
		b("tools.adminRegistrationEnabled", "Admin tools exist only when this and security.dynamicRegistrationEnabled are true.",
			func(c *Config) any { return &c.Tools.AdminRegistrationEnabled }),
		enum(s("tools.adminPolicy.mode", "Who may call the admin tools.",
			func(c *Config) any { return &c.Tools.AdminPolicy.Mode }), AdminPolicyDenyAll, AdminPolicyLocalStdioOnly, AdminPolicyToken),
		{path: "tools.adminPolicy.tokenEnvVar", meaning: "Environment variable that holds the admin token (token mode); empty means none.",
			kind: kindString, envVarName: true, field: func(c *Config) any { return &c.Tools.AdminPolicy.TokenEnvVar }},
		i("resources.maxConcurrentExecutions", "Most tool calls executing at once.",
			func(c *Config) any { return &c.Resources.MaxConcurrentExecutions }),
		enum(s("logging.level", "Least severe level written to stderr.",
			func(c *Config) any { return &c.Logging.Level }), "debug", "info", "warn", "error"),
		{path: "logging.redactKeys", meaning: "Keys whose values logs replace by [REDACTED] (case-insensitive); replaces the default list.",
			kind: kindList, field: func(c *Config) any { return &c.Logging.RedactKeys }},
		b("security.dynamicRegistrationEnabled", "Admin tools exist only when this and tools.adminRegistrationEnabled are true.",
			func(c *Config) any { return &c.Security.DynamicRegistrationEnabled }),
		{path: "security.allowArbitraryCodeTools", meaning: "Reserved; must stay false.",
			kind: kindBool, reserved: true, field: func(c *Config) any { return &c.Security.AllowArbitraryCodeTools }},
		i("aacp.defaultTtlMs", "Default time-to-live of agent messages, in milliseconds.",
			func(c *Config) any { return &c.AACP.DefaultTTLMs }),
		nonEmpty(s("aacp.dataDir", "Directory of the agent messaging data (journals, ledgers).",
			func(c *Config) any { return &c.AACP.DataDir })),
	}
}

// get returns the key's value in c: an int, bool, string or []string.
func (s *keySpec) get(c *Config) any {
	switch p := s.field(c).(type) {
	case *int:
		return *p
	case *bool:
		return *p
	case *string:
		return *p
	case *[]string:
		return *p
	}
	panic("core: bad config key " + s.path)
}

// set stores v, of the key's type, in c.
func (s *keySpec) set(c *Config, v any) {
	switch p := s.field(c).(type) {
	case *int:
		*p = v.(int)
	case *bool:
		*p = v.(bool)
	case *string:
		*p = v.(string)
	case *[]string:
		*p = v.([]string)
	}
}

// text formats v in environment form.
func (s *keySpec) text(v any) string {
	switch v := v.(type) {
	case int:
		return strconv.Itoa(v)
	case bool:
		return strconv.FormatBool(v)
	case string:
		return v
	case []string:
		return strings.Join(v, ",")
	}
	return ""
}

// allowed says what the key accepts from source ("" for every source).
func (s *keySpec) allowed(source string) string {
	switch s.kind {
	case kindInt:
		return "an integer >= 1 and <= " + strconv.Itoa(maxConfigInt)
	case kindBool:
		switch {
		case s.reserved:
			return "false (reserved)"
		case source == sourceFile:
			return "true or false"
		case source == sourceEnv:
			return "true, false, 1 or 0"
		}
		return "true or false (env: true, false, 1 or 0)"
	case kindList:
		switch source {
		case sourceFile:
			return "a JSON array of non-empty strings"
		case sourceEnv:
			return "a comma-separated list of names"
		}
		return "a list of non-empty strings (file: JSON array; env: comma-separated)"
	}
	switch {
	case s.enum != nil:
		return "one of " + strings.Join(s.enum, ", ")
	case s.nonEmpty:
		return "a non-empty string"
	case s.envVarName:
		return "empty, or an environment variable name (ASCII letters, digits and _, not starting with a digit)"
	}
	return "any string (may be empty)"
}

// check validates a value of the key's type and returns why it is invalid,
// or "".
func (s *keySpec) check(v any) string {
	switch v := v.(type) {
	case int:
		if v < 1 {
			return "must be >= 1"
		}
		if v > maxConfigInt {
			return "too large"
		}
	case bool:
		if s.reserved && v {
			return "reserved: must be false"
		}
	case string:
		switch {
		case s.enum != nil && v == "":
			return "empty"
		case s.enum != nil && !slices.Contains(s.enum, v):
			return "not one of the allowed values (they are case-sensitive)"
		case s.nonEmpty && v == "":
			return "must not be empty"
		case s.envVarName && v != "" && !isEnvVarName(v):
			return "not an environment variable name"
		}
	case []string:
		for _, item := range v {
			if item == "" {
				return "contains an empty string"
			}
		}
	}
	return ""
}

// newError returns the *ConfigError of this key.
func (s *keySpec) newError(source, value, reason string) *ConfigError {
	return &ConfigError{
		Key:     s.path,
		Env:     EnvName(s.path),
		Value:   shorten(value),
		Allowed: s.allowed(source),
		Source:  source,
		Reason:  reason,
	}
}

// decodeJSON converts a file value to the key's type; the reason is "" on
// success.
func (s *keySpec) decodeJSON(raw []byte) (any, string) {
	t := jsonType(raw)
	switch s.kind {
	case kindInt:
		if t != "number" {
			return nil, wrongType(t, "number")
		}
		return parseInteger(string(raw))
	case kindBool:
		if t != "boolean" {
			return nil, wrongType(t, "boolean")
		}
		return raw[0] == 't', ""
	case kindString:
		if t != "string" {
			return nil, wrongType(t, "string")
		}
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return nil, "not a valid JSON string"
		}
		return str, ""
	}
	if t != "array" {
		return nil, wrongType(t, "array")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, "not a valid JSON array"
	}
	list := make([]string, 0, len(items))
	for n, item := range items {
		if it := jsonType(item); it != "string" {
			return nil, "wrong JSON type: item " + strconv.Itoa(n) + " is " + article(it) + ", want a string"
		}
		var str string
		if err := json.Unmarshal(item, &str); err != nil {
			return nil, "not a valid JSON string"
		}
		list = append(list, str)
	}
	return list, ""
}

// decodeEnv converts an environment value to the key's type; the reason is
// "" on success.
func (s *keySpec) decodeEnv(value string) (any, string) {
	switch s.kind {
	case kindInt:
		if value == "" {
			return nil, "empty"
		}
		digits := strings.TrimPrefix(value, "-")
		if digits == "" || strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
			return nil, "not an integer"
		}
		return parseInteger(value)
	case kindBool:
		switch value {
		case "true", "1":
			return true, ""
		case "false", "0":
			return false, ""
		case "":
			return nil, "empty"
		}
		return nil, "not a boolean"
	case kindString:
		return value, ""
	}
	list := []string{}
	for item := range strings.SplitSeq(value, ",") {
		if item = strings.TrimSpace(item); item != "" {
			list = append(list, item)
		}
	}
	return list, ""
}

// parseInteger parses a JSON number (or a decimal integer) exactly and
// returns it as an int in [1, maxConfigInt], or the reason it is not one.
// Integral values written with a fraction or an exponent (1.0, 1e3) count.
func parseInteger(num string) (any, string) {
	neg := strings.HasPrefix(num, "-")
	num = strings.TrimPrefix(num, "-")
	mant, exp := num, int64(0)
	if i := strings.IndexAny(num, "eE"); i >= 0 {
		mant = num[:i]
		e, err := strconv.ParseInt(strings.TrimPrefix(num[i+1:], "+"), 10, 32)
		if err != nil { // out of range: far too large or far too small
			e = 1 << 31
			if strings.HasPrefix(num[i+1:], "-") {
				e = -(1 << 31)
			}
		}
		exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= int64(len(frac))
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	switch {
	case digits == "" || neg:
		return nil, "must be >= 1"
	case exp < 0:
		return nil, "not an integer"
	case int64(len(digits))+exp > int64(len(strconv.Itoa(maxConfigInt))):
		return nil, "too large"
	}
	n, err := strconv.ParseInt(digits+strings.Repeat("0", int(exp)), 10, 64)
	if err != nil || n > maxConfigInt {
		return nil, "too large"
	}
	return int(n), ""
}

// jsonType names the JSON type of a valid JSON value.
func jsonType(raw []byte) string {
	raw = trimJSONSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func wrongType(got, want string) string {
	return "wrong JSON type: got " + got + ", want " + article(want)
}

func article(t string) string {
	switch t {
	case "object", "array":
		return "an " + t
	case "null", "nothing":
		return t
	}
	return "a " + t
}

func trimJSONSpace(b []byte) []byte {
	return bytes.Trim(b, " \t\r\n")
}

// isEnvVarName reports whether v is a portable environment variable name.
func isEnvVarName(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(isASCIIUpper(c) || isASCIILower(c) || c == '_' || (i > 0 && isASCIIDigit(c))) {
			return false
		}
	}
	return v != ""
}

// shorten caps an error value at 256 bytes (on a UTF-8 boundary).
func shorten(v string) string {
	const limit = 256
	if len(v) <= limit {
		return v
	}
	cut := limit
	for cut > 0 && v[cut]&0xC0 == 0x80 {
		cut--
	}
	return v[:cut] + "...(" + strconv.Itoa(len(v)) + " bytes)"
}
