package main

// Black-box tests of agent_list, agent_get and agent_run through the real
// binary: profiles from a temporary agents directory, the TEST fixture
// agents in process, the agents:// resources and the list_agents and
// run_agent prompts; then agent_run delegated to a second mcprt process
// that plays the worker through the aacp_* tools (completed, failed,
// the depth limit on a further delegation), and a worker that never
// answers (TIMEOUT).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// agentProfiles writes the test profiles into a new directory.
func agentProfiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"reviewer.json": `{"agentId":"reviewer","displayName":"Reviewer","version":"2.1.0","description":"Reviews Go code","role":"quality",
			"expertise":["go"],"capabilities":["review"],"team":"quality","tags":["ci"],
			"workflow":[{"stepId":"read","name":"Read the diff","type":"prompt"}],
			"orchestration":{"maxDelegationDepth":2,"canReadWorkspaces":["src"]}}`,
		"off.json":     `{"agentId":"off","description":"Retired","team":"quality","enabled":false}`,
		"shallow.json": `{"agentId":"shallow","description":"Never delegated to","orchestration":{"maxDelegationDepth":0}}`,
		"builder.json": `{"agentId":"builder","description":"Builds over messaging","team":"build","capabilities":["build"]}`,
		"notes.txt":    "not a profile",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// rpc sends a request other than tools/call to a and returns its result.
func (a *aproc) rpc(t *testing.T, method, params string) map[string]any {
	t.Helper()
	a.next++
	id := `"rpc-` + strconv.Itoa(a.next) + `"`
	a.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":` + jsonString(method) + `,"params":` + params + `}`)
	return a.p.ExpectResult(t, id)
}

func TestAgentProfilesThroughBinary(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	c := startAgent(t, filepath.Join(data, "aacp"), "solo", "AdHoc", "MCPRT_SERVER_MODE=TEST", "MCPRT_AGENT_DIR="+agentProfiles(t))

	for _, tc := range []struct{ args, want string }{
		{`{}`, `["builder","counter","echo","off","reviewer","shallow"]`},
		{`{"team":"quality"}`, `["off","reviewer"]`},
		{`{"enabled":false}`, `["off"]`},
		{`{"capability":"review"}`, `["reviewer"]`},
		{`{"source":"in-process"}`, `["counter","echo"]`},
		{`{"team":"nobody"}`, `[]`},
	} {
		r := c.ok(t, "agent_list", tc.args)
		if got, _ := json.Marshal(r["agentIds"]); string(got) != tc.want || r["truncated"] != false || int(anum(r, "total")) != strings.Count(tc.want, `"`)/2 {
			t.Errorf("agent_list %s = %v, want agentIds %s", tc.args, r, tc.want)
		}
	}
	if r := c.ok(t, "agent_list", `{"limit":1}`); len(r["agents"].([]any)) != 1 || anum(r, "total") != 6 {
		t.Errorf("agent_list limit 1 = %v", r)
	}
	c.fails(t, "agent_list", `{"filter":"x"}`, "INVALID_ARGUMENT")
	c.fails(t, "agent_list", `{"source":"disk"}`, "INVALID_ARGUMENT")

	g := c.ok(t, "agent_get", `{"agentId":"reviewer"}`)
	if g["version"] != "2.1.0" || astr(g, "workflow") != "" || anum(g, "orchestration", "maxDelegationDepth") != 2 ||
		g["enabled"] != true || asJSON(t, g["sources"]) != `["profile"]` {
		t.Errorf("agent_get reviewer = %v", g)
	}
	if g := c.ok(t, "agent_get", `{"agentId":"echo"}`); asJSON(t, g["sources"]) != `["in-process"]` || anum(g, "orchestration", "maxDelegationDepth") != 3 {
		t.Errorf("agent_get echo = %v", g)
	}
	e := c.fails(t, "agent_get", `{"agentId":"ghost"}`, "AGENT_NOT_FOUND")
	if !strings.Contains(e.Message, "ghost") || !strings.Contains(e.Message, "reviewer") {
		t.Errorf("AGENT_NOT_FOUND message %q should name the agent and known ones", e.Message)
	}

	r := c.ok(t, "agent_run", `{"agentId":"echo","input":{"n":1},"task":"repeat","sessionId":"s-9"}`)
	if r["success"] != true || r["runner"] != "in-process" || r["sessionId"] != "s-9" ||
		asJSON(t, r["output"]) != `{"payload":{"delegation":{"depth":1},"input":{"n":1},"sessionId":"s-9","task":"repeat"},"type":"agent_run"}` {
		t.Errorf("agent_run echo = %v", r)
	}
	// Tracing is on by default: the run is a step nested in the call's trace.
	if got := c.rpc(t, "tools/call", `{"name":"agent_run","arguments":{"agentId":"echo"},"_meta":{"correlationId":"agent-trace"}}`); got["isError"] != false {
		t.Fatalf("agent_run under a correlation id: %v", got)
	}
	if got := asJSON(t, c.ok(t, "trace_get", `{"traceId":"agent-trace"}`)); !strings.Contains(got, `"agent-trace/echo"`) ||
		!strings.Contains(got, `"agent:echo"`) {
		t.Errorf("trace_get agent-trace has no nested agent step: %s", got)
	}
	c.fails(t, "agent_run", `{"agentId":"off"}`, "AGENT_PERMISSION_DENIED")
	e = c.fails(t, "agent_run", `{"agentId":"shallow","delegationDepth":1}`, "AGENT_DELEGATION_DEPTH_EXCEEDED")
	if e.Details["limit"] != 0.0 || e.Details["depth"] != 1.0 {
		t.Errorf("depth error details %v", e.Details)
	}
	c.fails(t, "agent_run", `{"agentId":"echo","delegationDepth":4}`, "AGENT_DELEGATION_DEPTH_EXCEEDED") // default limit 3
	c.fails(t, "agent_run", `{"agentId":"echo","delegationDepth":17}`, "INVALID_ARGUMENT")
	c.fails(t, "agent_run", `{"agentId":"ghost"}`, "AGENT_NOT_FOUND")
	c.fails(t, "agent_run", `{"agentId":"reviewer"}`, "NOT_IMPLEMENTED") // no workflow, no messaging, not in process
	c.fails(t, "agent_run", `{"input":{}}`, "INVALID_ARGUMENT")
	// The data dir holds the store (tracing is on by default), never the
	// messaging journal.
	entries, _ := os.ReadDir(filepath.Join(data, "aacp"))
	if slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() != "store" }) {
		t.Errorf("listing and in-process runs created the messaging journal: %v", entries)
	}

	// Resources, completion and prompts.
	avail := c.rpc(t, "resources/read", `{"uri":"agents://available"}`)
	text := astr(avail["contents"].([]any)[0], "text")
	if !strings.Contains(text, `"agentIds":["builder","counter","echo","off","reviewer","shallow"]`) {
		t.Errorf("agents://available = %s", text)
	}
	one := c.rpc(t, "resources/read", `{"uri":"agents://id/reviewer"}`)
	if m := one["contents"].([]any)[0].(map[string]any); m["mimeType"] != "application/json" || !strings.Contains(m["text"].(string), `"role":"quality"`) {
		t.Errorf("agents://id/reviewer = %v", one)
	}
	c.p.Send(`{"jsonrpc":"2.0","id":"nf","method":"resources/read","params":{"uri":"agents://id/ghost"}}`)
	c.p.ExpectError(t, `"nf"`, -32002)
	comp := c.rpc(t, "completion/complete", `{"ref":{"type":"ref/resource","uri":"agents://id/{agentId}"},"argument":{"name":"agentId","value":"sh"}}`)
	if asJSON(t, comp["completion"].(map[string]any)["values"]) != `["shallow"]` {
		t.Errorf("completion = %v", comp)
	}
	comp = c.rpc(t, "completion/complete", `{"ref":{"type":"ref/prompt","name":"run_agent"},"argument":{"name":"agentId","value":"E"}}`)
	if asJSON(t, comp["completion"].(map[string]any)["values"]) != `["echo"]` {
		t.Errorf("run_agent completion = %v", comp)
	}
	p := c.rpc(t, "prompts/get", `{"name":"run_agent","arguments":{"agentId":"reviewer","task":"check main.go"}}`)
	if s := asJSON(t, p["messages"]); !strings.Contains(s, "agent_run") || !strings.Contains(s, `check main.go`) {
		t.Errorf("run_agent prompt = %s", s)
	}
	p = c.rpc(t, "prompts/get", `{"name":"list_agents","arguments":{"team":"quality"}}`)
	if s := asJSON(t, p["messages"]); !strings.Contains(s, "agent_list") || !strings.Contains(s, "quality") {
		t.Errorf("list_agents prompt = %s", s)
	}
}

func TestAgentBadProfileStopsTheServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.json"), []byte(`{"agentId":"x","description":"d","extra":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := start(t, "MCPRT_AGENT_DIR="+dir)
	if code := p.Wait(t); code != 78 {
		t.Fatalf("exit code %d with a bad profile, want 78\n%s", code, p.Stderr())
	}
	if s := p.Stderr(); !strings.Contains(s, "agent.dir") || !strings.Contains(s, "x.json") || !strings.Contains(s, "extra") {
		t.Errorf("stderr does not name the key, file and field:\n%s", s)
	}
}

// TestAgentRunDelegated runs "builder" from one process; a second process
// hosts builder for messaging and answers through the aacp_* tools.
func TestAgentRunDelegated(t *testing.T) {
	t.Parallel()
	shared := filepath.Join(t.TempDir(), "shared")
	profiles := agentProfiles(t)
	worker := startAgent(t, shared, "builder", "Implementation", "MCPRT_AGENT_DIR="+profiles)
	worker.ok(t, "aacp_register_agent", `{"type":"Implementation","capabilities":["build"]}`)
	caller := startAgent(t, shared, "caller", "AdHoc", "MCPRT_AGENT_DIR="+profiles)

	g := caller.ok(t, "agent_get", `{"agentId":"builder"}`)
	if asJSON(t, g["sources"]) != `["profile","messaging"]` || astr(g, "messaging", "type") != "Implementation" || g["messaging"].(map[string]any)["online"] != true {
		t.Fatalf("agent_get builder from the caller = %v", g)
	}

	// answer waits for the task and answers it with a TASK_UPDATE of status.
	answer := func(status, extra string) map[string]any {
		t.Helper()
		task := worker.receiveOne(t, "TASK_ASSIGNMENT")
		worker.ok(t, "aacp_ack", `{"messageId":`+jsonString(astr(task, "messageId"))+`,"status":"processed"}`)
		taskID := astr(task, "payload", "taskId")
		worker.ok(t, "aacp_send", sendArgsTo(astr(task, "sender", "agentId"), "TASK_UPDATE",
			`{"taskId":`+jsonString(taskID)+`,"status":"`+status+`","progress":1`+extra+`}`, `"correlationId":`+jsonString(taskID)))
		return task
	}

	id := caller.send("agent_run", `{"agentId":"builder","input":{"target":"app"},"task":"build the app"}`)
	task := answer("completed", `,"output":{"artifact":"app.tar"}`)
	res, e := caller.await(t, id)
	if e != nil {
		t.Fatalf("agent_run builder: %s %s", e.Code, e.Message)
	}
	if res["runner"] != "messaging" || asJSON(t, res["output"]) != `{"artifact":"app.tar"}` || res["taskId"] != astr(task, "payload", "taskId") {
		t.Errorf("agent_run builder = %v", res)
	}
	if astr(task, "sender", "agentId") != "caller-runs" || astr(task, "payload", "taskDescription") != "build the app" ||
		anum(task, "payload", "context", "delegation", "depth") != 1 || astr(task, "payload", "context", "input", "target") != "app" {
		t.Errorf("the worker got %v", task)
	}

	// The worker, running a task at depth 1, may not hand it to an agent
	// whose limit is 0.
	worker.fails(t, "agent_run", `{"agentId":"shallow","delegationDepth":1}`, "AGENT_DELEGATION_DEPTH_EXCEEDED")

	id = caller.send("agent_run", `{"agentId":"builder"}`)
	answer("failed", `,"notes":"the linker ran out of memory"`)
	if _, e := caller.await(t, id); e == nil || e.Code != "AGENT_STAGE_FAILED" || !strings.Contains(e.Message, "linker ran out of memory") {
		t.Errorf("agent_run with a failed update: %+v, want AGENT_STAGE_FAILED with the worker's notes", e)
	}

	// A caller with a short deadline, and a worker that takes the task but
	// never answers.
	impatient := startAgent(t, shared, "impatient", "AdHoc", "MCPRT_AGENT_DIR="+profiles, "MCPRT_AGENT_RUN_TIMEOUT_MS=400")
	e = impatient.fails(t, "agent_run", `{"agentId":"builder"}`, "TIMEOUT")
	if !e.Retryable {
		t.Errorf("TIMEOUT is not retryable: %+v", e)
	}
	if late := worker.receiveOne(t, "TASK_ASSIGNMENT"); astr(late, "sender", "agentId") != "impatient-runs" {
		t.Errorf("the worker got %v, want the impatient caller's task", late)
	}

	list := caller.ok(t, "agent_list", `{"source":"messaging"}`)
	ids, _ := list["agentIds"].([]any)
	if !slices.Equal(ids, []any{"builder"}) {
		t.Errorf("agent_list source messaging from the caller = %v, want builder only (no delegating agent)", ids)
	}
}
