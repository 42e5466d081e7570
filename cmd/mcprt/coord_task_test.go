package main

// The work queue through the binary: posting, claiming with labels and
// dependencies, the holder's transitions, handoff, history, notices,
// a killed holder's task reclaimed, a workflow step that posts a task,
// and two processes racing to claim one task.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestCoordTaskQueue(t *testing.T) {
	t.Parallel()
	ps, dir := coordAgents(t, nil, "alice", "bob", "carol")
	a, b, c := ps[0], ps[1], ps[2]

	t1 := a.ok(t, "task_post", `{"title":"API","description":"write the API","labels":["api"],"priority":4}`)
	id1 := str(t1["taskId"])
	if t1["status"] != "open" || t1["poster"] != "alice" {
		t.Fatalf("posted %v", t1)
	}
	id2 := str(a.ok(t, "task_post", `{"title":"client","description":"use the API","dependsOn":["`+id1+`"]}`)["taskId"])
	a.fails(t, "task_post", `{"title":"x","description":"y","dependsOn":["no-such-task"]}`, "TASK_NOT_FOUND")
	a.fails(t, "task_post", `{"title":"","description":"y"}`, "INVALID_ARGUMENT")
	a.fails(t, "task_post", `{"title":"x","description":"y","priority":9}`, "INVALID_ARGUMENT")

	// A task whose dependency is not done is not claimable.
	e := b.fails(t, "task_claim", `{"taskId":"`+id2+`"}`, "TASK_NOT_CLAIMABLE")
	if !strings.Contains(e.Message, id1) {
		t.Errorf("not-claimable message does not name the dependency: %s", e.Message)
	}
	if got := b.ok(t, "task_claim", `{"labels":["nope"]}`); got["claimed"] != false {
		t.Fatalf("claim with an unmatched label: %v", got)
	}
	got := b.ok(t, "task_claim", `{"labels":["api"]}`)
	if got["claimed"] != true || astr(got, "task", "taskId") != id1 || astr(got, "task", "assignee") != "bob" {
		t.Fatalf("bob's claim by label: %v", got)
	}
	c.fails(t, "task_claim", `{"taskId":"`+id1+`"}`, "TASK_NOT_CLAIMABLE")
	a.fails(t, "task_update", `{"taskId":"`+id1+`","status":"done"}`, "TASK_NOT_HOLDER")
	b.fails(t, "task_update", `{"taskId":"`+id1+`","status":"open"}`, "INVALID_ARGUMENT")
	b.ok(t, "task_update", `{"taskId":"`+id1+`","status":"in_progress","note":"started"}`)
	c.fails(t, "task_steal", `{"taskId":"`+id1+`","reason":"mine"}`, "TASK_HOLDER_LIVE")
	h := b.ok(t, "task_handoff", `{"taskId":"`+id1+`","toAgentId":"alice","note":"you finish it"}`)
	if h["assignee"] != "alice" || h["status"] != "claimed" {
		t.Fatalf("handoff: %v", h)
	}
	a.ok(t, "task_update", `{"taskId":"`+id1+`","status":"done","result":"API at /v1"}`)
	a.fails(t, "task_update", `{"taskId":"`+id1+`","status":"in_progress"}`, "TASK_NOT_HOLDER")
	g := b.ok(t, "task_get", `{"taskId":"`+id1+`"}`)
	var actions []string
	for _, ev := range list(t, g, "history") {
		actions = append(actions, str(ev["action"]))
	}
	if want := []string{"posted", "claimed", "updated", "handed_off", "updated"}; !slices.Equal(actions, want) {
		t.Fatalf("history %v, want %v", actions, want)
	}
	if astr(g, "task", "result") != "API at /v1" || astr(g, "task", "status") != "done" {
		t.Fatalf("task_get: %v", g)
	}
	// Now the dependent task is claimable.
	if got := c.ok(t, "task_claim", `{"taskId":"`+id2+`"}`); got["claimed"] != true {
		t.Fatalf("claim after the dependency is done: %v", got)
	}
	// The poster was told of the claim, the handoff and the end; alice's
	// inbox holds the notices.
	out, _, code := runOperator(t, []string{"MCPRT_AACP_DATA_DIR=" + dir}, "--json", "inbox", "alice")
	if code != 0 || !strings.Contains(out, "task claimed") || !strings.Contains(out, "task handed to you") {
		t.Errorf("alice's inbox (exit %d) lacks the task notices:\n%s", code, out)
	}

	// carol holds id2 and dies: her claim is released on the next claim,
	// recorded as auto_released.
	c.p.Signal(syscall.SIGKILL)
	c.p.Wait(t)
	if got := b.ok(t, "task_claim", `{"taskId":"`+id2+`"}`); got["claimed"] != true || astr(got, "task", "assignee") != "bob" {
		t.Fatalf("claim of a dead holder's task: %v", got)
	}
	g = b.ok(t, "task_get", `{"taskId":"`+id2+`"}`)
	if hs := list(t, g, "history"); len(hs) < 2 || hs[len(hs)-2]["action"] != "auto_released" || !strings.Contains(str(hs[len(hs)-2]["note"]), "carol") {
		t.Fatalf("history of the reclaimed task: %v", hs)
	}
	b.ok(t, "task_release", `{"taskId":"`+id2+`","note":"later"}`)
	if l := a.ok(t, "task_list", `{"status":"open"}`); l["total"] != float64(1) {
		t.Fatalf("open tasks: %v", l)
	}

	// tasks://open through resources/read.
	a.p.Send(`{"jsonrpc":"2.0","id":"res1","method":"resources/read","params":{"uri":"tasks://open"}}`)
	res := a.p.ExpectResult(t, `"res1"`)
	if !strings.Contains(asJSON(t, res), id2) {
		t.Fatalf("tasks://open lacks %s: %v", id2, res)
	}
}

// TestCoordWorkflowPostsTask: a workflow step posts a task through the
// task_post tool.
func TestCoordWorkflowPostsTask(t *testing.T) {
	t.Parallel()
	flows := t.TempDir()
	wf := map[string]any{"id": "post-task", "name": "Post a task", "version": "1.0.0", "description": "Post a task to the queue.",
		"status": "active", "inputSchema": map[string]any{"type": "object", "required": []string{"title"},
			"properties": map[string]any{"title": map[string]any{"type": "string"}}},
		"steps": []any{map[string]any{"id": "post", "name": "Post", "tool": "task_post",
			"input": map[string]any{"title": "{{input.title}}", "description": "from a workflow", "labels": []string{"wf"}}}},
		"output": map[string]any{"taskId": "{{steps.post.output.taskId}}"}}
	raw, _ := json.Marshal(wf)
	if err := os.WriteFile(filepath.Join(flows, "post-task.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	ps, _ := coordAgents(t, []string{"MCPRT_WORKFLOW_DIR=" + flows}, "flow")
	r := ps[0].ok(t, "workflow_run", `{"workflowId":"post-task","input":{"title":"from a step"}}`)
	id := astr(r, "output", "taskId")
	if id == "" {
		t.Fatalf("workflow_run: %v", r)
	}
	g := ps[0].ok(t, "task_get", `{"taskId":"`+id+`"}`)
	if astr(g, "task", "title") != "from a step" || astr(g, "task", "poster") != "flow" {
		t.Fatalf("the workflow's task: %v", g)
	}
}

// TestCoordClaimRace races two processes to claim one task, round after
// round: exactly one wins each.
func TestCoordClaimRace(t *testing.T) {
	t.Parallel()
	rounds := envInt("MCPRT_COORD_CLAIM_ROUNDS", 300)
	ps, _ := coordAgents(t, nil, "c1", "c2")
	wins := [2]int{}
	for start := 0; start < rounds; start += 30 {
		end := min(start+30, rounds)
		var posts []string
		for i := start; i < end; i++ {
			posts = append(posts, ps[0].send("task_post", fmt.Sprintf(`{"title":"t%d","description":"race","labels":["round%d"]}`, i, i)))
		}
		for _, id := range posts {
			if _, e := ps[0].await(t, id); e != nil {
				t.Fatalf("post: %s %s", e.Code, e.Message)
			}
		}
		ids := make([][2]string, end-start)
		for i := start; i < end; i++ {
			for k := range 2 {
				w := (i + k) % 2
				ids[i-start][w] = ps[w].send("task_claim", fmt.Sprintf(`{"labels":["round%d"]}`, i))
			}
		}
		oneWinnerEach(t, ps, ids, start, "claimed", &wins)
	}
	t.Logf("%d rounds: c1 won %d, c2 won %d", rounds, wins[0], wins[1])
}
