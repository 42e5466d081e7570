package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// TestOfficialTypeScriptClient drives the real binary with the official MCP
// TypeScript SDK client (@modelcontextprotocol/sdk, pinned in
// testdata/tsclient/package-lock.json): handshake, ping, tools/list, calls
// whose structuredContent the SDK checks against each outputSchema, tool
// errors, agents, dynamic registration with list_changed, and a call the
// client abandons (notifications/cancelled). It needs node and npm (without
// them it skips, saying why) and the npm registry (an install failure fails).
func TestOfficialTypeScriptClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the TypeScript SDK client test needs it")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed; the TypeScript SDK client test needs it")
	}
	dir := t.TempDir()
	for _, name := range []string{"package.json", "package-lock.json", "client.mjs"} {
		b, err := os.ReadFile(filepath.Join("testdata", "tsclient", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("cannot install the pinned TypeScript SDK from the npm registry (%v):\n%s", err, out)
	}
	run := exec.CommandContext(ctx, node, "client.mjs")
	run.Dir = dir
	run.Env = append(os.Environ(), "MCPRT_BIN="+wiretest.Build(t))
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the TypeScript SDK client failed (%v):\n%s", err, out)
	}
	t.Logf("%s", out)
}
