package main

// Helpers of the domain tool tests (memory_*, session_*, guard_*,
// trace_*, workflow_*): the tool names by annotation, and a client whose store lives
// in a directory of the test's.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var (
	// domainReadOnlyTools are the domain tools annotated read-only: the
	// ones mode READONLY admits.
	domainReadOnlyTools = []string{"agent_get", "guard_check", "guard_list", "memory_export", "memory_list", "memory_retrieve",
		"memory_search", "memory_stats", "session_list", "session_status", "trace_analyze", "trace_by_session",
		"trace_get", "trace_list", "trace_tree", "workflow_describe", "workflow_list",
		"check_reservations", "list_reservations", "task_get", "task_list"}
	// domainWriteTools change the store.
	domainWriteTools = []string{"agent_run", "guard_apply", "memory_delete", "memory_import", "memory_store", "session_complete",
		"session_create", "session_fail", "session_join", "session_leave", "workflow_run",
		"force_release_reservation", "release_reservations", "renew_reservations", "reserve_paths",
		"task_claim", "task_handoff", "task_post", "task_release", "task_steal", "task_update", "coord_finish", "coord_start"}
)

// newDomainClient starts the binary with its store in dir (a fresh
// temporary directory when "") and brings it to RUNNING.
func newDomainClient(t *testing.T, dir string, env ...string) (*toolClient, string) {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	// Tracing is on by default; these tests read traces, so say so anyway
	// (a later MCPRT_TRACE_ENABLED in env wins).
	return newToolClient(t, append([]string{"MCPRT_STORE_DIR=" + dir, "MCPRT_TRACE_ENABLED=true"}, env...)...), dir
}

// okCID calls name with args under the correlation id cid and returns its
// object result.
func (c *toolClient) okCID(name, args, cid string) map[string]any {
	c.t.Helper()
	id := c.sendCID(name, args, cid)
	m, ok := c.success(id).(map[string]any)
	if !ok {
		c.t.Fatalf("%s returned a non-object", name)
	}
	return m
}

// failsQuick calls name and checks that it is a tool error with code,
// without waiting for its completion record.
func (c *toolClient) failsQuick(name, args, code string) toolErr {
	c.t.Helper()
	return c.toolError(c.send(name, args), code)
}

// asJSON re-encodes v, for comparisons and searches in test output.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// filesUnder lists the regular files under dir, relative to it.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// domNum reads a JSON number of a decoded result.
func domNum(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case json.Number:
		i, _ := n.Int64()
		return int(i)
	}
	return -1
}

// rawToolError calls name and returns its StructuredError as decoded,
// for domain errors whose retryable flag the core table does not cover
// (a value over the memory limit is RESOURCE_EXHAUSTED, not retryable).
func (c *toolClient) rawToolError(name, args string) map[string]any {
	c.t.Helper()
	id := c.send(name, args)
	res := c.result(id)
	if res["isError"] != true {
		c.t.Fatalf("%s: want a tool error, got %v", name, res)
	}
	obj, _ := tcDecode(c.t, firstText(c.t, res, "")).(map[string]any)
	return obj
}
