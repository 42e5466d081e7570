package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/aacp"
	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/core"
)

// The error codes of the agent tools, besides core's.
const (
	CodeAgentNotFound    core.Code = "AGENT_NOT_FOUND"
	CodePermissionDenied core.Code = "AGENT_PERMISSION_DENIED"
	CodeStageFailed      core.Code = "AGENT_STAGE_FAILED"
	CodeDepthExceeded    core.Code = "AGENT_DELEGATION_DEPTH_EXCEEDED"
)

// Where an agent is known from.
const (
	SourceProfile   = "profile"
	SourceInProcess = "in-process"
	SourceMessaging = "messaging"
)

// How a run was carried out.
const (
	RunnerWorkflow  = "workflow"
	RunnerMessaging = "messaging"
	RunnerInProcess = "in-process"
)

// RunMessageType is the type of the message an in-process agent receives
// for agent_run: payload {input, task?, sessionId?, delegation: {depth}}.
const RunMessageType = "agent_run"

// Coordinator is the part of *aacp.Coordinator the service uses.
type Coordinator interface {
	AgentIDs() []string
	SendMessage(ctx context.Context, target string, msg aacp.Message) (any, error)
}

var _ Coordinator = (*aacp.Coordinator)(nil)

// WorkflowRunner runs a workflow by id (the workflow domain's engine).
type WorkflowRunner interface {
	RunWorkflow(ctx context.Context, workflowID string, input map[string]any) (any, error)
}

// Options configure NewService.
type Options struct {
	// Profiles are the agents' profiles (LoadDir reads them).
	Profiles []Profile
	// DefaultMaxDepth is the depth limit of agents whose profile sets
	// none, and of agents without one; 0 means DefaultMaxDelegationDepth.
	DefaultMaxDepth int
	// Clock times runs; nil means the system clock.
	Clock core.Clock
	// IDs names tasks; nil means UUID v4.
	IDs core.IDGenerator
}

// Service is the agent catalogue and runner: profiles, in-process agents
// and agents registered for messaging, merged by id. The coordinator, the
// workflow runner and messaging are connected with setters, at any time;
// each may stay nil. Safe for concurrent use.
type Service struct {
	profiles map[string]Profile
	defDepth int
	clock    core.Clock
	ids      core.IDGenerator

	mu        sync.RWMutex
	coord     Coordinator    // guarded by mu
	workflows WorkflowRunner // guarded by mu
	messaging *Messaging     // guarded by mu
}

// NewService returns a Service over opts. The profiles must have distinct
// ids and pass Check; the default depth must be 0 to MaxDelegationDepth.
func NewService(opts Options) (*Service, error) {
	if opts.DefaultMaxDepth == 0 {
		opts.DefaultMaxDepth = DefaultMaxDelegationDepth
	}
	if opts.DefaultMaxDepth < 0 || opts.DefaultMaxDepth > MaxDelegationDepth {
		return nil, core.Errorf(core.CodeInvalidArgument, "the default delegation depth is %d; give 1 to %d", opts.DefaultMaxDepth, MaxDelegationDepth)
	}
	if opts.Clock == nil {
		opts.Clock = core.SystemClock{}
	}
	if opts.IDs == nil {
		opts.IDs = &core.UUIDGenerator{}
	}
	s := &Service{profiles: map[string]Profile{}, defDepth: opts.DefaultMaxDepth, clock: opts.Clock, ids: opts.IDs}
	for _, p := range opts.Profiles {
		if err := Check(p); err != nil {
			return nil, fmt.Errorf("agent profile %q: %w", p.AgentID, err)
		}
		if _, dup := s.profiles[p.AgentID]; dup {
			return nil, core.Errorf(core.CodeInvalidArgument, "two profiles have agentId %q; give each its own", p.AgentID)
		}
		s.profiles[p.AgentID] = p
	}
	return s, nil
}

// SetCoordinator connects the in-process agents (nil disconnects them).
func (s *Service) SetCoordinator(c Coordinator) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.coord = c
}

// SetWorkflowRunner connects the workflow engine that runs the profiles
// naming a workflowId (nil disconnects it).
func (s *Service) SetWorkflowRunner(r WorkflowRunner) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.workflows = r
}

// SetMessaging connects durable messaging (nil disconnects it).
func (s *Service) SetMessaging(m *Messaging) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.messaging = m
}

func (s *Service) connected() (Coordinator, WorkflowRunner, *Messaging) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.coord, s.workflows, s.messaging
}

// DefaultMaxDepth is the depth limit of agents whose profile sets none.
func (s *Service) DefaultMaxDepth() int { return s.defDepth }

// Info is one agent as the catalogue knows it.
type Info struct {
	AgentID string
	// Sources are where the agent is known from, in the order profile,
	// in-process, messaging.
	Sources []string
	// Profile is the agent's profile, nil without one.
	Profile *Profile
	// Messaging is the agent's messaging registration, nil without one.
	Messaging *broker.AgentInfo
	// MaxDepth is the agent's delegation depth limit.
	MaxDepth int
}

// Enabled reports whether the agent may run: a profile may disable it.
func (i Info) Enabled() bool { return i.Profile == nil || i.Profile.IsEnabled() }

// Capabilities are the profile's capabilities, else the messaging
// registration's.
func (i Info) Capabilities() []string {
	if i.Profile != nil && len(i.Profile.Capabilities) > 0 {
		return i.Profile.Capabilities
	}
	if i.Messaging != nil {
		return i.Messaging.Capabilities
	}
	return nil
}

// Agents returns every known agent, sorted by id (byte order).
func (s *Service) Agents(ctx context.Context) ([]Info, error) {
	coord, _, msg := s.connected()
	byID := map[string]*Info{}
	get := func(id string) *Info {
		if byID[id] == nil {
			byID[id] = &Info{AgentID: id}
		}
		return byID[id]
	}
	for id := range s.profiles {
		p := s.profiles[id]
		get(id).Profile = &p
	}
	if coord != nil {
		for _, id := range coord.AgentIDs() {
			get(id).Sources = append(get(id).Sources, SourceInProcess)
		}
	}
	if msg != nil {
		regs, err := msg.Agents(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range regs {
			if r.AgentID == msg.AgentID() || slices.Contains(r.Capabilities, DelegatorCapability) {
				continue // a process's delegating agent, not one to run
			}
			get(r.AgentID).Messaging = &r
		}
	}
	out := make([]Info, 0, len(byID))
	for _, i := range byID {
		var src []string
		if i.Profile != nil {
			src = append(src, SourceProfile)
		}
		src = append(src, i.Sources...)
		if i.Messaging != nil {
			src = append(src, SourceMessaging)
		}
		i.Sources = src
		i.MaxDepth = s.defDepth
		if i.Profile != nil {
			i.MaxDepth = i.Profile.DepthLimit(s.defDepth)
		}
		out = append(out, *i)
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.AgentID, b.AgentID) })
	return out, nil
}

// Get returns the agent id, or AGENT_NOT_FOUND naming some known agents.
func (s *Service) Get(ctx context.Context, id string) (Info, error) {
	all, err := s.Agents(ctx)
	if err != nil {
		return Info{}, err
	}
	if i, ok := slices.BinarySearchFunc(all, id, func(a Info, id string) int { return strings.Compare(a.AgentID, id) }); ok {
		return all[i], nil
	}
	known := make([]string, 0, 10)
	for _, a := range all[:min(len(all), 10)] {
		known = append(known, a.AgentID)
	}
	hint := "no agents are known"
	if len(known) > 0 {
		hint = "known agents: " + strings.Join(known, ", ")
		if len(all) > len(known) {
			hint += fmt.Sprintf(" and %d more (agent_list shows them)", len(all)-len(known))
		}
	}
	return Info{}, core.Errorf(CodeAgentNotFound, "no agent %q: no profile in the agents directory (agent.dir), in-process agent or messaging registration has that id; %s", clip(id), hint).
		WithDetail("agentId", clip(id))
}

// clip shortens a caller's id for messages.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// depthKey carries the delegation depth of a run in its context.
type depthKey struct{}

// WithDepth returns ctx carrying delegation depth d: what an agent runs
// while running at depth d-1. Run uses it for the workflows and the
// in-process agents it starts, so their nested runs count.
func WithDepth(ctx context.Context, d int) context.Context {
	return context.WithValue(ctx, depthKey{}, d)
}

// DepthOf is the delegation depth ctx carries (0 when none).
func DepthOf(ctx context.Context) int {
	d, _ := ctx.Value(depthKey{}).(int)
	return d
}

// RunRequest is what Run runs.
type RunRequest struct {
	AgentID string
	Input   map[string]any
	// Task describes the task in words (the TASK_ASSIGNMENT's
	// taskDescription); optional.
	Task      string
	SessionID string
	// Depth is how many delegations led to this run; the larger of it and
	// the depth ctx carries counts.
	Depth int
}

// RunResult is how a run ended well.
type RunResult struct {
	AgentID string
	// Runner is RunnerWorkflow, RunnerMessaging or RunnerInProcess.
	Runner string
	// TaskID names the delegated task (messaging only).
	TaskID string
	Depth  int
	Output any
	// Duration is the run's duration on the service's clock.
	Duration time.Duration
}

// Run runs an agent: a profile naming a workflowId runs that workflow;
// otherwise an agent registered for messaging gets the task delegated
// (TASK_ASSIGNMENT, then its TASK_UPDATE); otherwise an in-process agent
// gets a RunMessageType message. Errors: AGENT_NOT_FOUND,
// AGENT_PERMISSION_DENIED (the profile is disabled),
// AGENT_DELEGATION_DEPTH_EXCEEDED (the run's depth is over the agent's
// limit), AGENT_STAGE_FAILED (the agent or workflow reported failure),
// TIMEOUT (ctx's deadline came first), NOT_IMPLEMENTED (a workflow but no
// workflow engine).
func (s *Service) Run(ctx context.Context, req RunRequest) (RunResult, error) {
	depth := max(req.Depth, DepthOf(ctx))
	if depth < 0 || depth > MaxDelegationDepth {
		return RunResult{}, core.Errorf(core.CodeInvalidArgument, "delegationDepth is %d; give 0 to %d", depth, MaxDelegationDepth)
	}
	a, err := s.Get(ctx, req.AgentID)
	if err != nil {
		return RunResult{}, err
	}
	if !a.Enabled() {
		return RunResult{}, core.Errorf(CodePermissionDenied, "agent %q is disabled by its profile (%s); set \"enabled\": true there to run it", a.AgentID, a.Profile.Source).
			WithDetail("agentId", a.AgentID)
	}
	if depth > a.MaxDepth {
		return RunResult{}, core.Errorf(CodeDepthExceeded, "agent %q may run at delegation depth %d at most, and this run is at depth %d; run it more directly, or raise orchestration.maxDelegationDepth in its profile (default agent.maxDelegationDepth)", a.AgentID, a.MaxDepth, depth).
			WithDetail("agentId", a.AgentID).WithDetail("depth", depth).WithDetail("limit", a.MaxDepth)
	}
	coord, workflows, msg := s.connected()
	res := RunResult{AgentID: a.AgentID, Depth: depth}
	start := s.clock.Now()
	input := req.Input
	if input == nil {
		input = map[string]any{}
	}
	switch {
	case a.Profile != nil && a.Profile.WorkflowID != "":
		res.Runner = RunnerWorkflow
		if workflows == nil {
			return RunResult{}, core.Errorf(core.CodeNotImplemented, "agent %q runs workflow %q, but no workflow engine is connected to this server", a.AgentID, a.Profile.WorkflowID)
		}
		res.Output, err = workflows.RunWorkflow(WithDepth(ctx, depth+1), a.Profile.WorkflowID, input)
		err = failed(ctx, err, fmt.Sprintf("workflow %q of agent %q", a.Profile.WorkflowID, a.AgentID))
	case a.Messaging != nil && msg != nil:
		res.Runner, res.TaskID = RunnerMessaging, s.ids.NewID()
		var u TaskUpdate
		u, err = msg.Delegate(ctx, a.AgentID, Task{ID: res.TaskID, Description: req.Task, Input: input, SessionID: req.SessionID,
			Depth: depth + 1, MaxDepth: a.MaxDepth})
		if err == nil && len(u.Output) > 0 {
			err = json.Unmarshal(u.Output, &res.Output)
		}
	case slices.Contains(a.Sources, SourceInProcess) && coord != nil:
		res.Runner = RunnerInProcess
		payload := map[string]any{"input": input, "delegation": map[string]any{"depth": depth + 1}}
		if req.Task != "" {
			payload["task"] = req.Task
		}
		if req.SessionID != "" {
			payload["sessionId"] = req.SessionID
		}
		var raw []byte
		if raw, err = json.Marshal(payload); err != nil {
			return RunResult{}, core.Errorf(core.CodeInvalidArgument, "the input for agent %q cannot be encoded as JSON: %v", a.AgentID, err)
		}
		res.Output, err = coord.SendMessage(WithDepth(ctx, depth+1), a.AgentID, aacp.Message{Type: RunMessageType, Payload: raw})
		err = failed(ctx, err, fmt.Sprintf("in-process agent %q", a.AgentID))
	default:
		return RunResult{}, core.Errorf(core.CodeNotImplemented, "agent %q has a profile but nothing can run it: it names no workflowId, is not registered for messaging (aacp_register_agent) and is no in-process agent", a.AgentID).
			WithDetail("agentId", a.AgentID)
	}
	if err != nil {
		return RunResult{}, err
	}
	res.Duration = s.clock.Now().Sub(start)
	return res, nil
}

// failed classifies what a workflow or in-process agent returned: a
// *core.Error keeps its code, ctx's end is TIMEOUT or its cause, anything
// else is AGENT_STAGE_FAILED.
func failed(ctx context.Context, err error, what string) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return waitEnded(ctx, what+" did not finish")
	}
	var ce *core.Error
	if errors.As(err, &ce) {
		return err
	}
	return core.Errorf(CodeStageFailed, "%s failed: %v", what, err)
}

// RunAgent runs agentID on input and returns its output: the workflow
// domain's agent runner. Depth travels in ctx (WithDepth).
func (s *Service) RunAgent(ctx context.Context, agentID string, input map[string]any) (any, error) {
	res, err := s.Run(ctx, RunRequest{AgentID: agentID, Input: input})
	if err != nil {
		return nil, err
	}
	return res.Output, nil
}

// Close stops delegation's receiving goroutine, if any.
func (s *Service) Close() {
	_, _, msg := s.connected()
	if msg != nil {
		msg.Close()
	}
}
