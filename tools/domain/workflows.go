package domain

import (
	"context"
	"encoding/json"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/trace"
	"github.com/mcprt/mcprt/domain/workflow"
	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
)

// The workflow resources and prompt.
const (
	URIWorkflows      = "workflows://"
	URIWorkflow       = "workflows://id/{id}"
	PromptRunWorkflow = "run_workflow"
)

// newWorkflows loads the bundled workflows and those of workflow.dir and
// builds the engine. A definition that cannot be loaded is a
// *config.Error for workflow.dir.
func (d *Domain) newWorkflows(cfg config.Domain, dataDir string, opts Options) error {
	dir := cfg.WorkflowsDir(dataDir)
	defs, err := workflow.Load(dir)
	if err != nil {
		source := "file or env"
		if cfg.Workflow.Dir == "" {
			source = "default"
		}
		return &config.Error{Key: "workflow.dir", Env: config.EnvName("workflow.dir"), Value: dir,
			Allowed: "a directory of valid workflow definitions (*.json, see docs/workflow.schema.json), or one that does not exist",
			Source:  source, Reason: core.AsError(err).Message}
	}
	wo := workflow.Options{Clock: opts.Clock, IDs: opts.IDs, CorrelationOf: mcp.CorrelationID}
	if d.recorder != nil {
		wo.Tracer = &stepTracer{rec: d.recorder, serverID: d.serverID}
	}
	d.flows = workflow.NewEngine(defs, wo)
	return nil
}

// Workflows returns the workflow engine, for other packages that run
// workflows (RunWorkflow) or give it an agent runner (SetAgentRunner).
// Its tool steps can call tools once Register has run.
func (d *Domain) Workflows() *workflow.Engine { return d.flows }

// registerWorkflows lets workflow steps call the tools of srv and adds the
// workflow resources and prompt whose tools were admitted.
func (d *Domain) registerWorkflows(srv *mcp.Server, admitted map[string]bool) error {
	d.flows.SetInvoker(toolInvoker{srv: srv})
	wt := workflow.NewTools(d.flows, mcp.CorrelationID)
	if admitted["workflow_list"] {
		err := srv.AddResource(mcp.Resource{URI: URIWorkflows, Name: "workflows", Title: "Workflows", MIMEType: mimeJSON,
			Description: "The workflows catalogue, by id: {workflows, total, nextCursor?} as workflow_list returns it"},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				out, err := wt.List(ctx, workflow.ListInput{Limit: workflow.MaxListLimit})
				return jsonResult(req.URI, out, err)
			})
		if err != nil {
			return err
		}
	}
	if admitted["workflow_describe"] {
		err := srv.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: URIWorkflow, Name: "workflow", Title: "Workflow",
			MIMEType: mimeJSON, Description: "One workflow: its steps and input schema, as workflow_describe returns it",
			Complete: d.completeWorkflows},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				def, err := d.flows.Definition(req.Variables["id"])
				if err != nil {
					return nil, core.NewError(core.CodeNotFound, core.AsError(err).Message)
				}
				return jsonResult(req.URI, workflow.Describe(d.flows, def), nil)
			})
		if err != nil {
			return err
		}
	}
	if admitted["workflow_run"] {
		err := srv.AddPrompt(mcp.Prompt{Name: PromptRunWorkflow, Title: "Run workflow",
			Description: "Execute a workflow with optional input: ask the model to call workflow_run and report the outcome",
			Arguments: []mcp.PromptArgument{
				{Name: "workflowId", Title: "Workflow id", Required: true, Description: "The ID of the workflow to execute (workflow_list shows them)"},
				{Name: "input", Title: "Input", Description: "JSON input for the workflow: an object, e.g. {\"key\": \"k\", \"note\": \"n\"}"}},
			Complete: d.completeWorkflows,
		}, runWorkflowPrompt)
		if err != nil {
			return err
		}
	}
	return nil
}

// runWorkflowPrompt renders run_workflow.
func runWorkflowPrompt(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	id, input := req.Arguments["workflowId"], req.Arguments["input"]
	text := "Call the workflow_run tool with workflowId " + quote(id)
	if input != "" {
		var obj map[string]any
		if err := json.Unmarshal([]byte(input), &obj); err != nil || obj == nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams,
				"Invalid params: the argument input must be a JSON object, e.g. {\"key\": \"k\"}, got "+quote(core.Clip(input, 80)))
		}
		compact, _ := json.Marshal(obj) // decoded JSON always encodes
		text += " and input " + string(compact)
	}
	text += ", then report its status, the output, and for each step whether it succeeded, how long it took and any error."
	return userPrompt("Execute the "+quote(id)+" workflow", text), nil
}

// completeWorkflows proposes workflow ids.
func (d *Domain) completeWorkflows(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	if req.Argument != "id" && req.Argument != "workflowId" {
		return completions(nil, ""), nil
	}
	defs := d.flows.Definitions()
	ids := make([]string, len(defs))
	for i, def := range defs {
		ids[i] = def.ID
	}
	return completions(ids, req.Value), nil
}

// toolInvoker lets workflow steps call the server's tools.
type toolInvoker struct{ srv *mcp.Server }

// HasTool reports whether the tool is registered.
func (t toolInvoker) HasTool(name string) bool {
	_, ok := t.srv.LookupTool(name)
	return ok
}

// InvokeTool calls the tool in process under the step's correlation id.
func (t toolInvoker) InvokeTool(ctx context.Context, call workflow.ToolCall) (json.RawMessage, error) {
	return t.srv.InvokeTool(mcp.WithCorrelationID(ctx, call.CorrelationID), call.Name, call.Args)
}

// stepTracer records workflow steps as trace events beneath the run's
// correlation path.
type stepTracer struct {
	rec      *trace.Recorder
	serverID string
}

// Step queues the step's event; it never blocks.
func (t *stepTracer) Step(ev workflow.StepEvent) {
	traceID, parentID := trace.Path(ev.CorrelationID)
	if traceID == "" {
		traceID, parentID = ev.CorrelationID, ""
	}
	e := trace.Event{RunID: ev.RunID, TraceID: traceID, CorrelationID: ev.CorrelationID, ParentID: parentID, Tool: ev.Name,
		Start: ev.Start, Duration: ev.Duration, Outcome: mcp.OutcomeSuccess, Success: ev.Err == nil, ServerID: t.serverID}
	if ev.Err != nil {
		ce := core.AsError(ev.Err)
		e.Outcome, e.ErrorCode, e.ErrorMessage = mcp.OutcomeToolError, string(ce.Code), core.Clip(ce.Message, trace.MaxErrorMessageBytes)
	}
	t.rec.Record(e, ev.Output)
}
