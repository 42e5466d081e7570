package workflow

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcprt/mcprt/domain/internal/check"
	"github.com/mcprt/mcprt/domain/toolspec"
)

// Limits of workflow_list.
const (
	DefaultListLimit, MaxListLimit = 10, 1000
	maxIDBytes                     = 128
)

// Tools holds the typed handlers of the workflow_* MCP tools, each a
// func(ctx, In) (Out, error) ready for mcp.AddTypedTool. Errors are
// *core.Error values.
type Tools struct {
	eng *Engine
	// corrOf returns the correlation id of the tools/call ctx belongs to.
	corrOf func(context.Context) string
}

// NewTools returns the tool handlers over eng; corrOf returns the
// correlation id of the tools/call a handler's ctx belongs to (the run's
// steps are traced beneath it).
func NewTools(eng *Engine, corrOf func(context.Context) string) *Tools {
	if corrOf == nil {
		corrOf = func(context.Context) string { return "" }
	}
	return &Tools{eng: eng, corrOf: corrOf}
}

// ToolSpecs returns the names, descriptions and annotations of the
// workflow tools, in the order of the Tools methods.
func ToolSpecs() []toolspec.Spec {
	return []toolspec.Spec{
		{Name: "workflow_run", Title: "Run a workflow",
			Description: "Run a workflow (its steps call tools or agents in order) and return its status, output and each step's result.",
			// The steps may call tools that overwrite or delete: a run may be destructive, and it is not idempotent.
			Destructive: true},
		{Name: "workflow_list", Title: "List workflows", Description: "List the workflows (bundled and from workflow.dir) by id.",
			ReadOnly: true, Idempotent: true},
		{Name: "workflow_describe", Title: "Describe a workflow", Description: "Describe a workflow: its steps, what each calls, its input schema.",
			ReadOnly: true, Idempotent: true},
	}
}

// RunInput is the input of workflow_run.
type RunInput struct {
	WorkflowID string         `json:"workflowId" jsonschema:"From workflow_list"`
	Input      map[string]any `json:"input,omitempty" jsonschema:"Checked against its inputSchema"`
}

// Run is the workflow_run handler. A run that stops is a tool error whose
// details carry the run id, status and completed steps.
func (t *Tools) Run(ctx context.Context, in RunInput) (*RunResult, error) {
	if err := check.Text("workflowId", in.WorkflowID, maxIDBytes, true); err != nil {
		return nil, err
	}
	res, err := t.eng.Run(ctx, RunRequest{WorkflowID: in.WorkflowID, Input: in.Input, CorrelationID: t.corrOf(ctx)})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// ListInput is the input of workflow_list.
type ListInput struct {
	Status string `json:"status,omitempty" jsonschema:"active, inactive or draft"`
	Limit  int    `json:"limit,omitempty" jsonschema:"1-1000, default 10"`
	Cursor string `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page"`
}

// Summary is one workflow in workflow_list.
type Summary struct {
	ID          string `json:"id" jsonschema:"The workflow's id"`
	Name        string `json:"name" jsonschema:"Its name"`
	Version     string `json:"version" jsonschema:"Its version"`
	Status      string `json:"status" jsonschema:"active, inactive or draft"`
	StepCount   int    `json:"stepCount" jsonschema:"How many steps it has"`
	Description string `json:"description,omitempty" jsonschema:"What it does"`
	Source      string `json:"source" jsonschema:"bundled, or the file it was loaded from"`
	Runnable    bool   `json:"runnable" jsonschema:"Whether it can run here: not inactive, and every tool it calls is offered"`
}

// ListOutput is the result of workflow_list.
type ListOutput struct {
	Workflows  []Summary `json:"workflows" jsonschema:"The workflows, by id"`
	Total      int       `json:"total" jsonschema:"How many workflows match the status filter"`
	NextCursor string    `json:"nextCursor,omitempty" jsonschema:"Pass as cursor for the next page; absent on the last page"`
}

// List is the workflow_list handler.
func (t *Tools) List(_ context.Context, in ListInput) (ListOutput, error) {
	switch in.Status {
	case "", StatusActive, StatusInactive, StatusDraft:
	default:
		return ListOutput{}, check.Invalid("status", "is %q; give active, inactive or draft (or leave it out)", clipText(in.Status))
	}
	limit, err := check.Limit("limit", in.Limit, DefaultListLimit, MaxListLimit)
	if err != nil {
		return ListOutput{}, err
	}
	out := ListOutput{Workflows: []Summary{}}
	for _, d := range t.eng.Definitions() {
		if in.Status != "" && d.Status != in.Status {
			continue
		}
		out.Total++
		if d.ID <= in.Cursor && in.Cursor != "" {
			continue
		}
		if len(out.Workflows) == limit {
			if out.NextCursor == "" {
				out.NextCursor = out.Workflows[limit-1].ID
			}
			continue
		}
		out.Workflows = append(out.Workflows, t.summary(d))
	}
	return out, nil
}

func (t *Tools) summary(d *Definition) Summary {
	return Summary{ID: d.ID, Name: d.Name, Version: d.Version, Status: d.Status, StepCount: len(d.Steps),
		Description: d.Description, Source: d.Source, Runnable: d.Status != StatusInactive && len(t.eng.MissingTools(d)) == 0}
}

// IDInput is the input of workflow_describe.
type IDInput struct {
	WorkflowID string `json:"workflowId"`
}

// StepInfo is one step in workflow_describe.
type StepInfo struct {
	StepID      string          `json:"stepId" jsonschema:"The step's id"`
	Name        string          `json:"name" jsonschema:"Its name (its id when it has none)"`
	Type        string          `json:"type" jsonschema:"tool or agent"`
	Target      string          `json:"target" jsonschema:"The tool it calls or the agent it runs"`
	Description string          `json:"description,omitempty" jsonschema:"What it does"`
	Input       json.RawMessage `json:"input,omitempty" jsonschema:"Its input template"`
	TimeoutMs   int             `json:"timeoutMs" jsonschema:"Deadline of one attempt"`
	Retries     int             `json:"retries" jsonschema:"Attempts after a failed one"`
	OnFailure   string          `json:"onFailure" jsonschema:"stop or continue"`
	Available   bool            `json:"available" jsonschema:"Whether the tool is offered here (agent steps: always true; they fail when no agents are)"`
}

// DescribeOutput is the result of workflow_describe.
type DescribeOutput struct {
	Summary
	Steps       []StepInfo      `json:"steps" jsonschema:"The steps, in the order they run"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty" jsonschema:"The JSON Schema its input must satisfy"`
	Output      json.RawMessage `json:"output,omitempty" jsonschema:"Its output template"`
	TimeoutMs   int             `json:"timeoutMs,omitempty" jsonschema:"Deadline of a whole run, when set"`
}

// Describe is the workflow_describe handler.
func (t *Tools) Describe(_ context.Context, in IDInput) (DescribeOutput, error) {
	if err := check.Text("workflowId", in.WorkflowID, maxIDBytes, true); err != nil {
		return DescribeOutput{}, err
	}
	d, err := t.eng.Definition(in.WorkflowID)
	if err != nil {
		return DescribeOutput{}, err
	}
	return Describe(t.eng, d), nil
}

// Describe returns what workflow_describe shows of d.
func Describe(eng *Engine, d *Definition) DescribeOutput {
	missing := map[string]bool{}
	for _, m := range eng.MissingTools(d) {
		missing[m] = true
	}
	out := DescribeOutput{Summary: (&Tools{eng: eng}).summary(d), Steps: make([]StepInfo, len(d.Steps)),
		InputSchema: d.InputSchema, Output: d.Output, TimeoutMs: d.TimeoutMs}
	for i := range d.Steps {
		s := &d.Steps[i]
		name := s.Name
		if name == "" {
			name = s.ID
		}
		timeout := s.TimeoutMs
		if timeout == 0 {
			timeout = DefaultStepTimeoutMs
		}
		out.Steps[i] = StepInfo{StepID: s.ID, Name: name, Type: s.Type(), Target: s.Target(), Description: s.Description,
			Input: s.Input, TimeoutMs: timeout, Retries: s.Retries, OnFailure: s.OnFailure, Available: !missing[s.Tool]}
	}
	return out
}

// String describes a run for logs.
func (r *RunResult) String() string {
	return fmt.Sprintf("workflow %s run %s: %s (%d of %d steps)", r.WorkflowID, r.RunID, r.Status, len(r.StepsCompleted), len(r.Steps))
}
