package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/mcprt/mcprt/core"
)

// The error codes of the workflow domain.
const (
	CodeWorkflowNotFound  core.Code = "WORKFLOW_NOT_FOUND"
	CodeValidationError   core.Code = "WORKFLOW_VALIDATION_ERROR"
	CodeStepFailed        core.Code = "WORKFLOW_STEP_FAILED"
	CodeWorkflowTimeout   core.Code = "WORKFLOW_TIMEOUT"
	CodeWorkflowCancelled core.Code = "WORKFLOW_CANCELLED"
	CodeAgentsUnavailable core.Code = "AGENTS_UNAVAILABLE"
	CodeTemplateError     core.Code = "WORKFLOW_TEMPLATE_ERROR"
	CodeNestingTooDeep    core.Code = "WORKFLOW_NESTING_TOO_DEEP"
)

// MaxNesting bounds workflows that run workflows (through workflow_run
// steps or RunWorkflow): at most this many runs deep.
const MaxNesting = 4

// Run statuses.
const (
	RunSucceeded = "succeeded"
	RunPartial   = "partial" // finished, but a step with onFailure "continue" failed
	RunFailed    = "failed"
	RunTimedOut  = "timed_out"
	RunCancelled = "cancelled"
)

// Step statuses.
const (
	StepSucceeded = "succeeded"
	StepFailed    = "failed"
	StepSkipped   = "skipped" // not reached: the run stopped before it
)

// ToolCall is one call of a registered tool by a step.
type ToolCall struct {
	Name string
	Args json.RawMessage
	// CorrelationID is the step's correlation path (the run's, then
	// "/" and the step id): what the tool's own logs and traces carry.
	CorrelationID string
}

// Invoker calls registered tools in process. mcp.Server.InvokeTool,
// adapted, is one.
type Invoker interface {
	// HasTool reports whether a tool of that name is registered (and so
	// admitted by the server's mode).
	HasTool(name string) bool
	// InvokeTool runs the tool and returns its result as JSON, or a
	// *core.Error.
	InvokeTool(ctx context.Context, call ToolCall) (json.RawMessage, error)
}

// AgentRunner runs agents for agent steps.
type AgentRunner interface {
	RunAgent(ctx context.Context, agentID string, input map[string]any) (any, error)
}

// StepEvent reports one finished attempt of a step, or (Step "") a whole
// run started by RunWorkflow, to a Tracer.
type StepEvent struct {
	RunID         string
	WorkflowID    string
	Step          string // "" for the run itself
	Name          string // the tool's name, "agent:ID", or "workflow:ID" for a run
	CorrelationID string
	Start         time.Time
	Duration      time.Duration
	Err           error // nil on success
	Output        any
}

// Tracer records steps as trace events. Step must not block.
type Tracer interface {
	Step(ev StepEvent)
}

// Options configure NewEngine.
type Options struct {
	// Clock times steps, timeouts and backoff; nil is the system clock.
	Clock core.Clock
	// IDs names runs; nil is UUID v4.
	IDs core.IDGenerator
	// Tracer, if set, records every step attempt.
	Tracer Tracer
	// CorrelationOf returns the correlation id of the call ctx belongs
	// to ("" for none), for RunWorkflow.
	CorrelationOf func(ctx context.Context) string
}

// Engine runs workflow definitions. It is safe for concurrent use; its
// definitions never change after NewEngine.
type Engine struct {
	clock  core.Clock
	ids    core.IDGenerator
	tracer Tracer
	corrOf func(context.Context) string
	defs   map[string]*Definition
	order  []*Definition // by id

	mu      sync.RWMutex
	invoker Invoker     // guarded by mu
	agents  AgentRunner // guarded by mu
}

// NewEngine returns an engine over defs (ids must be unique: Load makes
// them so; a later duplicate replaces an earlier one).
func NewEngine(defs []*Definition, opts Options) *Engine {
	if opts.Clock == nil {
		opts.Clock = core.SystemClock{}
	}
	if opts.IDs == nil {
		opts.IDs = &core.UUIDGenerator{}
	}
	if opts.CorrelationOf == nil {
		opts.CorrelationOf = func(context.Context) string { return "" }
	}
	e := &Engine{clock: opts.Clock, ids: opts.IDs, tracer: opts.Tracer, corrOf: opts.CorrelationOf, defs: map[string]*Definition{}}
	for _, d := range defs {
		e.defs[d.ID] = d
	}
	for _, d := range e.defs {
		e.order = append(e.order, d)
	}
	sort.Slice(e.order, func(i, j int) bool { return e.order[i].ID < e.order[j].ID })
	return e
}

// SetInvoker installs what tool steps call; without one they cannot run.
func (e *Engine) SetInvoker(inv Invoker) {
	e.mu.Lock()
	e.invoker = inv
	e.mu.Unlock()
}

// SetAgentRunner installs what agent steps call; nil (the default) makes
// every agent step fail with AGENTS_UNAVAILABLE.
func (e *Engine) SetAgentRunner(r AgentRunner) {
	e.mu.Lock()
	e.agents = r
	e.mu.Unlock()
}

func (e *Engine) runners() (Invoker, AgentRunner) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.invoker, e.agents
}

// Definitions returns every definition, sorted by id.
func (e *Engine) Definitions() []*Definition { return append([]*Definition(nil), e.order...) }

// Definition returns the definition with that id, or WORKFLOW_NOT_FOUND.
func (e *Engine) Definition(id string) (*Definition, error) {
	if d, ok := e.defs[id]; ok {
		return d, nil
	}
	return nil, core.NewError(CodeWorkflowNotFound, fmt.Sprintf("no workflow has the id %q; workflow_list shows the workflows this server has", clipText(id))).
		WithDetail("workflowId", clipText(id))
}

// MissingTools returns the tools d's steps call that are not registered
// (all of them while no Invoker is installed).
func (e *Engine) MissingTools(d *Definition) []string {
	inv, _ := e.runners()
	var out []string
	for i := range d.Steps {
		s := &d.Steps[i]
		if s.Tool != "" && (inv == nil || !inv.HasTool(s.Tool)) {
			out = append(out, s.Tool)
		}
	}
	return out
}

// RunRequest asks for one run.
type RunRequest struct {
	WorkflowID string
	Input      map[string]any
	// CorrelationID is the run's correlation path; its steps run under
	// CorrelationID + "/" + step id. Empty means a fresh id.
	CorrelationID string
	// TraceRun also reports the run itself to the Tracer (a tools/call
	// of workflow_run is traced by the server already).
	TraceRun bool
}

// RunError is why a run or a step failed.
type RunError struct {
	Code      string `json:"code" jsonschema:"UPPER_SNAKE_CASE error code"`
	Message   string `json:"message" jsonschema:"What went wrong, for people"`
	Step      string `json:"step,omitempty" jsonschema:"The step that failed, for a run error"`
	Retryable bool   `json:"retryable,omitempty" jsonschema:"Whether running again may succeed"`
}

// StepResult is what one step did.
type StepResult struct {
	StepID     string    `json:"stepId" jsonschema:"The step's id"`
	Type       string    `json:"type" jsonschema:"tool or agent"`
	Target     string    `json:"target" jsonschema:"The tool's name or the agent's id"`
	Status     string    `json:"status" jsonschema:"succeeded, failed or skipped (not reached)"`
	Attempts   int       `json:"attempts" jsonschema:"How many times the step ran (1 + retries used)"`
	DurationMs int64     `json:"durationMs" jsonschema:"Time from the first attempt's start to the last one's end, backoff included"`
	Output     any       `json:"output,omitempty" jsonschema:"The step's output, when it succeeded"`
	Error      *RunError `json:"error,omitempty" jsonschema:"Why the step failed, when it did"`
}

// RunResult is the outcome of a run.
type RunResult struct {
	Success        bool         `json:"success" jsonschema:"Whether every step succeeded"`
	RunID          string       `json:"runId" jsonschema:"This run's id"`
	WorkflowID     string       `json:"workflowId" jsonschema:"The workflow run"`
	Status         string       `json:"status" jsonschema:"succeeded, partial (a step with onFailure continue failed), failed, timed_out or cancelled"`
	CorrelationID  string       `json:"correlationId" jsonschema:"The run's correlation path; step i ran under correlationId/stepId (trace_get or trace_tree show them)"`
	StepsCompleted []string     `json:"stepsCompleted" jsonschema:"The ids of the steps that succeeded, in order"`
	Output         any          `json:"output,omitempty" jsonschema:"The workflow's output: its output template, or the last successful step's output"`
	Error          *RunError    `json:"error,omitempty" jsonschema:"Why the run failed"`
	Steps          []StepResult `json:"steps" jsonschema:"Every step, in order"`
	DurationMs     int64        `json:"durationMs" jsonschema:"How long the run took"`
}

type depthKey struct{}

var (
	errStepTimeout = errors.New("workflow: the step's timeout passed")
	errRunTimeout  = errors.New("workflow: the workflow's timeout passed")
)

// RunWorkflow runs a workflow from Go code (the agent domain calls it):
// under the correlation id of the call ctx belongs to, plus "/" and the
// workflow id, with the run itself traced. It returns the *RunResult, or
// a *core.Error (with the *RunResult as well when steps ran).
func (e *Engine) RunWorkflow(ctx context.Context, workflowID string, input map[string]any) (any, error) {
	cid := e.corrOf(ctx)
	if cid != "" {
		cid += "/" + workflowID
	}
	res, err := e.Run(ctx, RunRequest{WorkflowID: workflowID, Input: input, CorrelationID: cid, TraceRun: true})
	if res == nil {
		return nil, err
	}
	return res, err
}

// Run runs a workflow: its input is checked against the inputSchema
// (INVALID_ARGUMENT), every tool its steps call must be registered
// (WORKFLOW_VALIDATION_ERROR), then the steps run in order. A run that
// stops on a failed step is WORKFLOW_STEP_FAILED, one whose timeout or
// the call's deadline passed WORKFLOW_TIMEOUT, one whose ctx was
// cancelled WORKFLOW_CANCELLED; those errors come with the RunResult.
func (e *Engine) Run(ctx context.Context, req RunRequest) (*RunResult, error) {
	d, err := e.Definition(req.WorkflowID)
	if err != nil {
		return nil, err
	}
	if err := e.admit(ctx, d, req.Input); err != nil {
		return nil, err
	}
	ctx, budget := budgetFor(ctx)
	if err := budget.reserve(d); err != nil {
		return nil, err
	}
	start := e.clock.Now()
	res := &RunResult{RunID: e.ids.NewID(), WorkflowID: d.ID, CorrelationID: req.CorrelationID, StepsCompleted: []string{},
		Steps: make([]StepResult, len(d.Steps))}
	if res.CorrelationID == "" {
		res.CorrelationID = res.RunID
	}
	depth, _ := ctx.Value(depthKey{}).(int)
	runCtx, cancel := context.WithCancelCause(context.WithValue(ctx, depthKey{}, depth+1))
	defer cancel(nil)
	if d.TimeoutMs > 0 {
		t := e.clock.AfterFunc(time.Duration(d.TimeoutMs)*time.Millisecond, func() { cancel(errRunTimeout) })
		defer t.Stop()
	}
	input := req.Input
	if input == nil {
		input = map[string]any{}
	}
	sc := &scope{input: input, outputs: map[string]any{}, failed: map[string]bool{}}
	var last any
	var runErr *core.Error
	for i := range d.Steps {
		s := &d.Steps[i]
		sr := &res.Steps[i]
		*sr = StepResult{StepID: s.ID, Type: s.Type(), Target: s.Target(), Status: StepSkipped}
		if runErr != nil {
			continue
		}
		out, serr := e.runStep(runCtx, res, s, sc, sr)
		if serr == nil {
			if err := budget.keep(d, s, out); err != nil {
				ce := core.AsError(err)
				sr.Status, sr.Output = StepFailed, nil
				sr.Error = &RunError{Code: string(ce.Code), Message: ce.Message}
				sc.failed[s.ID] = true
				runErr = ce.WithDetail("step", s.ID)
				continue
			}
			sc.outputs[s.ID], last = out, out
			res.StepsCompleted = append(res.StepsCompleted, s.ID)
			continue
		}
		sc.failed[s.ID] = true
		if runCtx.Err() != nil {
			runErr = e.abandoned(runCtx, d, s.ID)
			continue
		}
		if s.OnFailure == OnFailureContinue {
			continue
		}
		ce := core.AsError(serr)
		runErr = core.NewError(CodeStepFailed, fmt.Sprintf("step %q (%s %s) failed: %s: %s", s.ID, s.Type(), s.Target(), ce.Code, ce.Message)).
			WithDetail("step", s.ID).WithDetail("stepCode", string(ce.Code)).WithRetryable(ce.Retryable)
	}
	if runErr == nil {
		res.Status, res.Success = RunSucceeded, len(sc.failed) == 0
		if !res.Success {
			res.Status = RunPartial
		}
		res.Output = last
		if d.output != nil {
			out, err := render(d.output, sc)
			if err != nil {
				runErr = core.NewError(CodeTemplateError, "the workflow's output: "+err.Error())
			}
			res.Output = out
		}
	}
	res.DurationMs = e.clock.Now().Sub(start).Milliseconds()
	if runErr != nil {
		res.Success, res.Output = false, nil
		res.Error = &RunError{Code: string(runErr.Code), Message: runErr.Message, Retryable: runErr.Retryable}
		res.Error.Step, _ = runErr.Details["step"].(string)
		switch runErr.Code {
		case CodeWorkflowTimeout:
			res.Status = RunTimedOut
		case CodeWorkflowCancelled:
			res.Status = RunCancelled
		default:
			res.Status = RunFailed
		}
		runErr = runErr.WithDetail("runId", res.RunID).WithDetail("workflowId", d.ID).WithDetail("status", res.Status).
			WithDetail("stepsCompleted", res.StepsCompleted).WithDetail("correlationId", res.CorrelationID)
	}
	if req.TraceRun && e.tracer != nil {
		ev := StepEvent{RunID: res.RunID, WorkflowID: d.ID, Name: "workflow:" + d.ID, CorrelationID: res.CorrelationID,
			Start: start, Duration: e.clock.Now().Sub(start), Output: res}
		if runErr != nil {
			ev.Err = runErr
		}
		e.tracer.Step(ev)
	}
	if runErr != nil {
		return res, runErr
	}
	return res, nil
}

// admit checks what must hold before any step runs.
func (e *Engine) admit(ctx context.Context, d *Definition, input map[string]any) error {
	if depth, _ := ctx.Value(depthKey{}).(int); depth >= MaxNesting {
		return core.NewError(CodeNestingTooDeep, fmt.Sprintf("workflow %q would run %d workflows deep; the limit is %d: "+
			"a workflow that (indirectly) runs itself never ends", d.ID, depth+1, MaxNesting)).WithDetail("limit", MaxNesting)
	}
	if d.Status == StatusInactive {
		return core.NewError(CodeValidationError, fmt.Sprintf("workflow %q is inactive; set its status to active (or draft) to run it", d.ID)).
			WithDetail("workflowId", d.ID)
	}
	if input == nil {
		input = map[string]any{}
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return core.Errorf(core.CodeInvalidArgument, "input: cannot be encoded as JSON: %v", err)
	}
	if len(raw) > MaxInputBytes {
		return core.NewError(core.CodeInvalidArgument, fmt.Sprintf("input: is %d bytes as JSON; the limit is %d", len(raw), MaxInputBytes)).
			WithDetail("limit", MaxInputBytes)
	}
	if d.input != nil {
		v, err := d.input.decode(raw)
		if err != nil {
			return core.Errorf(core.CodeInvalidArgument, "input: %v", err)
		}
		if p := d.input.problems(v); p != nil {
			return core.NewError(core.CodeInvalidArgument, fmt.Sprintf("input does not match the inputSchema of workflow %q: %s; "+
				"workflow_describe shows the schema", d.ID, joinProblems(p))).WithDetail("errors", p).WithDetail("workflowId", d.ID)
		}
	}
	if missing := e.MissingTools(d); len(missing) > 0 {
		return core.NewError(CodeValidationError, fmt.Sprintf("workflow %q calls tools this server does not offer (in its mode): %v; "+
			"nothing ran", d.ID, missing)).WithDetail("missingTools", missing).WithDetail("workflowId", d.ID)
	}
	return nil
}

// abandoned is the run error of a run whose context ended.
func (e *Engine) abandoned(ctx context.Context, d *Definition, step string) *core.Error {
	cause := context.Cause(ctx)
	dl, hasDL := ctx.Deadline()
	if errors.Is(cause, errRunTimeout) || errors.Is(cause, context.DeadlineExceeded) || (hasDL && !e.clock.Now().Before(dl)) {
		msg := "the call's deadline passed"
		if errors.Is(cause, errRunTimeout) {
			msg = fmt.Sprintf("its timeout of %d ms passed", d.TimeoutMs)
		}
		return core.NewError(CodeWorkflowTimeout, fmt.Sprintf("workflow %q stopped at step %q: %s; "+
			"raise timeoutMs or the tool deadline, or give it less work", d.ID, step, msg)).WithDetail("step", step).WithRetryable(true)
	}
	return core.NewError(CodeWorkflowCancelled, fmt.Sprintf("workflow %q was cancelled at step %q", d.ID, step)).WithDetail("step", step)
}

// runStep runs one step with its retries, filling sr.
func (e *Engine) runStep(ctx context.Context, res *RunResult, s *Step, sc *scope, sr *StepResult) (any, error) {
	start := e.clock.Now()
	defer func() { sr.DurationMs = e.clock.Now().Sub(start).Milliseconds() }()
	fail := func(err error) (any, error) {
		ce := core.AsError(err)
		sr.Status, sr.Error = StepFailed, &RunError{Code: string(ce.Code), Message: ce.Message, Retryable: ce.Retryable}
		return nil, ce
	}
	rendered, err := render(s.input, sc)
	if err != nil {
		return fail(core.NewError(CodeTemplateError, "the step's input: "+err.Error()))
	}
	args, _ := rendered.(map[string]any) // the input template is an object
	cid := res.CorrelationID + "/" + s.ID
	backoff := DefaultBackoffMs
	if s.BackoffMs != nil {
		backoff = *s.BackoffMs
	}
	for attempt := 0; ; attempt++ {
		sr.Attempts = attempt + 1
		out, err := e.attempt(ctx, res, s, args, cid)
		if err == nil {
			sr.Status, sr.Output = StepSucceeded, out
			return out, nil
		}
		if attempt >= s.Retries || ctx.Err() != nil {
			return fail(err)
		}
		wait := time.Duration(min(backoff<<attempt, MaxBackoffMs)) * time.Millisecond
		if backoff<<attempt < 0 { // overflow
			wait = MaxBackoffMs * time.Millisecond
		}
		if !e.sleep(ctx, wait) {
			return fail(err)
		}
	}
}

// sleep waits d on the engine's clock; false when ctx ended first.
func (e *Engine) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	ch := make(chan struct{})
	t := e.clock.AfterFunc(d, func() { close(ch) })
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

type attemptResult struct {
	out any
	err error
}

// attempt runs one try of a step under its timeout. It returns when the
// step returns or when its time is up or the run is cancelled (a tool or
// agent that ignores its context runs on, detached).
func (e *Engine) attempt(ctx context.Context, res *RunResult, s *Step, args map[string]any, cid string) (any, error) {
	timeout := s.TimeoutMs
	if timeout == 0 {
		timeout = DefaultStepTimeoutMs
	}
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	t := e.clock.AfterFunc(time.Duration(timeout)*time.Millisecond, func() { cancel(errStepTimeout) })
	defer t.Stop()
	start := e.clock.Now()
	done := make(chan attemptResult, 1)
	go func() {
		out, err := core.Guard(func() (any, error) { return e.call(actx, s, args, cid) })
		if pe := (*core.PanicError)(nil); errors.As(err, &pe) {
			err = core.NewError(core.CodeInternal, fmt.Sprintf("step %q failed unexpectedly (it panicked: %v)", s.ID, pe.Value))
		}
		done <- attemptResult{out: out, err: err}
	}()
	var r attemptResult
	select {
	case r = <-done:
	case <-actx.Done():
		select {
		case r = <-done: // finished as time ran out: keep what it did
		default:
			r.err = context.Canceled
		}
	}
	if r.err != nil && actx.Err() != nil { // it failed because it was stopped
		if errors.Is(context.Cause(actx), errStepTimeout) {
			r.err = core.NewError(core.CodeTimeout, fmt.Sprintf("step %q did not finish within its timeout of %d ms", s.ID, timeout)).
				WithDetail("timeoutMs", timeout)
		} else {
			r.err = core.NewError(CodeWorkflowCancelled, fmt.Sprintf("step %q was stopped: the run ended (%v)", s.ID, context.Cause(actx)))
		}
	}
	if e.tracer != nil {
		name := s.Tool
		if s.Agent != "" {
			name = "agent:" + s.Agent
		}
		e.tracer.Step(StepEvent{RunID: e.ids.NewID(), WorkflowID: res.WorkflowID, Step: s.ID, Name: name, CorrelationID: cid,
			Start: start, Duration: e.clock.Now().Sub(start), Err: r.err, Output: r.out})
	}
	return r.out, r.err
}

// call runs the step's tool or agent once and returns its output as
// decoded JSON (numbers as json.Number).
func (e *Engine) call(ctx context.Context, s *Step, args map[string]any, cid string) (any, error) {
	inv, agents := e.runners()
	if s.Agent != "" {
		if agents == nil {
			return nil, core.NewError(CodeAgentsUnavailable, fmt.Sprintf("step %q runs agent %q, but agents are not available in this server "+
				"(no agent runner is installed); use a tool step, or run mcprt with the agent domain", s.ID, s.Agent))
		}
		out, err := agents.RunAgent(ctx, s.Agent, args)
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(out)
		if err != nil {
			return nil, core.Errorf(core.CodeInternal, "agent %q returned a value that cannot be encoded as JSON: %v", s.Agent, err)
		}
		return decodeOutput(raw)
	}
	if inv == nil {
		return nil, core.NewError(core.CodeNotFound, fmt.Sprintf("step %q calls tool %q, but no tool invoker is installed", s.ID, s.Tool))
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, core.Errorf(core.CodeInvalidArgument, "step %q: its input cannot be encoded as JSON: %v", s.ID, err)
	}
	out, err := inv.InvokeTool(ctx, ToolCall{Name: s.Tool, Args: raw, CorrelationID: cid})
	if err != nil {
		return nil, err
	}
	return decodeOutput(out)
}

// decodeOutput decodes a step's JSON output; empty is null.
func decodeOutput(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var v any
	if err := decodeJSON(raw, &v); err != nil {
		return nil, core.Errorf(core.CodeInternal, "the step's output is not JSON: %v", err)
	}
	return v, nil
}
