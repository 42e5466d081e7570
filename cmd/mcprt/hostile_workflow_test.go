package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeStepsWorkflow writes a workflow of n steps, each calling tool with
// input, to dir.
func writeStepsWorkflow(t *testing.T, dir, id string, n int, tool string, input any) {
	t.Helper()
	steps := make([]map[string]any, n)
	for i := range steps {
		steps[i] = map[string]any{"id": fmt.Sprintf("s%d", i), "tool": tool, "input": input}
	}
	b, err := json.Marshal(map[string]any{"id": id, "name": id, "version": "1.0.0", "status": "active", "steps": steps})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHostileWorkflowRunBounded: 20-step workflows nested 3 deep would be
// 2,105 steps; the run is bounded up front (MaxRunSteps, nested runs
// included): it fails RESOURCE_EXHAUSTED naming the limit, long before
// doing the work.
func TestHostileWorkflowRunBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeStepsWorkflow(t, dir, "leaf", 20, "memory_stats", map[string]any{})
	writeStepsWorkflow(t, dir, "mid", 20, "workflow_run", map[string]any{"workflowId": "leaf"})
	writeStepsWorkflow(t, dir, "top", 5, "workflow_run", map[string]any{"workflowId": "mid"})
	c, _ := newDomainClient(t, "", "MCPRT_WORKFLOW_DIR="+dir)
	e := c.rawToolError("workflow_run", `{"workflowId":"top"}`)
	if e["code"] != "WORKFLOW_STEP_FAILED" && e["code"] != "RESOURCE_EXHAUSTED" {
		t.Fatalf("workflow_run of 2,105 nested steps: %v; want it refused for MaxRunSteps", e)
	}
	if s := asJSON(t, e); !strings.Contains(s, "MaxRunSteps") {
		t.Fatalf("the error does not name the limit: %s", s)
	}
	// A run within the bounds still runs.
	if r := c.ok("workflow_run", `{"workflowId":"leaf"}`); r["status"] != "succeeded" {
		t.Fatalf("workflow_run leaf: %v", r)
	}
}
