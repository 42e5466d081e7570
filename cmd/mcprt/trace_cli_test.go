package main

// Traces as a new user meets them: a trace read right after its call in
// the writing process, a trace another process cannot see yet, and the
// `mcprt trace` command line (--data-dir, usage, exit codes).

import (
	"fmt"
	"strings"
	"testing"
)

// In the writing process a trace is readable as soon as its call was
// answered, however long the writer lingers.
func TestTraceReadableRightAfterItsCall(t *testing.T) {
	t.Parallel()
	c, _ := newDomainClient(t, "", "MCPRT_TRACE_FLUSH_INTERVAL_MS=60000")
	for i := range 5 {
		id := fmt.Sprintf("fresh%d", i)
		c.okCID("memory_stats", `{}`, id)
		tree := c.ok("trace_tree", `{"traceId":"`+id+`"}`)
		if !strings.Contains(asJSON(t, tree), "memory_stats") {
			t.Fatalf("trace_tree %s right after its call: %s", id, clip(asJSON(t, tree)))
		}
		got := c.ok("trace_get", `{"traceId":"`+id+`"}`)
		if evs, _ := got["events"].([]any); len(evs) != 1 {
			t.Fatalf("trace_get %s right after its call: %s", id, clip(asJSON(t, got)))
		}
	}
}

// A trace id this process cannot see (yet) says that another process may
// still be writing it, and for how long.
func TestTraceNotFoundMayBeInFlight(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := newToolClient(t, "MCPRT_AACP_DATA_DIR="+dir, "MCPRT_TRACE_FLUSH_INTERVAL_MS=300")
	e := c.failsQuick("trace_tree", `{"traceId":"elsewhere"}`, "TRACE_NOT_FOUND")
	for _, want := range []string{`no trace has id "elsewhere" yet`, "may still be in flight", "within about 350 ms", "trace.flushIntervalMs"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("TRACE_NOT_FOUND message %q lacks %q", e.Message, want)
		}
	}
	c.ok("memory_stats", `{}`) // the store exists now
	finish(t, c.p)
	stdout, stderr, code := runBinary(t, []string{"trace", "show", "--data-dir", dir, "elsewhere"}, []string{"MCPRT_TRACE_FLUSH_INTERVAL_MS=300"}, "")
	if code != 1 || stdout != "" || !strings.Contains(stderr, "may still be in flight") {
		t.Errorf("mcprt trace show of an unknown id: exit %d, stdout %q, stderr %q; want 1 and the in-flight hint", code, stdout, stderr)
	}
}

func TestTraceCommandLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := newToolClient(t, "MCPRT_AACP_DATA_DIR="+dir)
	c.okCID("memory_stats", `{}`, "cli1")
	finish(t, c.p)
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // part of stdout ("" for none)
		stderr string // part of stderr ("" for none)
	}{
		{"no command", []string{"trace"}, 2, "", "no command given; use show or list"},
		{"help", []string{"trace", "--help"}, 0, "--data-dir DIR", ""},
		{"show with --data-dir after", []string{"trace", "show", "cli1", "--data-dir", dir}, 0, "memory_stats", ""},
		{"show with --data-dir before", []string{"trace", "--data-dir", dir, "show", "cli1"}, 0, "memory_stats", ""},
		{"list", []string{"trace", "list", "--data-dir=" + dir, "-n", "5"}, 0, "cli1", ""},
		{"no store there", []string{"trace", "list", "--data-dir", t.TempDir()}, 1, "", "pass --data-dir DIR"},
		{"unknown command", []string{"trace", "shwo", "x"}, 2, "", `unknown command "shwo"`},
		{"show without id", []string{"trace", "show"}, 2, "", "give exactly one trace id"},
		{"unknown flag", []string{"trace", "list", "--bogus"}, 2, "", "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runBinary(t, tc.args, nil, "")
			if code != tc.code || tc.stdout != "" && !strings.Contains(stdout, tc.stdout) || tc.stderr != "" && !strings.Contains(stderr, tc.stderr) {
				t.Errorf("mcprt %v: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, code, clip(stdout), clip(stderr),
					tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

// mcprt --help names every subcommand.
func TestHelpListsEverySubcommand(t *testing.T) {
	t.Parallel()
	stdout, _, code := runBinary(t, []string{"--help"}, nil, "")
	if code != 0 {
		t.Fatalf("--help exited %d", code)
	}
	for _, sub := range []string{"mcprt aacp", "mcprt trace", "mcprt hook", "mcprt guard", "mcprt ui"} {
		if !strings.Contains(stdout, sub) {
			t.Errorf("mcprt --help does not list %q:\n%s", sub, stdout)
		}
	}
}
