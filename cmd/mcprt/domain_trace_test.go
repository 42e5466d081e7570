package main

// The trace sink and the trace_* tools through the binary: capture under
// concurrency, arguments only when configured (redacted and bounded),
// analysis, the delegation tree, sessions, errors, `mcprt trace show`,
// the tools' annotations, and a store that is created only when used.

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/wiretest"
)

func TestDomainTraceCapturesConcurrentCalls(t *testing.T) {
	t.Parallel()
	c, dir := newDomainClient(t, "", testMode, "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=200")
	const n = 120
	const marker = "ARG-MARKER-5521"
	ids := make([]string, 0, n)
	for i := range n {
		id := c.newID()
		args := `{"message":"` + marker + `"}`
		c.p.Send(toolsCallLine(id, "echo", args, fmt.Sprintf(`{"correlationId":"conc/w%d"}`, i%4)))
		ids = append(ids, id)
	}
	for _, id := range ids {
		c.success(id)
	}
	r := c.ok("trace_get", `{"traceId":"conc"}`)
	evs := r["events"].([]any)
	if len(evs) != n || r["status"] != "success" || r["truncated"] != false {
		t.Fatalf("trace_get conc: %d events, status %v; want %d successes", len(evs), r["status"], n)
	}
	seen := map[string]bool{}
	for i, e := range evs {
		ev := e.(map[string]any)
		if domNum(ev["sequence"]) != i+1 || ev["tool"] != "echo" || ev["type"] != "tool.invoke" || ev["parentId"] != "conc" {
			t.Fatalf("event %d: %v", i, ev)
		}
		seen[ev["eventId"].(string)] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct run ids, want %d", len(seen), n)
	}
	if s := asJSON(t, r); strings.Contains(s, marker) || strings.Contains(s, `"arguments"`) || strings.Contains(s, `"result"`) {
		t.Fatalf("arguments or results were recorded without trace.captureArguments: %s", clip(s))
	}
	tree := c.ok("trace_tree", `{"traceId":"conc"}`)
	if nodes := tree["nodes"].([]any); len(nodes) != 5 { // conc and its four delegates
		t.Fatalf("trace_tree has %d nodes, want 5: %v", len(nodes), tree["text"])
	}
	finish(t, c.p)
	if out := showTrace(t, dir, "conc"); strings.Count(out, "echo ") != n || !strings.Contains(out, "conc/w3") {
		t.Fatalf("mcprt trace show conc:\n%s", out)
	}
}

// showTrace runs `mcprt trace show id` against the store in dir.
func showTrace(t *testing.T, dir, id string) string {
	t.Helper()
	cmd := exec.Command(wiretest.Build(t), "trace", "show", id)
	cmd.Env = wiretest.CleanEnv("MCPRT_STORE_DIR=" + dir)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mcprt trace show %s: %v\n%s", id, err, out)
	}
	return string(out)
}

func TestDomainTraceAnalyzeTreeAndSession(t *testing.T) {
	t.Parallel()
	c, dir := newDomainClient(t, "", testMode)
	s := c.okCID("session_create", `{"initiator":"lead","task":"t"}`, "job")
	sid := s["sessionId"].(string)
	c.okCID("memory_store", `{"key":"plan","value":"step one"}`, "job/plan")
	c.okCID("guard_check", `{"policyId":"default","changedPaths":["a.go"],"sessionId":"`+sid+`"}`, "job/plan/check")
	c.toolError(c.sendCID("fail", `{"message":"boom"}`, "job/plan/check"), "INTERNAL")
	c.toolError(c.sendCID("memory_retrieve", `{"key":"k","namespace":"bad:ns"}`, "job"), "INVALID_ARGUMENT")
	c.okCID("noop", `{}`, "job")

	a := c.ok("trace_analyze", `{"traceId":"job"}`)
	m := a["metrics"].(map[string]any)
	if domNum(m["stepCount"]) != 6 || domNum(m["errorCount"]) != 2 || asJSON(t, m["errorsByCode"]) != `{"INTERNAL":1,"INVALID_ARGUMENT":1}` {
		t.Fatalf("trace_analyze metrics: %v", m)
	}
	if s := asJSON(t, a); !strings.Contains(s, `"type":"error"`) || !strings.Contains(s, "error:INVALID_ARGUMENT") ||
		!strings.Contains(s, "slowestStep") || a["summary"] == "" {
		t.Fatalf("trace_analyze: %s", clip(s))
	}
	tree := c.ok("trace_tree", `{"traceId":"job"}`)
	var paths []string
	for _, n := range tree["nodes"].([]any) {
		node := n.(map[string]any)
		paths = append(paths, fmt.Sprintf("%s@%d", node["id"], domNum(node["depth"])))
	}
	if want := []string{"job@0", "job/plan@1", "job/plan/check@2"}; !slices.Equal(paths, want) {
		t.Fatalf("trace_tree nodes %v, want %v\n%s", paths, want, tree["text"])
	}
	bs := c.ok("trace_by_session", `{"sessionId":"`+sid+`"}`)
	var tools []string
	for _, e := range bs["events"].([]any) {
		tools = append(tools, e.(map[string]any)["tool"].(string))
	}
	if !slices.Equal(tools, []string{"session_create", "guard_check"}) || asJSON(t, bs["traceIds"]) != `["job"]` {
		t.Fatalf("trace_by_session: %v", bs)
	}
	if r := c.ok("trace_by_session", `{"sessionId":"never-used"}`); len(r["events"].([]any)) != 0 {
		t.Fatalf("trace_by_session of an unknown session: %v", r)
	}
	l := c.ok("trace_list", `{"status":"failure"}`)
	if tr := l["traces"].([]any); len(tr) != 1 || tr[0].(map[string]any)["traceId"] != "job" {
		t.Fatalf("trace_list failure: %v", l)
	}
	if l = c.ok("trace_list", `{"tool":"guard_check","limit":5}`); domNum(l["total"]) != 1 {
		t.Fatalf("trace_list tool=guard_check: %v", l)
	}
	e := c.failsQuick("trace_get", `{"traceId":"no-such-trace"}`, "TRACE_NOT_FOUND")
	if !strings.Contains(e.Message, "trace_list") {
		t.Errorf("TRACE_NOT_FOUND does not say where ids come from: %q", e.Message)
	}
	c.failsQuick("trace_analyze", `{"traceId":"no-such-trace"}`, "TRACE_NOT_FOUND")
	c.failsQuick("trace_tree", `{"traceId":"no-such-trace"}`, "TRACE_NOT_FOUND")
	c.failsQuick("trace_list", `{"status":"running"}`, "INVALID_ARGUMENT")
	c.failsQuick("trace_list", `{"limit":1000}`, "INVALID_ARGUMENT")
	c.failsQuick("trace_get", `{"traceId":""}`, "INVALID_ARGUMENT")
	c.failsQuick("trace_by_session", `{"sessionId":"`+strings.Repeat("s", 129)+`"}`, "INVALID_ARGUMENT")
	finish(t, c.p)
	out := showTrace(t, dir, "job")
	for _, want := range []string{"trace job", "job/plan/check", "FAILED INTERNAL", "guard_check", "ms"} {
		if !strings.Contains(out, want) {
			t.Fatalf("mcprt trace show job lacks %q:\n%s", want, out)
		}
	}
}

func TestDomainTraceCaptureArguments(t *testing.T) {
	t.Parallel()
	c, _ := newDomainClient(t, "", "MCPRT_TRACE_CAPTURE_ARGUMENTS=true", "MCPRT_TRACE_MAX_CAPTURED_BYTES=256")
	c.okCID("memory_store", `{"key":"creds","value":{"password":"hunter2","note":"CAPTURED-NOTE"}}`, "cap")
	c.okCID("memory_store", `{"key":"long","value":"`+strings.Repeat("z", 1000)+`"}`, "cap")
	r := c.ok("trace_get", `{"traceId":"cap"}`)
	evs := r["events"].([]any)
	first, second := asJSON(t, evs[0]), asJSON(t, evs[1])
	if !strings.Contains(first, "CAPTURED-NOTE") || strings.Contains(first, "hunter2") || !strings.Contains(first, "[REDACTED]") ||
		!strings.Contains(first, `"result":{`) {
		t.Fatalf("captured arguments are not redacted or the result is missing: %s", first)
	}
	if !strings.Contains(second, `"truncated":true`) || strings.Count(second, "z") > 256 {
		t.Fatalf("captured arguments are not bounded by trace.maxCapturedBytes: %s", clip(second))
	}
	finish(t, c.p)
}

func TestDomainToolAnnotationsAndLazyStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, _ := newDomainClient(t, dir+"/store", "MCPRT_TRACE_ENABLED=false")
	for _, name := range append(slices.Clone(domainReadOnlyTools), domainWriteTools...) {
		tl := c.listedTool(name)
		if tl == nil {
			t.Fatalf("%s is not listed", name)
		}
		// The annotations state what differs from MCP's defaults (not
		// read-only, destructive, not idempotent, open world); the title
		// is the tool's own.
		a, _ := tl["annotations"].(map[string]any)
		ro := slices.Contains(domainReadOnlyTools, name)
		if (a["readOnlyHint"] == true) != ro || a["openWorldHint"] != false || tl["title"] == nil || tl["title"] == "" {
			t.Errorf("%s: title %v, annotations %v: want readOnlyHint %v, openWorldHint false and a title", name, tl["title"], a, ro)
		}
		for k, v := range a {
			if v == false && (k == "readOnlyHint" || k == "idempotentHint") || v == true && (k == "destructiveHint" || k == "openWorldHint") {
				t.Errorf("%s annotations %v: %s restates MCP's default", name, a, k)
			}
		}
		if _, has := a["destructiveHint"]; has && ro {
			t.Errorf("%s annotations %v: a read-only tool states no destructiveHint", name, a)
		}
		// The result schema checks results; it is not listed (it costs a
		// model's context and does not help it call the tool).
		if tl["outputSchema"] != nil {
			t.Errorf("%s lists its outputSchema", name)
		}
	}
	c.ok("server_ping", `{}`)
	if got := filesUnder(t, dir); len(got) != 0 {
		t.Fatalf("a server that used no domain tool (tracing off) created %v", got)
	}
	c.ok("memory_stats", `{}`)
	if got := filesUnder(t, dir); !slices.Contains(got, "store/mcprt.db") {
		t.Fatalf("the first domain call did not create the store: %v", got)
	}
	finish(t, c.p)

	// Tracing on (the default), no tools/call: still no files.
	dir2 := t.TempDir()
	c2, _ := newDomainClient(t, dir2+"/store")
	c2.listNames()
	finish(t, c2.p)
	if got := filesUnder(t, dir2); len(got) != 0 {
		t.Fatalf("a server that got no tools/call created %v", got)
	}
}
