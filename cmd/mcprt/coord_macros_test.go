package main

// coord_start and coord_finish through the binary: one call opens a
// session's work (identity, session, reservations, inbox, tasks), one
// closes it (reservations released, summary sent, taken messages acked).

import (
	"slices"
	"strings"
	"testing"
)

func TestCoordStartFinish(t *testing.T) {
	t.Parallel()
	ps, _ := coordAgents(t, nil, "lead", "worker")
	lead, worker := ps[0], ps[1]
	sid := str(lead.ok(t, "session_create", `{"initiator":"lead","task":"ship v2"}`)["sessionId"])
	s := lead.ok(t, "coord_start", `{"agentType":"Manager","sessionId":"`+sid+`","reservePaths":["api/**"]}`)
	if s["agentId"] != "lead" || granted(s) != true {
		t.Fatalf("lead's coord_start: %v", s)
	}
	taskID := str(lead.ok(t, "task_post", `{"title":"client","description":"write the client","assignee":"worker"}`)["taskId"])
	sent := lead.ok(t, "aacp_send", sendArgsTo("worker", "TASK_ASSIGNMENT", assignment("T1")))
	lead.fails(t, "coord_start", `{"agentType":"Boss"}`, "INVALID_ARGUMENT")

	w := worker.ok(t, "coord_start", `{"agentType":"Implementation","sessionId":"`+sid+`","reservePaths":["client/**","api/x.go"]}`)
	if w["joined"] != true || granted(w) != false || !strings.Contains(asJSON(t, w["reserved"]), `"heldBy":"lead"`) {
		t.Fatalf("worker's reserve over lead's api/**: %v", w["reserved"])
	}
	if anum(w, "inbox", "queued") < 1 || !strings.Contains(asJSON(t, w["inbox"]), str(sent["messageId"])) {
		t.Fatalf("worker's inbox summary lacks the assignment: %v", w["inbox"])
	}
	if !strings.Contains(asJSON(t, w["openTasks"]), taskID) || !strings.Contains(asJSON(t, w["reservations"]), `"api/**"`) {
		t.Fatalf("worker's coord_start lacks the open task or lead's reservation: %v", w)
	}
	worker.ok(t, "reserve_paths", `{"paths":["client/**"]}`)
	got := worker.receive(t, `{"max":10}`)
	if len(got) == 0 {
		t.Fatal("worker received nothing")
	}
	f := worker.ok(t, "coord_finish", `{"summary":"client written"}`)
	acked, _ := f["acked"].([]any)
	if anum(f, "released") != 1 || !slices.Contains(acked, any(str(sent["messageId"]))) ||
		!strings.Contains(asJSON(t, f["sessions"]), sid) || !strings.Contains(asJSON(t, f["notified"]), "lead") {
		t.Fatalf("worker's coord_finish: %v", f)
	}
	if l := worker.ok(t, "list_reservations", `{"agentId":"worker"}`); l["total"] != float64(0) {
		t.Fatalf("worker still holds reservations: %v", l)
	}
	// lead's inbox has the summary.
	if m := lead.receiveOne(t, "CUSTOM_NOTICE"); !strings.Contains(asJSON(t, m), "client written") {
		t.Fatalf("lead's notice: %v", m)
	}
	worker.fails(t, "coord_finish", `{"summary":""}`, "INVALID_ARGUMENT")
}

// granted is coord_start's reserved.granted.
func granted(v map[string]any) any {
	r, _ := v["reserved"].(map[string]any)
	return r["granted"]
}
