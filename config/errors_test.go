package config

import (
	"errors"
	"strings"
	"testing"
)

const (
	allowedInt      = "an integer >= 1 and <= 9007199254740991"
	allowedFile     = "a readable JSON object file (UTF-8, at most 1048576 bytes)"
	allowedVar      = "a known MCPRT_* variable (docs/configuration.md lists every key's)"
	renameVar       = "; a variable of your own, such as one holding a token or secret, must not start with MCPRT_: rename it (e.g. MY_TOKEN) or unset it"
	serverKeys      = "name, version, mode, shutdownTimeoutMs, startupTimeoutMs, instructions, fixtures"
	notAllowedEnum  = "not one of the allowed values"
	allowedMode     = "one of FULL, READONLY, MINIMAL, TEST (case-sensitive)"
	allowedLevel    = "one of debug, info, warn, error (case-sensitive)"
	allowedPolicy   = "one of deny_all, local_stdio_only, token (case-sensitive)"
	allowedFixtures = "a list of fixture sets, each one of conformance (case-sensitive; file: JSON array; env: comma-separated)"
)

// fileErr is the expected error of a file value; envErr of an env value.
func fileErr(key, value, allowed, reason string) Error {
	return Error{Key: key, Env: EnvName(key), Value: value, Allowed: allowed, Source: "file", Reason: reason}
}

func envErr(key, value, allowed, reason string) Error {
	return Error{Key: key, Env: EnvName(key), Value: value, Allowed: allowed, Source: "env", Reason: reason}
}

func unknownVar(name, value, allowed string) Error {
	return Error{Env: name, Value: value, Allowed: allowed, Source: "env", Reason: "unknown variable"}
}

func TestConfigInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string // "" means no file
		env  []string
		want Error
	}{
		// Unknown keys in the file.
		{"unknown top-level key", `{"serverr":{}}`, nil, Error{Key: "serverr", Value: "{}", Source: "file", Reason: "unknown key",
			Allowed: "one of server, transport, tools, resources, logging, security, aacp, stateless; did you mean server?"}},
		{"unknown top-level key, no suggestion", `{"x":[1, 2]}`, nil, Error{Key: "x", Value: "[1,2]", Source: "file", Reason: "unknown key",
			Allowed: "one of server, transport, tools, resources, logging, security, aacp, stateless"}},
		{"unknown nested key, wrong case", `{"server":{"Name":"x"}}`, nil, Error{Key: "server.Name", Value: `"x"`, Source: "file",
			Reason: "unknown key", Allowed: "one of " + serverKeys + "; did you mean name?"}},
		{"unknown deeply nested key", `{"tools":{"adminPolicy":{"mod":"token"}}}`, nil, Error{Key: "tools.adminPolicy.mod",
			Value: `"token"`, Source: "file", Reason: "unknown key", Allowed: "one of mode, tokenEnvVar; did you mean mode?"}},
		{"unknown deeply nested key that looks secret", `{"tools":{"adminPolicy":{"mode":"token","tokenEnv":"X"}}}`, nil, Error{Key: "tools.adminPolicy.tokenEnv",
			Value: "[REDACTED]", Source: "file", Reason: "unknown key", Allowed: "one of mode, tokenEnvVar; did you mean tokenEnvVar?"}},
		{"unknown key that looks secret", `{"server":{"apiKey":"sk-123"}}`, nil, Error{Key: "server.apiKey", Value: "[REDACTED]",
			Source: "file", Reason: "unknown key", Allowed: "one of " + serverKeys}},
		{"unknown key inside a section after a bad value", `{"server":{"mode":"x","bogus":1}}`, nil, Error{Key: "server.bogus",
			Value: "1", Source: "file", Reason: "unknown key", Allowed: "one of " + serverKeys}},

		// Duplicate keys.
		{"duplicate section", `{"server":{},"server":{}}`, nil, Error{Key: "server", Value: "{}", Allowed: "each key at most once",
			Source: "file", Reason: "duplicate key"}},
		{"duplicate value key", `{"logging":{"level":"debug", "level":"warn"}}`, nil, fileErr("logging.level", `"warn"`, "each key at most once", "duplicate key")},
		{"duplicate key spelled with an escape", `{"server":{"name":"a","n\u0061me":"b"}}`, nil, fileErr("server.name", `"b"`, "each key at most once", "duplicate key")},

		// Wrong JSON types and null.
		{"string for a number", `{"tools":{"defaultTimeoutMs":"30"}}`, nil, fileErr("tools.defaultTimeoutMs", `"30"`, allowedInt, "wrong JSON type: got string, want a number")},
		{"number for a string", `{"server":{"name":5}}`, nil, fileErr("server.name", "5", "a non-empty string", "wrong JSON type: got number, want a string")},
		{"string for a boolean", `{"security":{"dynamicRegistrationEnabled":"true"}}`, nil, fileErr("security.dynamicRegistrationEnabled", `"true"`, "true or false", "wrong JSON type: got string, want a boolean")},
		{"number for a boolean", `{"tools":{"adminRegistrationEnabled":1}}`, nil, fileErr("tools.adminRegistrationEnabled", "1", "true or false", "wrong JSON type: got number, want a boolean")},
		{"string for a list", `{"logging":{"redactKeys":"a,b"}}`, nil, fileErr("logging.redactKeys", `"a,b"`, "a JSON array of non-empty strings", "wrong JSON type: got string, want an array")},
		{"number in a list", `{"logging":{"redactKeys":["a", 1]}}`, nil, fileErr("logging.redactKeys", `["a",1]`, "a JSON array of non-empty strings", "wrong JSON type: item 1 is a number, want a string")},
		{"null in a list", `{"logging":{"redactKeys":[null]}}`, nil, fileErr("logging.redactKeys", `[null]`, "a JSON array of non-empty strings", "wrong JSON type: item 0 is null, want a string")},
		{"empty string in a list", `{"logging":{"redactKeys":["a",""]}}`, nil, fileErr("logging.redactKeys", `["a",""]`, "a JSON array of non-empty strings", "contains an empty string")},
		{"object for a value", `{"server":{"mode":{"x":1}}}`, nil, fileErr("server.mode", `{"x":1}`, allowedMode, "wrong JSON type: got object, want a string")},
		{"null value", `{"server":{"mode":null}}`, nil, fileErr("server.mode", "null", allowedMode, "wrong JSON type: got null, want a string")},
		{"null number", `{"aacp":{"defaultTtlMs":null}}`, nil, fileErr("aacp.defaultTtlMs", "null", allowedInt, "wrong JSON type: got null, want a number")},
		{"null section", `{"server":null}`, nil, Error{Key: "server", Value: "null", Source: "file",
			Allowed: "a JSON object with keys " + serverKeys, Reason: "wrong JSON type: got null, want an object"}},
		{"array section", `{"tools":{"adminPolicy":["deny_all"]}}`, nil, Error{Key: "tools.adminPolicy", Value: `["deny_all"]`, Source: "file",
			Allowed: "a JSON object with keys mode, tokenEnvVar", Reason: "wrong JSON type: got array, want an object"}},

		// Numbers.
		{"file 0", `{"tools":{"pageSize":0}}`, nil, fileErr("tools.pageSize", "0", allowedInt, "must be >= 1")},
		{"file -1", `{"tools":{"pageSize":-1}}`, nil, fileErr("tools.pageSize", "-1", allowedInt, "must be >= 1")},
		{"file -0.0", `{"tools":{"pageSize":-0.0}}`, nil, fileErr("tools.pageSize", "-0.0", allowedInt, "must be >= 1")},
		{"file 1.5", `{"tools":{"pageSize":1.5}}`, nil, fileErr("tools.pageSize", "1.5", allowedInt, "not an integer")},
		{"file 15e-1", `{"tools":{"pageSize":15e-1}}`, nil, fileErr("tools.pageSize", "15e-1", allowedInt, "not an integer")},
		{"file 1e-400", `{"tools":{"pageSize":1e-400}}`, nil, fileErr("tools.pageSize", "1e-400", allowedInt, "not an integer")},
		{"file 2^53", `{"tools":{"pageSize":9007199254740992}}`, nil, fileErr("tools.pageSize", "9007199254740992", allowedInt, "too large")},
		{"file 1e400", `{"tools":{"pageSize":1e400}}`, nil, fileErr("tools.pageSize", "1e400", allowedInt, "too large")},
		{"file huge exponent", `{"tools":{"pageSize":1e99999999999999999999}}`, nil, fileErr("tools.pageSize", "1e99999999999999999999", allowedInt, "too large")},
		{"file 30 digits", `{"tools":{"pageSize":123456789012345678901234567890}}`, nil, fileErr("tools.pageSize", "123456789012345678901234567890", allowedInt, "too large")},
		{"env abc", "", []string{"MCPRT_TOOLS_DEFAULT_TIMEOUT_MS=abc"}, envErr("tools.defaultTimeoutMs", "abc", allowedInt, "not an integer")},
		{"env 0", "", []string{"MCPRT_TOOLS_DEFAULT_TIMEOUT_MS=0"}, envErr("tools.defaultTimeoutMs", "0", allowedInt, "must be >= 1")},
		{"env -1", "", []string{"MCPRT_TOOLS_DEFAULT_TIMEOUT_MS=-1"}, envErr("tools.defaultTimeoutMs", "-1", allowedInt, "must be >= 1")},
		{"env 1.5", "", []string{"MCPRT_TOOLS_DEFAULT_TIMEOUT_MS=1.5"}, envErr("tools.defaultTimeoutMs", "1.5", allowedInt, "not an integer")},
		{"env 1e3", "", []string{"MCPRT_TOOLS_DEFAULT_TIMEOUT_MS=1e3"}, envErr("tools.defaultTimeoutMs", "1e3", allowedInt, "not an integer")},
		{"env space", "", []string{"MCPRT_TOOLS_DEFAULT_TIMEOUT_MS= 5"}, envErr("tools.defaultTimeoutMs", " 5", allowedInt, "not an integer")},
		{"env empty number", "", []string{"MCPRT_TOOLS_DEFAULT_TIMEOUT_MS="}, envErr("tools.defaultTimeoutMs", "", allowedInt, "empty")},
		{"env 2^53", "", []string{"MCPRT_AACP_DEFAULT_TTL_MS=9007199254740992"}, envErr("aacp.defaultTtlMs", "9007199254740992", allowedInt, "too large")},
		{"env 40 digits", "", []string{"MCPRT_AACP_DEFAULT_TTL_MS=" + strings.Repeat("9", 40)}, envErr("aacp.defaultTtlMs", strings.Repeat("9", 40), allowedInt, "too large")},

		// Enums and strings.
		{"file mode wrong case", `{"server":{"mode":"full"}}`, nil, fileErr("server.mode", `"full"`, allowedMode, "not one of the allowed values (case-sensitive): did you mean FULL?")},
		{"env mode lower case", "", []string{"MCPRT_SERVER_MODE=readonly"}, envErr("server.mode", "readonly", allowedMode, "not one of the allowed values (case-sensitive): did you mean READONLY?")},
		{"unknown fixture set in the file", `{"server":{"fixtures":["conformance","Conformance"]}}`, nil,
			fileErr("server.fixtures", "conformance,Conformance", allowedFixtures, `unknown fixture set "Conformance"`)},
		{"unknown fixture set in the env", "", []string{"MCPRT_SERVER_FIXTURES=everything"},
			envErr("server.fixtures", "everything", allowedFixtures, `unknown fixture set "everything"`)},
		{"env level wrong case", "", []string{"MCPRT_LOGGING_LEVEL=INFO"}, envErr("logging.level", "INFO", allowedLevel, "not one of the allowed values (case-sensitive): did you mean info?")},
		{"env level empty", "", []string{"MCPRT_LOGGING_LEVEL="}, envErr("logging.level", "", allowedLevel, "empty")},
		{"file admin policy", `{"tools":{"adminPolicy":{"mode":"allow_all"}}}`, nil, fileErr("tools.adminPolicy.mode", `"allow_all"`, allowedPolicy, notAllowedEnum)},
		{"env admin policy", "", []string{"MCPRT_TOOLS_ADMIN_POLICY_MODE=open"}, envErr("tools.adminPolicy.mode", "open", allowedPolicy, notAllowedEnum)},
		{"file empty name", `{"server":{"name":""}}`, nil, fileErr("server.name", `""`, "a non-empty string", "must not be empty")},
		{"env empty data dir", "", []string{"MCPRT_AACP_DATA_DIR="}, envErr("aacp.dataDir", "", "a non-empty string", "must not be empty")},
		{"token variable name", `{"tools":{"adminPolicy":{"tokenEnvVar":"1TOKEN"}}}`, nil, fileErr("tools.adminPolicy.tokenEnvVar", `"1TOKEN"`,
			"empty, or an environment variable name (ASCII letters, digits and _, not starting with a digit)", "not an environment variable name")},
		{"empty version argument", "", nil, Error{Key: "server.version", Env: "MCPRT_SERVER_VERSION", Value: "", Allowed: "a non-empty string",
			Source: "default", Reason: "must not be empty"}},

		{"bad tools.enabled entry", "", []string{"MCPRT_TOOLS_ENABLED=memory_store,trace tree"}, Error{Key: "tools.enabled",
			Env: "MCPRT_TOOLS_ENABLED", Value: "memory_store,trace tree", Source: "env", Reason: `not a tool name, prefix or profile: "trace tree"`,
			Allowed: "a list of tool names (letters, digits, _ - .), name prefixes ending in * (memory_*) or profile names (core, messaging, memory, coordination, governance, full); file: JSON array; env: comma-separated"}},
		{"unknown profile", "", []string{"MCPRT_TOOLS_PROFILE=small"}, envErr("tools.profile", "small", "one of core, messaging, memory, coordination, governance, full (case-sensitive)", notAllowedEnum)},

		// Booleans.
		{"env yes", "", []string{"MCPRT_TOOLS_ADMIN_REGISTRATION_ENABLED=yes"}, envErr("tools.adminRegistrationEnabled", "yes", "true, false, 1 or 0", "not a boolean")},
		{"env TRUE", "", []string{"MCPRT_SECURITY_DYNAMIC_REGISTRATION_ENABLED=TRUE"}, envErr("security.dynamicRegistrationEnabled", "TRUE", "true, false, 1 or 0", "not a boolean")},
		{"env empty bool", "", []string{"MCPRT_SECURITY_DYNAMIC_REGISTRATION_ENABLED="}, envErr("security.dynamicRegistrationEnabled", "", "true, false, 1 or 0", "empty")},
		{"file arbitrary code", `{"security":{"allowArbitraryCodeTools":true}}`, nil, fileErr("security.allowArbitraryCodeTools", "true", "false (reserved)", "reserved: must be false")},
		{"env arbitrary code", "", []string{"MCPRT_SECURITY_ALLOW_ARBITRARY_CODE_TOOLS=1"}, envErr("security.allowArbitraryCodeTools", "1", "false (reserved)", "reserved: must be false")},

		// Unknown variables.
		{"unknown variable with suggestion", "", []string{"MCPRT_TOOLS_DEFAULT_TIMEOUT=5"}, unknownVar("MCPRT_TOOLS_DEFAULT_TIMEOUT", "5",
			allowedVar+"; did you mean MCPRT_TOOLS_DEFAULT_TIMEOUT_MS?"+renameVar)},
		{"unknown variable, short name", "", []string{"MCPRT_LOG_LEVEL=debug"}, unknownVar("MCPRT_LOG_LEVEL", "debug", allowedVar+"; did you mean MCPRT_LOGGING_LEVEL?"+renameVar)},
		{"unknown variable, lower case", "", []string{"MCPRT_logging_level=debug"}, unknownVar("MCPRT_logging_level", "debug", allowedVar+"; did you mean MCPRT_LOGGING_LEVEL?"+renameVar)},
		{"unknown variable, no suggestion", "", []string{"MCPRT_PORT=8080"}, unknownVar("MCPRT_PORT", "8080", allowedVar+renameVar)},
		{"unknown variable that looks secret", "", []string{"MCPRT_ADMIN_TOKEN=s3cret"}, unknownVar("MCPRT_ADMIN_TOKEN", "[REDACTED]", allowedVar+renameVar)},
		{"bare prefix", "", []string{"MCPRT_="}, unknownVar("MCPRT_", "", allowedVar+renameVar)},

		// Order: file before env, file values in key order, env sorted.
		{"file before env", `{"tools":{"pageSize":0}}`, []string{"MCPRT_AACP_DEFAULT_TTL_MS=0"}, fileErr("tools.pageSize", "0", allowedInt, "must be >= 1")},
		{"file values in key order", `{"tools":{"pageSize":0},"server":{"mode":"x"}}`, nil, fileErr("server.mode", `"x"`, allowedMode, notAllowedEnum)},
		{"env in sorted order", "", []string{"MCPRT_ZZZ=1", "MCPRT_TOOLS_PAGE_SIZE=x", "MCPRT_AACP_DEFAULT_TTL_MS=0"}, envErr("aacp.defaultTtlMs", "0", allowedInt, "must be >= 1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := ""
			if tc.file != "" {
				path = writeConfig(t, tc.file)
			}
			version := "v1"
			if tc.name == "empty version argument" {
				version = ""
			}
			got, err := loadBase(path, tc.env, version)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("loadBase error = %v, want a *Error", err)
			}
			if *ce != tc.want {
				t.Errorf("error\n got %#v\nwant %#v", *ce, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want.Allowed) || !strings.Contains(err.Error(), tc.want.Reason) {
				t.Errorf("Error() %q does not say what was wrong and what is allowed", err)
			}
			if got.Server.Name != "" {
				t.Errorf("loadBase returned a non-zero Base with its error")
			}
		})
	}
}

func TestConfigBadFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content string // content "-" means path is dir; "" a missing file
		path          string
		reason        string // expected Reason, or its prefix when it ends in "…"
	}{
		{name: "missing", path: dir + "/missing.json", reason: "cannot read: …"},
		{name: "directory", path: dir, reason: "not a regular file (a directory); give a JSON file"},
		{name: "empty", content: "", reason: "not valid JSON: unexpected end of JSON input"},
		{name: "blank", content: " \n", reason: "not valid JSON: unexpected end of JSON input"},
		{name: "truncated", content: `{"server":`, reason: "not valid JSON: unexpected end of JSON input"},
		{name: "syntax", content: "{\n  \"server\": {},\n}", reason: "not valid JSON: invalid character '}' looking for beginning of object key string (line 3, column 1)"},
		{name: "two values", content: `{} {}`, reason: "not valid JSON: invalid character '{' after top-level value (line 1, column 4)"},
		{name: "array", content: ` [] `, reason: "the top level is an array, not an object"},
		{name: "string", content: `"x"`, reason: "the top level is a string, not an object"},
		{name: "null", content: `null`, reason: "the top level is null, not an object"},
		{name: "invalid UTF-8", content: "{\"server\":{\"name\":\"\xff\"}}", reason: "not valid UTF-8"},
		{name: "too large", content: "{" + strings.Repeat(" ", 1<<20) + "}", reason: "larger than 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = writeConfig(t, tc.content)
			}
			_, err := loadBase(path, nil, "v1")
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("loadBase error = %v, want a *Error", err)
			}
			want := Error{Key: "config", Env: "MCPRT_CONFIG", Value: path, Allowed: allowedFile, Source: "file", Reason: ce.Reason}
			if *ce != want {
				t.Errorf("error\n got %#v\nwant %#v", *ce, want)
			}
			if prefix, ok := strings.CutSuffix(tc.reason, "…"); ok {
				if !strings.HasPrefix(ce.Reason, prefix) {
					t.Errorf("Reason = %q, want prefix %q", ce.Reason, prefix)
				}
			} else if ce.Reason != tc.reason {
				t.Errorf("Reason = %q, want %q", ce.Reason, tc.reason)
			}
		})
	}
}

func TestConfigLongValueIsShortened(t *testing.T) {
	long := strings.Repeat("é", 300) // 600 bytes
	_, err := loadBase("", []string{"MCPRT_SERVER_MODE=" + long}, "v1")
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatal(err)
	}
	want := strings.Repeat("é", 128) + "...(600 bytes)"
	if ce.Value != want {
		t.Errorf("Value = %q, want %q", ce.Value, want)
	}
}

// FuzzLoadConfigFile checks that no file content panics loadBase and
// that every failure is a *Error naming a key and what is allowed.
func FuzzLoadConfigFile(f *testing.F) {
	for _, seed := range []string{`{}`, `{"server":{"name":"x","name":"y"}}`, `{"tools":{"pageSize":1e3}}`,
		`{"logging":{"redactKeys":["a",null]}}`, `{"aacp":{"defaultTtlMs":-0.5e-3}}`, `[`, "\xff"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, content string) {
		_, err := loadBase(writeConfig(t, content), nil, "v1")
		if err == nil {
			return
		}
		var ce *Error
		if !errors.As(err, &ce) || ce.Allowed == "" || ce.Source != "file" || ce.Reason == "" {
			t.Fatalf("error %#v", err)
		}
	})
}
