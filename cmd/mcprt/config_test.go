package main

// Configuration through the binary: invalid settings, config files, limits from the file.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// --- configuration -----------------------------------------------

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestInvalidConfigurationExits78(t *testing.T) {
	t.Parallel()
	const intAllowed = "an integer >= 1 and <= 9007199254740991"
	const fileAllowed = "a readable JSON object file (UTF-8, at most 1048576 bytes)"
	missing := filepath.Join(t.TempDir(), "missing.json")
	tests := []struct {
		name    string
		args    []string
		env     []string
		file    string // content of a config file passed with --config
		key     string
		envName string
		value   string
		allowed string // a prefix of the allowed field
		inMsg   string
	}{
		{name: "unknown MCPRT_ variable", env: []string{"MCPRT_SERVER_NAMEE=x"},
			key: "", envName: "MCPRT_SERVER_NAMEE", value: "x", allowed: "a known MCPRT_* variable", inMsg: "did you mean MCPRT_SERVER_NAME?"},
		// A shell that exported a token as MCPRT_TOKEN: the message says to rename it.
		{name: "secret under the MCPRT_ prefix", env: []string{"MCPRT_TOKEN=s3cret"},
			key: "", envName: "MCPRT_TOKEN", value: "[REDACTED]", allowed: "a known MCPRT_* variable",
			inMsg: "a variable of your own, such as one holding a token or secret, must not start with MCPRT_: rename it"},
		{name: "bad number", env: []string{"MCPRT_TOOLS_DEFAULT_TIMEOUT_MS=abc"},
			key: "tools.defaultTimeoutMs", envName: "MCPRT_TOOLS_DEFAULT_TIMEOUT_MS", value: "abc", allowed: intAllowed},
		{name: "zero", env: []string{"MCPRT_TRANSPORT_MAX_MESSAGE_BYTES=0"},
			key: "transport.maxMessageBytes", envName: "MCPRT_TRANSPORT_MAX_MESSAGE_BYTES", value: "0", allowed: intAllowed},
		{name: "bad enum", env: []string{"MCPRT_SERVER_MODE=fast"},
			key: "server.mode", envName: "MCPRT_SERVER_MODE", value: "fast", allowed: "one of FULL, READONLY, MINIMAL, TEST"},
		{name: "bad level", env: []string{"MCPRT_LOGGING_LEVEL=verbose"},
			key: "logging.level", envName: "MCPRT_LOGGING_LEVEL", value: "verbose", allowed: "one of debug, info, warn, error"},
		{name: "bad boolean", env: []string{"MCPRT_SECURITY_DYNAMIC_REGISTRATION_ENABLED=yes"},
			key: "security.dynamicRegistrationEnabled", envName: "MCPRT_SECURITY_DYNAMIC_REGISTRATION_ENABLED", value: "yes", allowed: "true, false, 1 or 0"},
		{name: "reserved switch", env: []string{"MCPRT_SECURITY_ALLOW_ARBITRARY_CODE_TOOLS=true"},
			key: "security.allowArbitraryCodeTools", envName: "MCPRT_SECURITY_ALLOW_ARBITRARY_CODE_TOOLS", value: "true", allowed: "false"},
		{name: "unknown file key", file: `{"server":{"nmae":"x"}}`,
			key: "server.nmae", envName: "", value: `"x"`, allowed: "one of name, version, mode"},
		{name: "unknown file section", file: `{"sever":{}}`,
			key: "sever", envName: "", value: `{}`, allowed: "one of server, transport"},
		{name: "bad file value", file: `{"transport":{"maxMessageBytes":"big"}}`,
			key: "transport.maxMessageBytes", envName: "MCPRT_TRANSPORT_MAX_MESSAGE_BYTES", value: `"big"`, allowed: intAllowed},
		{name: "file not found", args: []string{"--config", missing},
			key: "config", envName: "MCPRT_CONFIG", value: missing, allowed: fileAllowed},
		{name: "file not found via MCPRT_CONFIG", env: []string{"MCPRT_CONFIG=" + missing},
			key: "config", envName: "MCPRT_CONFIG", value: missing, allowed: fileAllowed},
		{name: "invalid JSON file", file: `{"server": {"name": "x",}}`,
			key: "config", envName: "MCPRT_CONFIG", allowed: fileAllowed},
		{name: "file is not an object", file: `[1]`,
			key: "config", envName: "MCPRT_CONFIG", allowed: fileAllowed},
		{name: "file is a directory", args: []string{"--config", filepath.Dir(missing)},
			key: "config", envName: "MCPRT_CONFIG", value: filepath.Dir(missing), allowed: fileAllowed},
		{name: "file is empty", file: " \n",
			key: "config", envName: "MCPRT_CONFIG", allowed: fileAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := tt.args
			if tt.file != "" {
				path := writeFile(t, "config.json", tt.file)
				args = []string{"--config", path}
				if tt.value == "" {
					tt.value = path
				}
			}
			stdout, stderr, code := runBinary(t, args, tt.env, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
			if code != 78 {
				t.Fatalf("exit code %d, want 78\nstderr:\n%s", code, stderr)
			}
			if stdout != "" {
				t.Fatalf("stdout %q, want nothing", stdout)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if len(lines) != 1 {
				t.Fatalf("stderr has %d lines, want exactly one:\n%s", len(lines), stderr)
			}
			m, err := wiretest.CheckLogLine(lines[0])
			if err != nil {
				t.Fatal(err)
			}
			if m["level"] != "ERROR" {
				t.Errorf("level %v, want ERROR", m["level"])
			}
			inMsg := tt.inMsg
			if inMsg == "" {
				inMsg = tt.key
			}
			if msg := m["msg"].(string); !strings.Contains(msg, inMsg) {
				t.Errorf("msg %q does not name %q", msg, inMsg)
			}
			for field, want := range map[string]string{"key": tt.key, "env": tt.envName, "value": tt.value} {
				if m[field] != want {
					t.Errorf("field %s = %#v, want %q", field, m[field], want)
				}
			}
			if allowed, _ := m["allowed"].(string); !strings.HasPrefix(allowed, tt.allowed) {
				t.Errorf("field allowed = %q, want it to start with %q", allowed, tt.allowed)
			}
		})
	}
}

func TestConfigFile(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "mcprt.json", `{"server":{"name":"from-file","instructions":"file says hi"}}`)
	tests := []struct {
		name     string
		args     []string
		env      []string
		wantName string
	}{
		{"--config", []string{"--config", path}, nil, "from-file"},
		{"--config=", []string{"--config=" + path}, nil, "from-file"},
		{"MCPRT_CONFIG", nil, []string{"MCPRT_CONFIG=" + path}, "from-file"},
		{"--config beats MCPRT_CONFIG", []string{"--config", path}, []string{"MCPRT_CONFIG=/nonexistent/x.json"}, "from-file"},
		{"environment beats file", []string{"--config", path}, []string{"MCPRT_SERVER_NAME=from-env"}, "from-env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Args: tt.args, Env: tt.env})
			res := p.Handshake(t, latestRevision)
			if si := res["serverInfo"].(map[string]any); si["name"] != tt.wantName {
				t.Errorf("serverInfo.name %v, want %s", si["name"], tt.wantName)
			}
			if res["instructions"] != "file says hi" {
				t.Errorf("instructions %v, want the file's", res["instructions"])
			}
			finish(t, p)
		})
	}
}

func TestTransportLimitFromConfig(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "mcprt.json", `{"transport":{"maxMessageBytes":100}}`)
	p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Args: []string{"--config", path}})
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 100) + `"}}`)
	e := expectError(t, p, "null", -32600)
	if got := fmt.Sprint(errData(e)["maxMessageBytes"]); got != "100" {
		t.Errorf("data.maxMessageBytes %s, want 100", got)
	}
	pingOK(t, p, "2")
	finish(t, p)
}
