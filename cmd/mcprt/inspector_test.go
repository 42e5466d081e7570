package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// TestInspectorCLI drives the real binary, in mode TEST, with the CLI mode
// of the MCP Inspector (@modelcontextprotocol/inspector, pinned in
// testdata/inspector/package-lock.json), as a user would:
//
//	npx @modelcontextprotocol/inspector --cli -e MCPRT_SERVER_MODE=TEST mcprt --method tools/list
//
// Each case runs one method (tools/list, with --strict too, tools/call,
// resources/list, resources/templates/list, resources/read, prompts/list,
// prompts/get, logging/setLevel) in a new Inspector process that starts
// its own server, and checks the JSON the Inspector prints, or, for a
// request the server refuses, its exit code and error. Without node or
// npm the test skips, saying why; a failed install of the pinned
// Inspector fails it. Each run is bounded (one minute).
func TestInspectorCLI(t *testing.T) {
	node, modules := npmInstall(t, "inspector")
	inspector := inspectorBin(t, modules)
	bin := wiretest.Build(t)
	home := t.TempDir() // the Inspector's catalog and settings stay in here

	type result = map[string]any
	cases := []struct {
		name  string
		args  []string
		exit  int    // the Inspector's exit code: 0, 1 (an error), 5 (a tool error)
		fails string // when set, what its error must say (and there is no output to check)
		check func(t *testing.T, out result)
	}{
		{name: "tools/list", args: []string{"--method", "tools/list"}, check: func(t *testing.T, out result) {
			names := namesOf(t, out, "tools", "name")
			if !slices.IsSorted(names) {
				t.Errorf("tools not sorted by name: %q", names)
			}
			for _, n := range []string{"server_ping", "health", "echo", "noop", "sleep", "demo_touch", "demo_progress",
				"demo_log", "demo_sample", "demo_elicit", "demo_roots"} {
				if !slices.Contains(names, n) {
					t.Errorf("tools/list lacks %s: %q", n, names)
				}
			}
		}},
		// --strict exits 6 when a tool's schema has an error-severity
		// portability problem.
		{name: "tools/list strict", args: []string{"--method", "tools/list", "--strict"}, check: func(t *testing.T, out result) {
			namesOf(t, out, "tools", "name")
		}},
		{name: "tools/call echo", args: []string{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi"},
			check: func(t *testing.T, out result) {
				sc, _ := out["structuredContent"].(result)
				if out["isError"] != false || sc["message"] != "hi" {
					t.Errorf("echo: %v", out)
				}
			}},
		{name: "tools/call fail", args: []string{"--method", "tools/call", "--tool-name", "fail", "--tool-arg", "message=boom"},
			exit: 5, check: func(t *testing.T, out result) {
				content, _ := out["content"].([]any)
				first, _ := firstOf(content).(result)
				text, _ := first["text"].(string)
				var se struct{ Code, Message, CorrelationID, RunID string }
				if out["isError"] != true || json.Unmarshal([]byte(text), &se) != nil || se.Code != "INTERNAL" || se.Message != "boom" {
					t.Errorf("fail: want a tool error with a StructuredError INTERNAL boom: %v", out)
				}
			}},
		{name: "resources/list", args: []string{"--method", "resources/list"}, check: func(t *testing.T, out result) {
			uris := namesOf(t, out, "resources", "uri")
			for _, u := range []string{"demo://counter", "demo://static/logo", "demo://static/readme"} {
				if !slices.Contains(uris, u) {
					t.Errorf("resources/list lacks %s: %q", u, uris)
				}
			}
		}},
		{name: "resources/templates/list", args: []string{"--method", "resources/templates/list"}, check: func(t *testing.T, out result) {
			if tmpls := namesOf(t, out, "resourceTemplates", "uriTemplate"); !slices.Contains(tmpls, "demo://notes/{name}") {
				t.Errorf("resources/templates/list lacks demo://notes/{name}: %q", tmpls)
			}
		}},
		{name: "resources/read text", args: []string{"--method", "resources/read", "--uri", "demo://static/readme"},
			check: func(t *testing.T, out result) {
				c, _ := firstOf(out["contents"]).(result)
				text, _ := c["text"].(string)
				if c["uri"] != "demo://static/readme" || c["mimeType"] != "text/markdown" || !strings.HasPrefix(text, "# mcprt demo") {
					t.Errorf("readme: %v", out)
				}
			}},
		{name: "resources/read template", args: []string{"--method", "resources/read", "--uri", "demo://notes/gamma"},
			check: func(t *testing.T, out result) {
				c, _ := firstOf(out["contents"]).(result)
				if c["uri"] != "demo://notes/gamma" || c["text"] != "The third note." {
					t.Errorf("note: %v", out)
				}
			}},
		{name: "resources/read unknown", args: []string{"--method", "resources/read", "--uri", "demo://nothing"},
			exit: 1, fails: "Resource not found"},
		{name: "prompts/list", args: []string{"--method", "prompts/list"}, check: func(t *testing.T, out result) {
			names := namesOf(t, out, "prompts", "name")
			if !slices.Contains(names, "demo_greeting") || !slices.Contains(names, "demo_review") {
				t.Errorf("prompts/list lacks demo_greeting or demo_review: %q", names)
			}
		}},
		{name: "prompts/get", args: []string{"--method", "prompts/get", "--prompt-name", "demo_greeting", "--prompt-args", "name=Ada", "style=pirate"},
			check: func(t *testing.T, out result) {
				msgs, _ := out["messages"].([]any)
				if len(msgs) != 2 || !strings.Contains(jsonText(msgs[1]), `"text":"Ahoy, Ada!"`) {
					t.Errorf("demo_greeting: %v", out)
				}
			}},
		{name: "prompts/get missing argument", args: []string{"--method", "prompts/get", "--prompt-name", "demo_greeting"},
			exit: 1, fails: `needs the argument(s) "name"`},
		{name: "logging/setLevel", args: []string{"--method", "logging/setLevel", "--log-level", "debug"},
			check: func(t *testing.T, out result) {
				if len(out) != 0 {
					t.Errorf("logging/setLevel: %v, want {}", out)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			args := append([]string{inspector, "--cli", "-e", "MCPRT_SERVER_MODE=TEST", bin}, c.args...)
			cmd := exec.CommandContext(ctx, node, args...)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "HOME="+home, "MCP_CATALOG_PATH="+filepath.Join(home, "mcp.json"), "NO_COLOR=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if ctx.Err() != nil || cmd.ProcessState == nil {
				t.Fatalf("the Inspector did not finish within a minute: %v\nstderr:\n%s", ctx.Err(), clip(stderr.String()))
			}
			code := cmd.ProcessState.ExitCode()
			if code != c.exit || err != nil && code < 0 {
				t.Fatalf("the Inspector exited with %d (%v), want %d\nstdout:\n%s\nstderr:\n%s", code, err, c.exit,
					clip(stdout.String()), clip(stderr.String()))
			}
			if c.fails != "" {
				if msg := inspectorError(stderr.Bytes()); !strings.Contains(msg, c.fails) {
					t.Fatalf("want the Inspector's error to say %q; it says %q\nstderr:\n%s", c.fails, msg, clip(stderr.String()))
				}
				return
			}
			var out result
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatalf("the Inspector's output is not a JSON object (%v):\n%s", err, clip(stdout.String()))
			}
			c.check(t, out)
		})
	}
}

// inspectorBin returns the script that npx @modelcontextprotocol/inspector
// runs: the package's mcp-inspector bin.
func inspectorBin(t *testing.T, modules string) string {
	t.Helper()
	dir := filepath.Join(modules, "@modelcontextprotocol", "inspector")
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Bin map[string]string `json:"bin"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil || pkg.Bin["mcp-inspector"] == "" {
		t.Fatalf("the Inspector's package.json names no mcp-inspector bin (%v)", err)
	}
	return filepath.Join(dir, pkg.Bin["mcp-inspector"])
}

// inspectorError returns the message of the error the Inspector reports
// on stderr, a line {"error": {"code", "message"}} among the server's logs.
func inspectorError(stderr []byte) string {
	for l := range bytes.Lines(stderr) {
		var e struct {
			Error *struct{ Message string } `json:"error"`
		}
		if json.Unmarshal(l, &e) == nil && e.Error != nil {
			return e.Error.Message
		}
	}
	return ""
}

// namesOf returns member key of each item of out[list], which must be a
// non-empty array of objects.
func namesOf(t *testing.T, out map[string]any, list, key string) []string {
	t.Helper()
	items, _ := out[list].([]any)
	if len(items) == 0 {
		t.Fatalf("no %s in %s", list, clip(jsonText(out)))
	}
	var names []string
	for _, it := range items {
		m, _ := it.(map[string]any)
		s, _ := m[key].(string)
		names = append(names, s)
	}
	return names
}

func firstOf(v any) any {
	if a, _ := v.([]any); len(a) > 0 {
		return a[0]
	}
	return nil
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
