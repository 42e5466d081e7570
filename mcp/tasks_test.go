package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// The tasks extension: task-augmented tools/call, tasks/get, tasks/update,
// tasks/cancel.

// Stateless _meta: with the tasks extension (and elicitation), and without.
const (
	tkMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	tkMetaNoExt = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{}}`
)

// tkClient is a test client speaking the stateless revision.
type tkClient struct {
	*testClient
	n int
}

func newTaskClient(t *testing.T, tr transportKind, opts Options, tools ...Tool) *tkClient {
	t.Helper()
	c := newTestClient(t, tr, testConfig(), opts, func(s *Server) {
		for _, tl := range tools {
			if err := s.AddTool(tl); err != nil {
				t.Fatal(err)
			}
		}
	}, "")
	return &tkClient{testClient: c}
}

// rpc sends method with params (a JSON object's members, without braces)
// and meta, and returns the response.
func (c *tkClient) rpc(method, members, meta string) map[string]any {
	c.t.Helper()
	c.n++
	params := "{" + meta + "}"
	if members != "" {
		params = "{" + members + "," + meta + "}"
	}
	return c.request(strconv.Itoa(c.n), method, params)
}

// ok returns the result of a response that must have one.
func (c *tkClient) ok(m map[string]any) map[string]any {
	c.t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		c.t.Fatalf("want a result, got %v", m)
	}
	return res
}

// start calls a tool that must become a task, and returns its taskId.
func (c *tkClient) start(name, args string) string {
	c.t.Helper()
	res := c.ok(c.rpc(MethodToolsCall, `"name":`+quoteString(name)+`,"arguments":`+args, tkMeta))
	id, _ := res["taskId"].(string)
	if res["resultType"] != ResultTask || id == "" || res["status"] != TaskWorking {
		c.t.Fatalf("want a CreateTaskResult, got %v", res)
	}
	return id
}

func (c *tkClient) get(id string) map[string]any {
	c.t.Helper()
	return c.ok(c.rpc(MethodTasksGet, `"taskId":`+quoteString(id), tkMeta))
}

// waitStatus waits, woken by every change of the task, until its status
// is status.
func waitStatus(t *testing.T, s *Server, id, status string) {
	t.Helper()
	tk := s.tasks.lookup(id)
	if tk == nil {
		t.Fatalf("no task %s", id)
	}
	waitStatusStore(t, s.tasks, tk, status)
}

func waitStatusStore(t *testing.T, st *taskStore, tk *task, status string) {
	t.Helper()
	timeout := time.NewTimer(guard)
	defer timeout.Stop()
	for {
		st.mu.Lock()
		now, changed := tk.status, tk.changed
		st.mu.Unlock()
		if now == status {
			return
		}
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatalf("task %s: status %s, not %s within %v", tk.id, now, status, guard)
		}
	}
}

// blockingTool becomes a task and returns "done" once release is closed,
// or the cause of its context's end, which it sends on causes.
func blockingTool(release <-chan struct{}, causes chan<- error) Tool {
	return Tool{Name: "job", TaskSupport: TaskOptional, Handler: func(ctx context.Context, _ *CallToolRequest) (any, error) {
		if _, err := StartTask(ctx); err != nil {
			return nil, err
		}
		select {
		case <-release:
			return "done", nil
		case <-ctx.Done():
			causes <- context.Cause(ctx)
			return nil, context.Cause(ctx)
		}
	}}
}

func TestTaskLifecycle(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		release, causes := make(chan struct{}), make(chan error, 1)
		c := newTaskClient(t, tr, Options{}, blockingTool(release, causes))
		res := c.ok(c.rpc(MethodToolsCall, `"name":"job"`, tkMeta))
		id, _ := res["taskId"].(string)
		for _, k := range []string{"createdAt", "lastUpdatedAt"} {
			if s, _ := res[k].(string); !strings.HasSuffix(s, "Z") || len(s) != len("2006-01-02T15:04:05.000Z") {
				t.Fatalf("%s %v is not an ISO 8601 time", k, res[k])
			}
		}
		if res["resultType"] != ResultTask || id == "" || res["status"] != TaskWorking ||
			res["ttlMs"] != float64(DefaultTaskTTL.Milliseconds()) || res["pollIntervalMs"] != float64(1000) {
			t.Fatalf("CreateTaskResult %v", res)
		}
		for _, k := range []string{"result", "error", "inputRequests", "requestState", "task", "content"} {
			if _, has := res[k]; has {
				t.Fatalf("CreateTaskResult has %s: %v", k, res)
			}
		}
		// The request was answered; the task runs on.
		if g := c.get(id); g["status"] != TaskWorking || g["taskId"] != id || g["resultType"] != ResultComplete || g["result"] != nil {
			t.Fatalf("tasks/get while working: %v", g)
		}
		close(release)
		rec := c.waitRecord(OutcomeSuccess)
		if rec["taskId"] != id || rec["tool"] != "job" {
			t.Fatalf("the completion record does not name the task: %v", rec)
		}
		g := c.get(id)
		result, _ := g["result"].(map[string]any)
		if g["status"] != TaskCompleted || result == nil || resultText(t, map[string]any{"result": result}) != "done" {
			t.Fatalf("tasks/get once completed: %v", g)
		}
		// Without the extension the same tool is an ordinary call.
		plain := c.ok(c.rpc(MethodToolsCall, `"name":"job"`, tkMetaNoExt))
		if plain["taskId"] != nil || plain["resultType"] != ResultComplete || plain["content"] == nil {
			t.Fatalf("a call without the extension: %v", plain)
		}
	})
}

func TestTaskSessionRevision(t *testing.T) {
	release := make(chan struct{})
	close(release)
	c := newTestClient(t, transportMemory, testConfig(), Options{}, func(s *Server) {
		if err := s.AddTool(blockingTool(release, make(chan error, 1))); err != nil {
			t.Fatal(err)
		}
	}, Version20251125)
	for _, m := range []string{MethodTasksGet, MethodTasksUpdate, MethodTasksCancel} {
		if e := rpcError(t, c.request(`"x"`, m, `{"taskId":"a","inputResponses":{}}`)); e["code"] != float64(-32601) {
			t.Fatalf("%s in a session: %v, want -32601", m, e)
		}
	}
	if res := c.call("1", "job", `{}`); res["taskId"] != nil || resultText(t, map[string]any{"result": res}) != "done" {
		t.Fatalf("StartTask in a session must report false and the call go on: %v", res)
	}
}

func TestTaskCancel(t *testing.T) {
	causes := make(chan error, 1)
	c := newTaskClient(t, transportMemory, Options{}, blockingTool(make(chan struct{}), causes))
	id := c.start("job", `{}`)
	ack := c.ok(c.rpc(MethodTasksCancel, `"taskId":`+quoteString(id), tkMeta))
	if ack["resultType"] != ResultComplete || ack["taskId"] != nil || ack["status"] != nil {
		t.Fatalf("cancel ack %v", ack)
	}
	cause := recv(t, causes, "the handler's cause")
	if !errors.Is(cause, ErrTaskCancelled) || !errors.Is(cause, ErrCancelled) {
		t.Fatalf("cause %v, want ErrTaskCancelled (an ErrCancelled)", cause)
	}
	if rec := c.waitRecord(OutcomeAborted); rec["taskId"] != id {
		t.Fatalf("record %v", rec)
	}
	if g := c.get(id); g["status"] != TaskCancelled || g["result"] != nil || g["error"] != nil {
		t.Fatalf("tasks/get after cancel: %v", g)
	}
	// Cancelling a finished task is the same empty ack.
	if ack := c.ok(c.rpc(MethodTasksCancel, `"taskId":`+quoteString(id), tkMeta)); ack["resultType"] != ResultComplete {
		t.Fatalf("second cancel %v", ack)
	}
}

func TestTaskExpiry(t *testing.T) {
	clock := core.NewManualClock(time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC))
	causes := make(chan error, 1)
	c := newTaskClient(t, transportMemory, Options{Clock: clock, Tasks: TaskOptions{TTL: time.Hour, PollInterval: 250 * time.Millisecond}},
		blockingTool(make(chan struct{}), causes))
	id := c.start("job", `{}`)
	if g := c.get(id); g["ttlMs"] != float64(3600000) || g["pollIntervalMs"] != float64(250) {
		t.Fatalf("tasks/get %v", g)
	}
	// Past the tools' default deadline (30 s) the task still runs: its
	// bound is its TTL.
	clock.Advance(time.Hour - time.Millisecond)
	if g := c.get(id); g["status"] != TaskWorking {
		t.Fatalf("before the TTL: %v", g)
	}
	clock.Advance(time.Millisecond)
	if cause := recv(t, causes, "the handler's cause"); !errors.Is(cause, ErrTaskExpired) {
		t.Fatalf("cause %v, want ErrTaskExpired", cause)
	}
	c.waitRecord(OutcomeAborted)
	if e := rpcError(t, c.rpc(MethodTasksGet, `"taskId":`+quoteString(id), tkMeta)); e["code"] != float64(-32602) {
		t.Fatalf("an expired task: %v, want -32602", e)
	}
	if n := len(c.srv.tasks.tasks); n != 0 {
		t.Fatalf("%d tasks kept after expiry", n)
	}
}

func TestTaskOwnDeadline(t *testing.T) {
	clock := core.NewManualClock(time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC))
	causes := make(chan error, 1)
	tl := blockingTool(make(chan struct{}), causes)
	tl.Timeout = 10 * time.Second
	c := newTaskClient(t, transportMemory, Options{Clock: clock}, tl)
	id := c.start("job", `{}`)
	clock.Advance(10 * time.Second)
	if cause := recv(t, causes, "the handler's cause"); !errors.Is(cause, ErrTimeout) {
		t.Fatalf("cause %v, want ErrTimeout", cause)
	}
	c.waitRecord(OutcomeLateCompleted)
	g := c.get(id)
	res, _ := g["result"].(map[string]any)
	if g["status"] != TaskCompleted || res == nil || res["isError"] != true ||
		toolError(t, res)["code"] != string(core.CodeTimeout) {
		t.Fatalf("a task past its tool's deadline: %v", g)
	}
}

func TestTaskFailures(t *testing.T) {
	tools := []Tool{
		{Name: "boom", TaskSupport: TaskOptional, Handler: func(ctx context.Context, _ *CallToolRequest) (any, error) {
			if _, err := StartTask(ctx); err != nil {
				return nil, err
			}
			panic("boom")
		}},
		{Name: "toolerr", TaskSupport: TaskOptional, Handler: func(ctx context.Context, _ *CallToolRequest) (any, error) {
			if _, err := StartTask(ctx); err != nil {
				return nil, err
			}
			return nil, core.NewError(core.CodeNotFound, "no such thing")
		}},
		{Name: "must", TaskSupport: TaskRequired, Handler: func(context.Context, *CallToolRequest) (any, error) {
			t.Error("the handler of a TaskRequired tool ran without the extension")
			return nil, nil
		}},
	}
	c := newTaskClient(t, transportMemory, Options{}, tools...)
	// A panic is a failure below the tool: status failed, a JSON-RPC error.
	id := c.start("boom", `{}`)
	c.waitRecord(OutcomeProtocolError)
	g := c.get(id)
	e, _ := g["error"].(map[string]any)
	if g["status"] != TaskFailed || e == nil || e["code"] != float64(-32603) || g["result"] != nil {
		t.Fatalf("a task whose handler panicked: %v", g)
	}
	// A tool error is a completed task whose result has isError.
	id = c.start("toolerr", `{}`)
	c.waitRecord(OutcomeToolError)
	g = c.get(id)
	res, _ := g["result"].(map[string]any)
	if g["status"] != TaskCompleted || res["isError"] != true {
		t.Fatalf("a task whose tool failed: %v", g)
	}
	// A TaskRequired tool without the extension: -32021 naming it.
	e = rpcError(t, c.rpc(MethodToolsCall, `"name":"must"`, tkMetaNoExt))
	data, _ := json.Marshal(e["data"])
	if e["code"] != float64(CodeMissingClientCapability) ||
		!strings.Contains(string(data), `"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`) {
		t.Fatalf("TaskRequired without the extension: %v", e)
	}
}

func TestTaskBounds(t *testing.T) {
	c := newTaskClient(t, transportMemory, Options{Tasks: TaskOptions{MaxTasks: 2}},
		blockingTool(make(chan struct{}), make(chan error, 3)))
	c.start("job", `{}`)
	c.start("job", `{}`)
	res := c.ok(c.rpc(MethodToolsCall, `"name":"job"`, tkMeta))
	if res["taskId"] != nil || toolError(t, res)["code"] != string(core.CodeResourceExhausted) {
		t.Fatalf("a third task over MaxTasks 2: %v", res)
	}
}

func TestTaskDisabled(t *testing.T) {
	release := make(chan struct{})
	close(release)
	c := newTaskClient(t, transportMemory, Options{Tasks: TaskOptions{Disabled: true}}, blockingTool(release, make(chan error, 1)))
	d := c.ok(c.rpc(MethodServerDiscover, "", tkMeta))
	if caps, _ := d["capabilities"].(map[string]any); caps["extensions"] != nil {
		t.Fatalf("discover lists extensions with tasks disabled: %v", d)
	}
	if res := c.ok(c.rpc(MethodToolsCall, `"name":"job"`, tkMeta)); res["taskId"] != nil {
		t.Fatalf("a task with tasks disabled: %v", res)
	}
	if e := rpcError(t, c.rpc(MethodTasksGet, `"taskId":"a"`, tkMeta)); e["code"] != float64(-32601) {
		t.Fatalf("tasks/get with tasks disabled: %v", e)
	}
}

func TestTaskHostileParams(t *testing.T) {
	c := newTaskClient(t, transportMemory, Options{}, blockingTool(make(chan struct{}), make(chan error, 1)))
	d := c.ok(c.rpc(MethodServerDiscover, "", tkMeta))
	if caps, _ := d["capabilities"].(map[string]any); caps["extensions"] == nil || caps["tasks"] != nil {
		t.Fatalf("discover: %v", d)
	}
	id := c.start("job", `{}`)
	long := strings.Repeat("a", 10000)
	for _, tc := range []struct {
		method, members, meta string
		code                  float64
	}{
		{MethodTasksGet, `"taskId":"x"`, tkMetaNoExt, -32021},
		{MethodTasksCancel, `"taskId":"x"`, tkMetaNoExt, -32021},
		{MethodTasksUpdate, `"taskId":"x","inputResponses":{}`, tkMetaNoExt, -32021},
		{MethodTasksGet, `"taskId":"nope"`, tkMeta, -32602},
		{MethodTasksCancel, `"taskId":"nope"`, tkMeta, -32602},
		{MethodTasksGet, `"taskId":"` + long + `"`, tkMeta, -32602},
		{MethodTasksGet, `"taskId":42`, tkMeta, -32602},
		{MethodTasksGet, `"taskId":null`, tkMeta, -32602},
		{MethodTasksGet, `"other":1`, tkMeta, -32602},
		{MethodTasksUpdate, `"taskId":"` + id + `"`, tkMeta, -32602},
		{MethodTasksUpdate, `"taskId":"` + id + `","inputResponses":[]`, tkMeta, -32602},
		{MethodTasksUpdate, `"taskId":"` + id + `","inputResponses":{"a":1}`, tkMeta, -32602},
		{"tasks/result", `"taskId":"` + id + `"`, tkMeta, -32601},
		{"tasks/list", ``, tkMeta, -32601},
	} {
		e := rpcError(t, c.rpc(tc.method, tc.members, tc.meta))
		if e["code"] != tc.code {
			t.Fatalf("%s %s: %v, want %v", tc.method, clip(tc.members, 60), e, tc.code)
		}
		if msg, _ := e["message"].(string); len(msg) > 1000 {
			t.Fatalf("%s: the message echoes too much (%d bytes)", tc.method, len(msg))
		}
	}
	// Answers for keys the task does not wait for are acknowledged and
	// ignored.
	if ack := c.ok(c.rpc(MethodTasksUpdate, `"taskId":"`+id+`","inputResponses":{"zz":{"action":"accept"}}`, tkMeta)); ack["resultType"] != ResultComplete || ack["status"] != nil {
		t.Fatalf("update ack %v", ack)
	}
	if g := c.get(id); g["status"] != TaskWorking {
		t.Fatalf("after an update it did not wait for: %v", g)
	}
}
