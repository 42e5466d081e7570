package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
)

// A task's input: RequestInput in a task waits for tasks/update; before
// StartTask it is the ordinary input_required round.

// taskAskTool becomes a task (unless early) and asks for the keys at once; it
// returns the answers' actions and names.
func taskAskTool(name string, early bool, keys ...string) Tool {
	return Tool{Name: name, TaskSupport: TaskOptional, Handler: func(ctx context.Context, req *CallToolRequest) (any, error) {
		if !early {
			if _, err := StartTask(ctx); err != nil {
				return nil, err
			}
		}
		reqs := map[string]InputRequest{}
		for _, k := range keys {
			reqs[k] = ElicitInput(ElicitParams{Message: "give " + k, RequestedSchema: map[string]any{"type": "object"}})
		}
		got, err := RequestInput(ctx, req.Session, reqs)
		if err != nil {
			return nil, err
		}
		if early {
			if _, err := StartTask(ctx); err != nil {
				return nil, err
			}
		}
		var out []string
		for _, k := range keys {
			r, err := got.Elicit(k)
			if err != nil {
				return nil, err
			}
			out = append(out, fmt.Sprintf("%s=%s:%v", k, r.Action, r.Content["name"]))
		}
		return strings.Join(out, " "), nil
	}}
}

func TestTaskInputThroughUpdate(t *testing.T) {
	c := newTaskClient(t, transportMemory, Options{}, taskAskTool("ask", false, "a", "b"))
	id := c.start("ask", `{}`)
	waitStatus(t, c.srv, id, TaskInputRequired)
	g := c.get(id)
	reqs, _ := g["inputRequests"].(map[string]any)
	if len(reqs) != 2 || reqs["a"].(map[string]any)["method"] != MethodElicitationCreate || g["requestState"] != nil {
		t.Fatalf("an input_required task: %v", g)
	}
	// One answer (and one for a key it does not wait for): still
	// input_required, with only b pending.
	ack := c.ok(c.rpc(MethodTasksUpdate, `"taskId":"`+id+`","inputResponses":{"a":{"action":"accept","content":{"name":"A"}},"zz":{}}`, tkMeta))
	if ack["resultType"] != ResultComplete || ack["status"] != nil || ack["inputRequests"] != nil {
		t.Fatalf("update ack %v", ack)
	}
	g = c.get(id)
	reqs, _ = g["inputRequests"].(map[string]any)
	if g["status"] != TaskInputRequired || len(reqs) != 1 || reqs["b"] == nil {
		t.Fatalf("after a partial update: %v", g)
	}
	c.ok(c.rpc(MethodTasksUpdate, `"taskId":"`+id+`","inputResponses":{"b":{"action":"decline"}}`, tkMeta))
	rec := c.waitRecord(OutcomeSuccess)
	if rec["taskId"] != id {
		t.Fatalf("record %v", rec)
	}
	g = c.get(id)
	if got := resultText(t, g); g["status"] != TaskCompleted || got != "a=accept:A b=decline:<nil>" {
		t.Fatalf("the completed task: %v", g)
	}
}

func TestTaskInputCancelled(t *testing.T) {
	c := newTaskClient(t, transportMemory, Options{}, taskAskTool("ask", false, "a"))
	id := c.start("ask", `{}`)
	waitStatus(t, c.srv, id, TaskInputRequired)
	c.ok(c.rpc(MethodTasksCancel, `"taskId":"`+id+`"`, tkMeta))
	c.waitRecord(OutcomeAborted)
	if g := c.get(id); g["status"] != TaskCancelled || g["inputRequests"] != nil {
		t.Fatalf("a task cancelled while waiting for input: %v", g)
	}
	// A late answer changes nothing.
	c.ok(c.rpc(MethodTasksUpdate, `"taskId":"`+id+`","inputResponses":{"a":{"action":"accept"}}`, tkMeta))
	if g := c.get(id); g["status"] != TaskCancelled {
		t.Fatalf("a cancelled task after an update: %v", g)
	}
}

func TestTaskInputMissingCapability(t *testing.T) {
	c := newTaskClient(t, transportMemory, Options{}, taskAskTool("ask", false, "a"))
	noElicit := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	res := c.ok(c.rpc(MethodToolsCall, `"name":"ask"`, noElicit))
	id, _ := res["taskId"].(string)
	c.waitRecord(OutcomeProtocolError)
	g := c.get(id)
	e, _ := g["error"].(map[string]any)
	if g["status"] != TaskFailed || e["code"] != float64(CodeMissingClientCapability) {
		t.Fatalf("a task asking for a capability the request lacks: %v", g)
	}
}

// Input gathered before StartTask (input_required rounds), then a task:
// the round that creates the task carries no requestState.
func TestTaskAfterInputRounds(t *testing.T) {
	c := newTaskClient(t, transportMemory, Options{}, taskAskTool("ask", true, "who"))
	first := c.ok(c.rpc(MethodToolsCall, `"name":"ask"`, tkMeta))
	state, _ := first["requestState"].(string)
	if first["resultType"] != ResultInputRequired || first["taskId"] != nil || state == "" {
		t.Fatalf("round 1: %v", first)
	}
	second := c.ok(c.rpc(MethodToolsCall, `"name":"ask","inputResponses":{"who":{"action":"accept","content":{"name":"Alice"}}},`+
		`"requestState":"`+state+`"`, tkMeta))
	id, _ := second["taskId"].(string)
	if second["resultType"] != ResultTask || id == "" || second["requestState"] != nil || second["inputRequests"] != nil {
		t.Fatalf("round 2: %v", second)
	}
	c.waitRecord(OutcomeSuccess)
	if g := c.get(id); g["status"] != TaskCompleted || resultText(t, g) != "who=accept:Alice" {
		t.Fatalf("the task: %v", g)
	}
}

func TestTaskStoreAwaitEndsWithContext(t *testing.T) {
	st := newTaskStore(TaskOptions{}, core.SystemClock{})
	ctx, cancel := context.WithCancelCause(context.Background())
	tk, err := st.create(cancel)
	if err != nil {
		t.Fatal(err)
	}
	defer tk.timer.Stop()
	done := make(chan error, 1)
	go func() {
		_, err := st.await(ctx, tk, map[string]json.RawMessage{"k": json.RawMessage(`{}`)})
		done <- err
	}()
	waitStatusStore(t, st, tk, TaskInputRequired)
	cancel(ErrTaskCancelled)
	if err := recv(t, done, "await's end"); !errors.Is(err, ErrTaskCancelled) {
		t.Fatalf("await ended with %v", err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if tk.status != TaskWorking || len(tk.pending) != 0 {
		t.Fatalf("after await ended: status %s, pending %v", tk.status, tk.pending)
	}
}
