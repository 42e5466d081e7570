package main

// Black-box tests of the one rule for definition files: a FIFO (or other
// non-regular file) as --config (or MCPRT_CONFIG) or among the *.json of workflow.dir,
// guard.policiesDir or agent.dir is refused at once, naming it; a
// directory named *.json is skipped in every definitions directory.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("mkfifo %s: %v", path, err)
	}
	return path
}

func TestHostileFilesFIFORefusedAtOnce(t *testing.T) {
	t.Parallel()
	wiretest.Build(t) // built once, so the timing below is the binary's
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		env  []string
		key  string
	}{
		{name: "--config", args: []string{"--config", mkfifo(t, filepath.Join(dir, "config.json"))}, key: "config"},
		{name: "MCPRT_CONFIG", env: []string{"MCPRT_CONFIG=" + mkfifo(t, filepath.Join(dir, "env-config.json"))}, key: "config"},
		{name: "workflow.dir", env: []string{"MCPRT_WORKFLOW_DIR=" + fifoDir(t, "wf.json")}, key: "workflow.dir"},
		{name: "guard.policiesDir", env: []string{"MCPRT_GUARD_POLICIES_DIR=" + fifoDir(t, "p.json")}, key: "guard.policiesDir"},
		{name: "agent.dir", env: []string{"MCPRT_AGENT_DIR=" + fifoDir(t, "a.json")}, key: "agent.dir"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			_, stderr, code := runBinary(t, tc.args, append([]string{"MCPRT_STORE_DIR=" + t.TempDir()}, tc.env...),
				`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("refusal took %v; a FIFO must be refused without waiting for a writer", took)
			}
			if code != 78 {
				t.Fatalf("exit code %d, want 78 (invalid configuration)\nstderr:\n%s", code, stderr)
			}
			if !strings.Contains(stderr, "not a regular file") || !strings.Contains(stderr, ".json") || !strings.Contains(stderr, tc.key) {
				t.Fatalf("stderr does not name the FIFO as not a regular file, and %s:\n%s", tc.key, stderr)
			}
		})
	}
}

// fifoDir makes a directory holding one FIFO named name.
func fifoDir(t *testing.T, name string) string {
	t.Helper()
	d := t.TempDir()
	mkfifo(t, filepath.Join(d, name))
	return d
}

func TestHostileFilesDirectoryNamedJSONSkipped(t *testing.T) {
	t.Parallel()
	var env []string
	for _, key := range []string{"MCPRT_WORKFLOW_DIR", "MCPRT_GUARD_POLICIES_DIR", "MCPRT_AGENT_DIR"} {
		d := t.TempDir()
		if err := os.Mkdir(filepath.Join(d, "sub.json"), 0o755); err != nil {
			t.Fatal(err)
		}
		env = append(env, key+"="+d)
	}
	c, _ := newDomainClient(t, "", env...)
	if r := c.ok("guard_list", `{}`); domNum(r["total"]) < 2 {
		t.Fatalf("guard_list after skipping a directory named *.json: %v", r)
	}
}
