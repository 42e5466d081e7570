package config

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/mcp"
	"github.com/mcprt/mcprt/tools/messaging"
)

// writeConfig writes content to a fresh file and returns its path.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcprt.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// nestJSON wraps a JSON value in the objects of a key path:
// nestJSON("a.b", "1") == `{"a":{"b":1}}`.
func nestJSON(path, value string) string {
	segs := strings.Split(path, ".")
	out := value
	for i := len(segs) - 1; i >= 0; i-- {
		out = `{"` + segs[i] + `":` + out + `}`
	}
	return out
}

// configField returns the field of c that a key path names, following the
// json tags.
func configField(c *Base, path string) reflect.Value {
	v := reflect.ValueOf(c).Elem()
	for seg := range strings.SplitSeq(path, ".") {
		found := false
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).Tag.Get("json") == seg {
				v, found = v.Field(i), true
				break
			}
		}
		if !found {
			return reflect.Value{}
		}
	}
	return v
}

// leafPaths lists the key paths of every non-struct field of t, in field
// order.
func leafPaths(t reflect.Type, prefix string) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		path := f.Tag.Get("json")
		if prefix != "" {
			path = prefix + "." + path
		}
		if f.Type.Kind() == reflect.Struct {
			out = append(out, leafPaths(f.Type, path)...)
		} else {
			out = append(out, path)
		}
	}
	return out
}

func TestDefaultConfig(t *testing.T) {
	want := Base{
		Server:    ServerConfig{Name: "mcprt", Version: "1.2.3", Mode: "FULL", ShutdownTimeout: 10 * time.Second, StartupTimeout: 10 * time.Second, Instructions: "", Fixtures: []string{}},
		Transport: TransportConfig{MaxMessageBytes: 4194304, MaxInFlight: 1024, MaxOutputBytes: 1048576, MaxBatchResponseBytes: 16777216},
		Tools: ToolsConfig{DefaultTimeout: 30 * time.Second, ClientRequestTimeout: time.Minute, MaxPayloadBytes: 1048576, MaxStateBytes: 262144, MaxResultBytes: 10485760,
			PageSize: 100, AdminRegistrationEnabled: false, AdminPolicy: AdminPolicyConfig{Mode: "deny_all", TokenEnvVar: ""},
			Profile: "full", Enabled: []string{}},
		Resources: ResourcesConfig{MaxConcurrentExecutions: 10},
		Logging: LoggingConfig{Level: "info", RedactKeys: []string{"token", "key", "secret", "password", "apiKey",
			"authorization", "bearer", "session", "cookie"}, MaxBufferBytes: 1048576},
		Security: SecurityConfig{DynamicRegistrationEnabled: false, AllowArbitraryCodeTools: false},
		AACP: messaging.Config{DefaultTTL: 24 * time.Hour, DataDir: ".mcprt", AgentID: "", AgentType: "AdHoc", Fsync: "always",
			AckTimeout: 0, MaxRetries: 3, RetryBase: time.Second, IdleAfter: 2 * time.Minute, StaleAfter: 15 * time.Minute},
		Stateless: StatelessConfig{RequestStateKeyEnvVar: "", RequestStateTTL: 10 * time.Minute, ListTTL: 0, ReadTTL: 0, CacheScope: "private"},
	}
	if got := DefaultBase("1.2.3"); !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultBase = %+v, want %+v", got, want)
	}
	for _, tc := range []struct {
		name, file string
		env        []string
	}{
		{"no file, no env", "", nil},
		{"empty object file", " {\n} \n", nil},
		{"empty sections", `{"server":{},"transport":{},"tools":{"adminPolicy":{}},"resources":{},"logging":{},"security":{},"aacp":{}}`, nil},
		{"unrelated and ignored variables", "", []string{"PATH=/bin", "MCPRTX=1", "mcprt_server_mode=x", "MCPRT_NO_EQUALS", "MCPRT_CONFIG=/nonexistent.json", "=C:=C:\\"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := ""
			if tc.file != "" {
				path = writeConfig(t, tc.file)
			}
			got, err := loadBase(path, tc.env, "1.2.3")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("loadBase = %+v, want %+v", got, want)
			}
		})
	}
	a, b := DefaultBase(""), DefaultBase("")
	a.Logging.RedactKeys[0] = "changed"
	if b.Logging.RedactKeys[0] != "token" {
		t.Error("DefaultBase shares its RedactKeys slice")
	}
}

// keyCases sets every key, in baseKeys order, to a value that is not its
// default (except the reserved key), once as file JSON and once as env text.
var keyCases = []struct {
	path, file, env string
	want            func(*Base)
}{
	{"server.name", `"srv"`, "srv", func(c *Base) { c.Server.Name = "srv" }},
	{"server.version", `"9.9"`, "9.9", func(c *Base) { c.Server.Version = "9.9" }},
	{"server.mode", `"READONLY"`, "READONLY", func(c *Base) { c.Server.Mode = mcp.ModeReadOnly }},
	{"server.shutdownTimeoutMs", `5`, "5", func(c *Base) { c.Server.ShutdownTimeout = 5 * time.Millisecond }},
	{"server.startupTimeoutMs", `6`, "6", func(c *Base) { c.Server.StartupTimeout = 6 * time.Millisecond }},
	{"server.instructions", `"use it\nwell"`, "use it\nwell", func(c *Base) { c.Server.Instructions = "use it\nwell" }},
	{"server.fixtures", `["conformance"]`, " conformance ,", func(c *Base) { c.Server.Fixtures = []string{"conformance"} }},
	{"transport.maxMessageBytes", `7`, "7", func(c *Base) { c.Transport.MaxMessageBytes = 7 }},
	{"transport.maxInFlight", `8`, "8", func(c *Base) { c.Transport.MaxInFlight = 8 }},
	{"transport.maxOutputBytes", `80`, "80", func(c *Base) { c.Transport.MaxOutputBytes = 80 }},
	{"transport.maxBatchResponseBytes", `81`, "81", func(c *Base) { c.Transport.MaxBatchResponseBytes = 81 }},
	{"tools.defaultTimeoutMs", `9`, "9", func(c *Base) { c.Tools.DefaultTimeout = 9 * time.Millisecond }},
	{"tools.clientRequestTimeoutMs", `15`, "15", func(c *Base) { c.Tools.ClientRequestTimeout = 15 * time.Millisecond }},
	{"tools.maxPayloadBytes", `10`, "10", func(c *Base) { c.Tools.MaxPayloadBytes = 10 }},
	{"tools.maxStateBytes", `11`, "11", func(c *Base) { c.Tools.MaxStateBytes = 11 }},
	{"tools.maxResultBytes", `12`, "12", func(c *Base) { c.Tools.MaxResultBytes = 12 }},
	{"tools.pageSize", `13`, "13", func(c *Base) { c.Tools.PageSize = 13 }},
	{"tools.adminRegistrationEnabled", `true`, "true", func(c *Base) { c.Tools.AdminRegistrationEnabled = true }},
	{"tools.adminPolicy.mode", `"local_stdio_only"`, "local_stdio_only", func(c *Base) { c.Tools.AdminPolicy.Mode = AdminPolicyLocalStdioOnly }},
	{"tools.adminPolicy.tokenEnvVar", `"ADMIN_TOKEN"`, "ADMIN_TOKEN", func(c *Base) { c.Tools.AdminPolicy.TokenEnvVar = "ADMIN_TOKEN" }},
	{"tools.profile", `"core"`, "core", func(c *Base) { c.Tools.Profile = ToolProfileCore }},
	{"tools.enabled", `["memory", "trace_*"]`, "memory,trace_*", func(c *Base) { c.Tools.Enabled = []string{"memory", "trace_*"} }},
	{"resources.maxConcurrentExecutions", `14`, "14", func(c *Base) { c.Resources.MaxConcurrentExecutions = 14 }},
	{"logging.level", `"debug"`, "debug", func(c *Base) { c.Logging.Level = "debug" }},
	{"logging.redactKeys", `["jwt", "x y"]`, " jwt, , x y ,", func(c *Base) { c.Logging.RedactKeys = []string{"jwt", "x y"} }},
	{"logging.maxBufferBytes", `82`, "82", func(c *Base) { c.Logging.MaxBufferBytes = 82 }},
	{"security.dynamicRegistrationEnabled", `true`, "1", func(c *Base) { c.Security.DynamicRegistrationEnabled = true }},
	{"security.allowArbitraryCodeTools", `false`, "0", func(c *Base) {}},
	{"aacp.defaultTtlMs", `9007199254740991`, "9007199254740991", func(c *Base) { c.AACP.DefaultTTL = math.MaxInt64 / time.Millisecond * time.Millisecond }},
	{"aacp.dataDir", `"/var/lib/mcprt"`, "/var/lib/mcprt", func(c *Base) { c.AACP.DataDir = "/var/lib/mcprt" }},
	{"aacp.agentId", `"manager_001"`, "manager_001", func(c *Base) { c.AACP.AgentID = "manager_001" }},
	{"aacp.agentType", `"Manager"`, "Manager", func(c *Base) { c.AACP.AgentType = "Manager" }},
	{"aacp.fsync", `"batch"`, "batch", func(c *Base) { c.AACP.Fsync = "batch" }},
	{"aacp.ackTimeoutMs", `250`, "250", func(c *Base) { c.AACP.AckTimeout = 250 * time.Millisecond }},
	{"aacp.maxRetries", `0`, "0", func(c *Base) { c.AACP.MaxRetries = 0 }},
	{"aacp.retryBaseMs", `16`, "16", func(c *Base) { c.AACP.RetryBase = 16 * time.Millisecond }},
	{"aacp.idleAfterMs", `5000`, "5000", func(c *Base) { c.AACP.IdleAfter = 5000 * time.Millisecond }},
	{"aacp.staleAfterMs", `60000`, "60000", func(c *Base) { c.AACP.StaleAfter = 60000 * time.Millisecond }},
	{"stateless.requestStateKeyEnvVar", `"STATE_KEY"`, "STATE_KEY", func(c *Base) { c.Stateless.RequestStateKeyEnvVar = "STATE_KEY" }},
	{"stateless.requestStateTtlMs", `5000`, "5000", func(c *Base) { c.Stateless.RequestStateTTL = 5000 * time.Millisecond }},
	{"stateless.listTtlMs", `60000`, "60000", func(c *Base) { c.Stateless.ListTTL = 60000 * time.Millisecond }},
	{"stateless.readTtlMs", `1000`, "1000", func(c *Base) { c.Stateless.ReadTTL = 1000 * time.Millisecond }},
	{"stateless.cacheScope", `"public"`, "public", func(c *Base) { c.Stateless.CacheScope = "public" }},
}

func TestConfigEachKey(t *testing.T) {
	keys := baseKeys()
	if len(keys) != len(keyCases) {
		t.Fatalf("%d baseKeys, %d keyCases", len(keys), len(keyCases))
	}
	for i, tc := range keyCases {
		if keys[i].Path != tc.path {
			t.Fatalf("baseKeys()[%d].Path = %q, keyCases has %q", i, keys[i].Path, tc.path)
		}
		want := DefaultBase("v1")
		tc.want(&want)
		t.Run(tc.path+"/file", func(t *testing.T) {
			got, err := loadBase(writeConfig(t, nestJSON(tc.path, tc.file)), nil, "v1")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
		t.Run(tc.path+"/env", func(t *testing.T) {
			got, err := loadBase("", []string{keys[i].Env + "=" + tc.env}, "v1")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestConfigAllKeysInOneFile(t *testing.T) {
	file := `{"server":{"name":"srv","version":"9.9","mode":"READONLY","shutdownTimeoutMs":5,"startupTimeoutMs":6,"instructions":"use it\nwell","fixtures":["conformance"]},
	"transport":{"maxMessageBytes":7,"maxInFlight":8,"maxOutputBytes":80,"maxBatchResponseBytes":81},
	"tools":{"defaultTimeoutMs":9,"clientRequestTimeoutMs":15,"maxPayloadBytes":10,"maxStateBytes":11,"maxResultBytes":12,"pageSize":13,
	  "adminRegistrationEnabled":true,"adminPolicy":{"mode":"local_stdio_only","tokenEnvVar":"ADMIN_TOKEN"},"profile":"core","enabled":["memory","trace_*"]},
	"resources":{"maxConcurrentExecutions":14},
	"logging":{"level":"debug","redactKeys":["jwt"," x y "],"maxBufferBytes":82},
	"security":{"dynamicRegistrationEnabled":true,"allowArbitraryCodeTools":false},
	"aacp":{"defaultTtlMs":9007199254740991,"dataDir":"/var/lib/mcprt","agentId":"manager_001","agentType":"Manager","fsync":"batch",
	  "ackTimeoutMs":250,"maxRetries":0,"retryBaseMs":16,"idleAfterMs":5000,"staleAfterMs":60000},
	"stateless":{"requestStateKeyEnvVar":"STATE_KEY","requestStateTtlMs":5000,"listTtlMs":60000,"readTtlMs":1000,"cacheScope":"public"}}`
	want := DefaultBase("v1")
	for _, tc := range keyCases {
		tc.want(&want)
	}
	want.Logging.RedactKeys = []string{"jwt", " x y "} // the file keeps spaces
	got, err := loadBase(writeConfig(t, file), nil, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestConfigPrecedence(t *testing.T) {
	path := writeConfig(t, `{"server":{"mode":"READONLY","name":"from-file"},"logging":{"redactKeys":["a"]}}`)
	env := []string{"MCPRT_SERVER_MODE=MINIMAL", "MCPRT_LOGGING_REDACT_KEYS=", "HOME=/root"}
	got, err := loadBase(path, env, "v1")
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultBase("v1")
	want.Server.Mode = mcp.ModeMinimal   // env beats file
	want.Server.Name = "from-file"       // file beats default
	want.Logging.RedactKeys = []string{} // an empty env list replaces the file's
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}

	// Of a variable given twice, the first counts (as with os.Getenv).
	got, err = loadBase("", []string{"MCPRT_LOGGING_LEVEL=warn", "MCPRT_LOGGING_LEVEL=bogus"}, "v1")
	if err != nil || got.Logging.Level != "warn" {
		t.Errorf("duplicate variable: level %q, err %v", got.Logging.Level, err)
	}
	// An empty version argument is fine when the environment sets one.
	got, err = loadBase("", []string{"MCPRT_SERVER_VERSION=2.0"}, "")
	if err != nil || got.Server.Version != "2.0" {
		t.Errorf("version from env: %q, %v", got.Server.Version, err)
	}
}

func TestConfigTokenVariableIsNotUnknown(t *testing.T) {
	path := writeConfig(t, `{"tools":{"adminPolicy":{"mode":"token","tokenEnvVar":"MCPRT_ADMIN_TOKEN"}}}`)
	if _, err := loadBase(path, []string{"MCPRT_ADMIN_TOKEN=s3cret"}, "v1"); err != nil {
		t.Errorf("token variable named in the file: %v", err)
	}
	env := []string{"MCPRT_TOOLS_ADMIN_POLICY_TOKEN_ENV_VAR=MCPRT_T", "MCPRT_T=s3cret"}
	if _, err := loadBase("", env, "v1"); err != nil {
		t.Errorf("token variable named in the env: %v", err)
	}
}

func TestConfigIntegers(t *testing.T) {
	for _, tc := range []struct {
		file string
		want int
	}{
		{"1", 1}, {"1e3", 1000}, {"1E+3", 1000}, {"1.0", 1}, {"10E-1", 1}, {"0.5e1", 5},
		{"500000e-5", 5}, {"9007199254740991", 9007199254740991}, {"900719925474099.1e1", 9007199254740991},
	} {
		got, err := loadBase(writeConfig(t, `{"tools":{"pageSize":`+tc.file+`}}`), nil, "v1")
		if err != nil || got.Tools.PageSize != tc.want {
			t.Errorf("pageSize %s: got %d, %v; want %d", tc.file, got.Tools.PageSize, err, tc.want)
		}
	}
	got, err := loadBase("", []string{"MCPRT_TOOLS_PAGE_SIZE=0010"}, "v1")
	if err != nil || got.Tools.PageSize != 10 {
		t.Errorf("env 0010: got %d, %v", got.Tools.PageSize, err)
	}
}

func TestEnvName(t *testing.T) {
	want := map[string]string{
		"server.name":                         "MCPRT_SERVER_NAME",
		"server.version":                      "MCPRT_SERVER_VERSION",
		"server.mode":                         "MCPRT_SERVER_MODE",
		"server.shutdownTimeoutMs":            "MCPRT_SERVER_SHUTDOWN_TIMEOUT_MS",
		"server.startupTimeoutMs":             "MCPRT_SERVER_STARTUP_TIMEOUT_MS",
		"server.instructions":                 "MCPRT_SERVER_INSTRUCTIONS",
		"server.fixtures":                     "MCPRT_SERVER_FIXTURES",
		"transport.maxMessageBytes":           "MCPRT_TRANSPORT_MAX_MESSAGE_BYTES",
		"transport.maxInFlight":               "MCPRT_TRANSPORT_MAX_IN_FLIGHT",
		"transport.maxOutputBytes":            "MCPRT_TRANSPORT_MAX_OUTPUT_BYTES",
		"transport.maxBatchResponseBytes":     "MCPRT_TRANSPORT_MAX_BATCH_RESPONSE_BYTES",
		"logging.maxBufferBytes":              "MCPRT_LOGGING_MAX_BUFFER_BYTES",
		"tools.defaultTimeoutMs":              "MCPRT_TOOLS_DEFAULT_TIMEOUT_MS",
		"tools.clientRequestTimeoutMs":        "MCPRT_TOOLS_CLIENT_REQUEST_TIMEOUT_MS",
		"tools.maxPayloadBytes":               "MCPRT_TOOLS_MAX_PAYLOAD_BYTES",
		"tools.maxStateBytes":                 "MCPRT_TOOLS_MAX_STATE_BYTES",
		"tools.maxResultBytes":                "MCPRT_TOOLS_MAX_RESULT_BYTES",
		"tools.pageSize":                      "MCPRT_TOOLS_PAGE_SIZE",
		"tools.adminRegistrationEnabled":      "MCPRT_TOOLS_ADMIN_REGISTRATION_ENABLED",
		"tools.adminPolicy.mode":              "MCPRT_TOOLS_ADMIN_POLICY_MODE",
		"tools.adminPolicy.tokenEnvVar":       "MCPRT_TOOLS_ADMIN_POLICY_TOKEN_ENV_VAR",
		"tools.profile":                       "MCPRT_TOOLS_PROFILE",
		"tools.enabled":                       "MCPRT_TOOLS_ENABLED",
		"stateless.requestStateKeyEnvVar":     "MCPRT_STATELESS_REQUEST_STATE_KEY_ENV_VAR",
		"stateless.requestStateTtlMs":         "MCPRT_STATELESS_REQUEST_STATE_TTL_MS",
		"stateless.listTtlMs":                 "MCPRT_STATELESS_LIST_TTL_MS",
		"stateless.readTtlMs":                 "MCPRT_STATELESS_READ_TTL_MS",
		"stateless.cacheScope":                "MCPRT_STATELESS_CACHE_SCOPE",
		"resources.maxConcurrentExecutions":   "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS",
		"logging.level":                       "MCPRT_LOGGING_LEVEL",
		"logging.redactKeys":                  "MCPRT_LOGGING_REDACT_KEYS",
		"security.dynamicRegistrationEnabled": "MCPRT_SECURITY_DYNAMIC_REGISTRATION_ENABLED",
		"security.allowArbitraryCodeTools":    "MCPRT_SECURITY_ALLOW_ARBITRARY_CODE_TOOLS",
		"aacp.defaultTtlMs":                   "MCPRT_AACP_DEFAULT_TTL_MS",
		"aacp.dataDir":                        "MCPRT_AACP_DATA_DIR",
		"aacp.agentId":                        "MCPRT_AACP_AGENT_ID",
		"aacp.agentType":                      "MCPRT_AACP_AGENT_TYPE",
		"aacp.fsync":                          "MCPRT_AACP_FSYNC",
		"aacp.ackTimeoutMs":                   "MCPRT_AACP_ACK_TIMEOUT_MS",
		"aacp.maxRetries":                     "MCPRT_AACP_MAX_RETRIES",
		"aacp.retryBaseMs":                    "MCPRT_AACP_RETRY_BASE_MS",
		"aacp.idleAfterMs":                    "MCPRT_AACP_IDLE_AFTER_MS",
		"aacp.staleAfterMs":                   "MCPRT_AACP_STALE_AFTER_MS",
		// Beyond the keys: acronyms and digits.
		"a.maxHTTPBytes": "MCPRT_A_MAX_HTTP_BYTES",
		"a.b2cId":        "MCPRT_A_B2C_ID",
	}
	for path, env := range want {
		if got := EnvName(path); got != env {
			t.Errorf("EnvName(%q) = %q, want %q", path, got, env)
		}
	}
	for _, k := range baseKeys() {
		if want[k.Path] != k.Env {
			t.Errorf("baseKeys: %s has Env %q, want %q", k.Path, k.Env, want[k.Path])
		}
	}
}

func TestConfigKeysCoverConfig(t *testing.T) {
	var paths []string
	for _, k := range baseKeys() {
		paths = append(paths, k.Path)
		if k.Env == "" || k.Default == "" && k.Path != "server.instructions" && k.Path != "server.fixtures" && k.Path != "tools.enabled" && k.Path != "tools.adminPolicy.tokenEnvVar" && k.Path != "aacp.agentId" &&
			k.Path != "stateless.requestStateKeyEnvVar" ||
			k.Allowed == "" || k.Meaning == "" {
			t.Errorf("incomplete Key %+v", k)
		}
	}
	if fields := leafPaths(reflect.TypeFor[Base](), ""); !slices.Equal(paths, fields) {
		t.Errorf("baseKeys paths\n%q\nConfig fields\n%q", paths, fields)
	}
	if !reflect.DeepEqual(baseKeys(), baseKeys()) {
		t.Error("baseKeys is not stable")
	}
}

// Every Env of baseKeys reaches its field through loadBase, and every
// Default, set through its Env, yields the defaults.
func TestConfigKeysRoundTrip(t *testing.T) {
	var defaults []string
	for i, k := range baseKeys() {
		tc := keyCases[i]
		got, err := loadBase("", []string{k.Env + "=" + tc.env}, "v1")
		if err != nil {
			t.Fatalf("%s=%q: %v", k.Env, tc.env, err)
		}
		want := DefaultBase("v1")
		tc.want(&want)
		if g, w := configField(&got, k.Path), configField(&want, k.Path); !g.IsValid() || !reflect.DeepEqual(g.Interface(), w.Interface()) {
			t.Errorf("%s=%q: field %s = %v, want %v", k.Env, tc.env, k.Path, g, w)
		}
		if k.Path != "server.version" {
			defaults = append(defaults, k.Env+"="+k.Default)
		}
	}
	got, err := loadBase("", defaults, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if want := DefaultBase("v1"); !reflect.DeepEqual(got, want) {
		t.Errorf("defaults through env: got %+v, want %+v", got, want)
	}
}

func TestConfigErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		err  Error
		want string
	}{
		{Error{Key: "tools.defaultTimeoutMs", Env: "MCPRT_TOOLS_DEFAULT_TIMEOUT_MS", Value: "abc", Allowed: "an integer >= 1", Source: "env"},
			`config: tools.defaultTimeoutMs = "abc" (from MCPRT_TOOLS_DEFAULT_TIMEOUT_MS) is invalid; allowed: an integer >= 1`},
		{Error{Key: "server.mode", Env: "MCPRT_SERVER_MODE", Value: `"full"`, Allowed: "one of FULL", Source: "file", Reason: "bad"},
			`config: server.mode = "full" (from the config file) is invalid: bad; allowed: one of FULL`},
		{Error{Key: "server.version", Env: "MCPRT_SERVER_VERSION", Value: "", Allowed: "a non-empty string", Source: "default", Reason: "must not be empty"},
			`config: server.version = "" (default) is invalid: must not be empty; allowed: a non-empty string`},
		{Error{Env: "MCPRT_X", Value: "1", Allowed: "a known MCPRT_* variable (see README)", Source: "env", Reason: "unknown variable"},
			`config: unknown environment variable MCPRT_X = "1" is invalid: unknown variable; allowed: a known MCPRT_* variable (see README)`},
		{Error{Key: "transport.http", Value: "(the section)", Allowed: "a consistent transport.http section", Source: "env", Reason: "bad"},
			`config: transport.http = "(the section)" (from the environment) is invalid: bad; allowed: a consistent transport.http section`},
		{Error{Key: "config", Env: "MCPRT_CONFIG", Value: "/x.json", Allowed: "a file", Source: "file", Reason: "cannot read"},
			`config: config file "/x.json" (--config or MCPRT_CONFIG) is invalid: cannot read; allowed: a file`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() =\n%s\nwant\n%s", got, tc.want)
		}
	}
	_, err := loadBase("", []string{"MCPRT_SERVER_MODE=x"}, "v1")
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "server.mode" {
		t.Fatalf("loadBase error %v is not the *Error of server.mode", err)
	}
}
