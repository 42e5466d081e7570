package task

import (
	"context"

	"github.com/mcprt/mcprt/domain/internal/check"
	"github.com/mcprt/mcprt/domain/toolspec"
)

// Tools holds the typed handlers of the task_* MCP tools, each a
// func(ctx, In) (Out, error) ready for mcp.AddTypedTool. Errors are
// *core.Error values.
type Tools struct{ svc *Service }

// NewTools returns the tool handlers over svc.
func NewTools(svc *Service) *Tools { return &Tools{svc: svc} }

// ToolSpecs returns the names, descriptions and annotations of the task
// tools.
func ToolSpecs() []toolspec.Spec {
	return []toolspec.Spec{
		{Name: "task_post", Title: "Post a task", Description: "Add a task to the shared work queue. dependsOn: task ids that must be done before it can be claimed; assignee: the only agent that may claim it (told)."},
		{Name: "task_claim", Title: "Claim a task", Description: "Atomically claim a task: the one given, or the highest-priority open task you may claim with every label given. Never claims a task someone holds or whose dependencies are not done."},
		{Name: "task_update", Title: "Update a task you hold", Description: "Set the status of a task you hold: in_progress, blocked, done or failed (with note and result). The poster is told when it ends."},
		{Name: "task_handoff", Title: "Hand a task off", Description: "Give a task you hold to another agent, with a note; they are told."},
		{Name: "task_release", Title: "Release a task", Description: "Put a task you hold back in the queue, open for anyone."},
		{Name: "task_steal", Title: "Steal a task", Description: "Take a task whose holder is stale or offline (TASK_HOLDER_LIVE otherwise); recorded with the reason, the holder is told.",
			Destructive: true},
		{Name: "task_list", Title: "List tasks", Description: "List tasks by priority then age, filtered by status, assignee or label.", ReadOnly: true, Idempotent: true},
		{Name: "task_get", Title: "Get a task", Description: "One task with its dependencies and its history of transitions.", ReadOnly: true, Idempotent: true},
	}
}

// TaskOutput is one task as the tools show it.
type TaskOutput struct {
	TaskID      string   `json:"taskId"`
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	Priority    int      `json:"priority"`
	Labels      []string `json:"labels"`
	DependsOn   []string `json:"dependsOn"`
	Poster      string   `json:"poster"`
	Assignee    string   `json:"assignee,omitempty" jsonschema:"The holder; on an open task, the only agent that may claim it"`
	Status      Status   `json:"status" jsonschema:"open, claimed, in_progress, blocked, done or failed"`
	Note        string   `json:"note,omitempty"`
	Result      string   `json:"result,omitempty"`
	CreatedAt   string   `json:"createdAt"`
	UpdatedAt   string   `json:"updatedAt"`
}

// Output returns the tool view of t.
func Output(t Task) TaskOutput {
	nn := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return TaskOutput{TaskID: t.ID, Title: t.Title, Description: t.Description, Priority: t.Priority, Labels: nn(t.Labels),
		DependsOn: nn(t.DependsOn), Poster: t.Poster, Assignee: t.Assignee, Status: t.Status, Note: t.Note, Result: t.Result,
		CreatedAt: check.Stamp(t.CreatedAt), UpdatedAt: check.Stamp(t.UpdatedAt)}
}

// Outputs returns the tool view of ts (never nil).
func Outputs(ts []Task) []TaskOutput {
	out := make([]TaskOutput, len(ts))
	for i, t := range ts {
		out[i] = Output(t)
	}
	return out
}

// PostArgs is the input of task_post.
type PostArgs struct {
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Priority    int      `json:"priority,omitempty" jsonschema:"1 (low) to 5 (urgent), default 3"`
	Labels      []string `json:"labels,omitempty"`
	DependsOn   []string `json:"dependsOn,omitempty"`
	Assignee    string   `json:"assignee,omitempty"`
}

// Post is the task_post handler.
func (t *Tools) Post(ctx context.Context, in PostArgs) (TaskOutput, error) {
	task, err := t.svc.Post(ctx, PostInput(in))
	if err != nil {
		return TaskOutput{}, err
	}
	return Output(task), nil
}

// ClaimArgs is the input of task_claim.
type ClaimArgs struct {
	TaskID string   `json:"taskId,omitempty"`
	Labels []string `json:"labels,omitempty" jsonschema:"Without taskId: claim the best open task having all these labels"`
}

// ClaimOutput is the result of task_claim.
type ClaimOutput struct {
	Claimed bool        `json:"claimed" jsonschema:"false when no open task matched"`
	Task    *TaskOutput `json:"task,omitempty"`
}

// Claim is the task_claim handler.
func (t *Tools) Claim(ctx context.Context, in ClaimArgs) (ClaimOutput, error) {
	task, ok, err := t.svc.Claim(ctx, in.TaskID, in.Labels)
	if err != nil || !ok {
		return ClaimOutput{}, err
	}
	o := Output(task)
	return ClaimOutput{Claimed: true, Task: &o}, nil
}

// UpdateArgs is the input of task_update.
type UpdateArgs struct {
	TaskID string `json:"taskId"`
	Status Status `json:"status" jsonschema:"in_progress, blocked, done or failed"`
	Note   string `json:"note,omitempty"`
	Result string `json:"result,omitempty"`
}

// Update is the task_update handler.
func (t *Tools) Update(ctx context.Context, in UpdateArgs) (TaskOutput, error) {
	task, err := t.svc.Update(ctx, in.TaskID, in.Status, in.Note, in.Result)
	if err != nil {
		return TaskOutput{}, err
	}
	return Output(task), nil
}

// HandoffArgs is the input of task_handoff.
type HandoffArgs struct {
	TaskID    string `json:"taskId"`
	ToAgentID string `json:"toAgentId"`
	Note      string `json:"note"`
}

// Handoff is the task_handoff handler.
func (t *Tools) Handoff(ctx context.Context, in HandoffArgs) (TaskOutput, error) {
	task, err := t.svc.Handoff(ctx, in.TaskID, in.ToAgentID, in.Note)
	if err != nil {
		return TaskOutput{}, err
	}
	return Output(task), nil
}

// ReleaseArgs is the input of task_release.
type ReleaseArgs struct {
	TaskID string `json:"taskId"`
	Note   string `json:"note,omitempty"`
}

// Release is the task_release handler.
func (t *Tools) Release(ctx context.Context, in ReleaseArgs) (TaskOutput, error) {
	task, err := t.svc.Release(ctx, in.TaskID, in.Note)
	if err != nil {
		return TaskOutput{}, err
	}
	return Output(task), nil
}

// StealArgs is the input of task_steal.
type StealArgs struct {
	TaskID string `json:"taskId"`
	Reason string `json:"reason"`
}

// Steal is the task_steal handler.
func (t *Tools) Steal(ctx context.Context, in StealArgs) (TaskOutput, error) {
	task, err := t.svc.Steal(ctx, in.TaskID, in.Reason)
	if err != nil {
		return TaskOutput{}, err
	}
	return Output(task), nil
}

// ListArgs is the input of task_list.
type ListArgs struct {
	Status   Status `json:"status,omitempty" jsonschema:"open, claimed, in_progress, blocked, done or failed"`
	Assignee string `json:"assignee,omitempty"`
	Label    string `json:"label,omitempty"`
	Limit    int    `json:"limit,omitempty" jsonschema:"1-500, default 50"`
}

// ListOutput is the result of task_list.
type ListOutput struct {
	Tasks []TaskOutput `json:"tasks"`
	Total int          `json:"total" jsonschema:"How many match, listed or not"`
}

// List is the task_list handler.
func (t *Tools) List(ctx context.Context, in ListArgs) (ListOutput, error) {
	ts, total, err := t.svc.List(ctx, Filter(in))
	if err != nil {
		return ListOutput{}, err
	}
	return ListOutput{Tasks: Outputs(ts), Total: total}, nil
}

// GetArgs is the input of task_get.
type GetArgs struct {
	TaskID string `json:"taskId"`
}

// EventOutput is one transition in task_get.
type EventOutput struct {
	At       string `json:"at"`
	AgentID  string `json:"agentId"`
	Action   string `json:"action"`
	From     Status `json:"from,omitempty"`
	To       Status `json:"to"`
	Assignee string `json:"assignee,omitempty"`
	Note     string `json:"note,omitempty"`
}

// GetOutput is the result of task_get.
type GetOutput struct {
	Task    TaskOutput    `json:"task"`
	History []EventOutput `json:"history" jsonschema:"Transitions, oldest first (the newest 200)"`
}

// Get is the task_get handler.
func (t *Tools) Get(ctx context.Context, in GetArgs) (GetOutput, error) {
	task, evs, err := t.svc.Get(ctx, in.TaskID)
	if err != nil {
		return GetOutput{}, err
	}
	out := GetOutput{Task: Output(task), History: make([]EventOutput, len(evs))}
	for i, e := range evs {
		out.History[i] = EventOutput{At: check.Stamp(e.At), AgentID: e.AgentID, Action: e.Action, From: e.From, To: e.To,
			Assignee: e.Assignee, Note: e.Note}
	}
	return out, nil
}
