package main

// The workflow_* tools through the binary: the bundled workflows in mode
// FULL (list, describe, run, traced with nested steps), workflows from a
// workflows directory with failing steps, a cancelled run, the
// workflows:// resources, the run_workflow prompt and completion, and the
// error codes.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rpc sends a request with params (JSON text) and returns its id.
func (c *toolClient) rpc(method, params string) string {
	id := c.newID()
	c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`)
	return id
}

func TestDomainWorkflowBundled(t *testing.T) {
	t.Parallel()
	c, _ := newDomainClient(t, "")
	l := c.ok("workflow_list", `{}`)
	var ids []string
	for _, w := range l["workflows"].([]any) {
		m := w.(map[string]any)
		ids = append(ids, m["id"].(string))
		if m["runnable"] != true || m["source"] != "bundled" || domNum(m["stepCount"]) != 2 {
			t.Errorf("listed %v", m)
		}
	}
	if !slices.Equal(ids, []string{"check-change", "remember-and-recall"}) || domNum(l["total"]) != 2 {
		t.Fatalf("workflow_list: %v", l)
	}
	if l := c.ok("workflow_list", `{"status":"draft"}`); len(l["workflows"].([]any)) != 0 {
		t.Fatalf("workflow_list draft: %v", l)
	}
	d := c.ok("workflow_describe", `{"workflowId":"check-change"}`)
	steps := d["steps"].([]any)
	if len(steps) != 2 || steps[0].(map[string]any)["target"] != "guard_check" || d["inputSchema"] == nil {
		t.Fatalf("workflow_describe: %v", d)
	}

	r := c.okCID("workflow_run", `{"workflowId":"remember-and-recall","input":{"key":"wf-key","note":{"text":"hello"}}}`, "wfA")
	out, _ := r["output"].(map[string]any)
	if r["success"] != true || r["status"] != "succeeded" || asJSON(t, r["stepsCompleted"]) != `["save","recall"]` ||
		domNum(out["found"]) != 1 || out["stored"] != "stored workflows:wf-key" || r["correlationId"] != "wfA" {
		t.Fatalf("remember-and-recall: %v", r)
	}
	if v := c.ok("memory_retrieve", `{"namespace":"workflows","key":"wf-key"}`); asJSON(t, v["value"]) != `{"text":"hello"}` {
		t.Fatalf("the note was not stored as JSON: %v", v)
	}
	r = c.ok("workflow_run", `{"workflowId":"check-change","input":{"change":"c1","changedPaths":["main.go",".env"]}}`)
	if out := r["output"].(map[string]any); out["passed"] != false || out["recordedAs"] != "stored verdicts:c1" {
		t.Fatalf("check-change: %v", r)
	}
	for _, s := range r["steps"].([]any) {
		if st := s.(map[string]any); st["status"] != "succeeded" || domNum(st["attempts"]) != 1 || st["durationMs"] == nil {
			t.Fatalf("check-change step %v", st)
		}
	}

	// The run and its steps in the trace, nested, with durations.
	tree := c.ok("trace_tree", `{"traceId":"wfA"}`)
	var nodes []string
	for _, n := range tree["nodes"].([]any) {
		nodes = append(nodes, n.(map[string]any)["id"].(string))
	}
	if !slices.Equal(nodes, []string{"wfA", "wfA/save", "wfA/recall"}) && !slices.Equal(nodes, []string{"wfA", "wfA/recall", "wfA/save"}) {
		t.Fatalf("trace_tree nodes %v\n%s", nodes, tree["text"])
	}
	g := c.ok("trace_get", `{"traceId":"wfA"}`)
	var tools []string
	for _, e := range g["events"].([]any) {
		ev := e.(map[string]any)
		tools = append(tools, ev["tool"].(string))
		if _, has := ev["durationMs"]; !has {
			t.Errorf("event without a duration: %v", ev)
		}
	}
	slices.Sort(tools)
	if !slices.Equal(tools, []string{"memory_search", "memory_store", "workflow_run"}) {
		t.Fatalf("trace_get wfA tools %v", tools)
	}

	// Errors.
	c.failsQuick("workflow_run", `{"workflowId":"no-such-flow"}`, "WORKFLOW_NOT_FOUND")
	c.failsQuick("workflow_describe", `{"workflowId":"no-such-flow"}`, "WORKFLOW_NOT_FOUND")
	e := c.failsQuick("workflow_run", `{"workflowId":"check-change","input":{"change":"c2"}}`, "INVALID_ARGUMENT")
	if !strings.Contains(e.Message, "changedPaths") {
		t.Fatalf("invalid input: %v", e.Message)
	}
	c.failsQuick("workflow_run", `{"input":{}}`, "INVALID_ARGUMENT")
	c.failsQuick("workflow_list", `{"status":"weird"}`, "INVALID_ARGUMENT")
	finish(t, c.p)
}

func TestDomainWorkflowResourcesAndPrompt(t *testing.T) {
	t.Parallel()
	c, _ := newDomainClient(t, "")
	res := c.result(c.rpc("resources/read", `{"uri":"workflows://"}`))
	text := res["contents"].([]any)[0].(map[string]any)
	if text["mimeType"] != "application/json" || !strings.Contains(text["text"].(string), `"remember-and-recall"`) ||
		!strings.Contains(text["text"].(string), `"total":2`) {
		t.Fatalf("workflows://: %v", res)
	}
	res = c.result(c.rpc("resources/read", `{"uri":"workflows://id/remember-and-recall"}`))
	if s := res["contents"].([]any)[0].(map[string]any)["text"].(string); !strings.Contains(s, `"memory_search"`) {
		t.Fatalf("workflows://id/remember-and-recall: %s", s)
	}
	c.protoError(c.rpc("resources/read", `{"uri":"workflows://id/nope"}`), -32002)
	tl := c.result(c.rpc("resources/templates/list", `{}`))
	if !strings.Contains(asJSON(t, tl), `workflows://id/{id}`) {
		t.Fatalf("resources/templates/list: %v", tl)
	}

	p := c.result(c.rpc("prompts/get", `{"name":"run_workflow","arguments":{"workflowId":"check-change","input":"{\"change\":\"x\"}"}}`))
	if s := asJSON(t, p); !strings.Contains(s, `workflow_run`) || !strings.Contains(s, `\"check-change\"`) || !strings.Contains(s, `{\"change\":\"x\"}`) {
		t.Fatalf("prompts/get run_workflow: %s", s)
	}
	c.protoError(c.rpc("prompts/get", `{"name":"run_workflow","arguments":{"workflowId":"x","input":"[1"}}`), -32602)
	for _, ref := range []string{`{"type":"ref/prompt","name":"run_workflow"},"argument":{"name":"workflowId","value":"REM"}`,
		`{"type":"ref/resource","uri":"workflows://id/{id}"},"argument":{"name":"id","value":"rem"}`} {
		comp := c.result(c.rpc("completion/complete", `{"ref":`+ref+`}`))
		if v := asJSON(t, comp["completion"].(map[string]any)["values"]); v != `["remember-and-recall"]` {
			t.Fatalf("completion %s: %s", ref, v)
		}
	}
	finish(t, c.p)
}

// writeWorkflow writes a definition into dir.
func writeWorkflow(t *testing.T, dir, name, doc string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestDomainWorkflowFromDirWithFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeWorkflow(t, dir, "stops.json", `{"id":"stops","name":"Stops","steps":[
		{"id":"hello","tool":"echo","input":{"message":"hi {{input.who}}"}},
		{"id":"boom","tool":"fail","input":{"message":"broken for {{steps.hello.output.message}}"},"retries":1,"backoffMs":0},
		{"id":"never","tool":"echo","input":{"message":"unreached"}}]}`)
	writeWorkflow(t, dir, "goes-on.json", `{"id":"goes-on","name":"Goes on","status":"draft","steps":[
		{"id":"boom","tool":"fail","input":{"message":"x"},"onFailure":"continue"},
		{"id":"after","tool":"echo","input":{"message":"still here"}}]}`)
	c, _ := newDomainClient(t, "", testMode, "MCPRT_WORKFLOW_DIR="+dir)
	if l := c.ok("workflow_list", `{"limit":1}`); domNum(l["total"]) != 4 || l["nextCursor"] != "check-change" {
		t.Fatalf("workflow_list: %v", l)
	}
	raw := c.rawToolError("workflow_run", `{"workflowId":"stops","input":{"who":"ada"}}`)
	det, _ := raw["details"].(map[string]any)
	if raw["code"] != "WORKFLOW_STEP_FAILED" || det["step"] != "boom" || det["stepCode"] != "INTERNAL" || det["status"] != "failed" ||
		asJSON(t, det["stepsCompleted"]) != `["hello"]` || !strings.Contains(raw["message"].(string), "broken for hi ada") {
		t.Fatalf("stops: %v", raw)
	}
	r := c.ok("workflow_run", `{"workflowId":"goes-on"}`)
	steps := r["steps"].([]any)
	if r["success"] != false || r["status"] != "partial" || steps[0].(map[string]any)["status"] != "failed" ||
		asJSON(t, r["output"]) != `{"message":"still here"}` {
		t.Fatalf("goes-on: %v", r)
	}
	finish(t, c.p)

	// A definition that does not load is a configuration error at start.
	writeWorkflow(t, dir, "broken.json", `{"id":"broken","name":"B","steps":[{"id":"a"}]}`)
	p := start(t, "MCPRT_STORE_DIR="+t.TempDir(), "MCPRT_WORKFLOW_DIR="+dir)
	p.CloseStdin()
	if code := p.Wait(t); code == 0 || !strings.Contains(p.Stderr(), "workflow.dir") || !strings.Contains(p.Stderr(), "broken.json") {
		t.Fatalf("exit code %d with a broken workflow; stderr:\n%s", code, p.Stderr())
	}
}

func TestDomainWorkflowCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeWorkflow(t, dir, "slow.json", `{"id":"slow","name":"Slow","steps":[
		{"id":"nap","tool":"sleep","input":{"ms":20000}},{"id":"after","tool":"echo","input":{"message":"x"}}]}`)
	c, _ := newDomainClient(t, "", testMode, "MCPRT_WORKFLOW_DIR="+dir)
	c.p.Send(toolsCallLine(`"wf-cancel"`, "workflow_run", `{"workflowId":"slow"}`, `{"correlationId":"wfc"}`))
	c.waitHealth(1) // in flight
	c.cancel(`"wf-cancel"`)
	c.neverAnswered(`"wf-cancel"`)
	rec := c.record("for the cancelled workflow", func(m map[string]any) bool { return m["correlationId"] == "wfc" })
	if rec["outcome"] != "aborted" || rec["tool"] != "workflow_run" {
		t.Fatalf("record %v, want outcome aborted", rec)
	}
	g := c.ok("trace_get", `{"traceId":"wfc"}`)
	found := false
	for _, e := range g["events"].([]any) {
		ev := e.(map[string]any)
		if ev["tool"] == "sleep" {
			found = ev["status"] == "failure" && ev["errorCode"] == "WORKFLOW_CANCELLED"
		}
		if ev["tool"] == "echo" {
			t.Fatalf("the step after the cancelled one ran: %v", ev)
		}
	}
	if !found {
		t.Fatalf("the cancelled step is not traced as WORKFLOW_CANCELLED: %v", g)
	}
	c.ok("noop", `{}`)
	c.close()
}
