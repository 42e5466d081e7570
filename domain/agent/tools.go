package agent

import (
	"context"
	"slices"

	"github.com/mcprt/mcprt/domain/internal/check"
	"github.com/mcprt/mcprt/domain/toolspec"
)

// Bounds of agent_list.
const (
	// MaxListedIDs bounds agentIds (as the built-in agent_list always did).
	MaxListedIDs = 1000
	// DefaultListLimit and MaxListLimit bound agents.
	DefaultListLimit, MaxListLimit = 50, 1000
)

// Tools holds the typed handlers of agent_list, agent_get and agent_run,
// each a func(ctx, In) (Out, error) ready for mcp.AddTypedTool.
type Tools struct{ svc *Service }

// NewTools returns the tool handlers over svc.
func NewTools(svc *Service) *Tools { return &Tools{svc: svc} }

// ToolSpecs returns the names, descriptions and annotations of the agent
// tools.
func ToolSpecs() []toolspec.Spec {
	return []toolspec.Spec{
		{Name: "agent_list", Title: "List agents", Description: "List known agents (profiles, in-process, messaging): every matching id in agentIds (at most 1000), details of the first `limit` in agents.",
			ReadOnly: true, Idempotent: true},
		{Name: "agent_get", Title: "Describe an agent", Description: "Show one agent: its profile (role, expertise, capabilities, team, workflow), where it is known from and its delegation depth limit.",
			ReadOnly: true, Idempotent: true},
		{Name: "agent_run", Title: "Run an agent", Description: "Run an agent on an input and wait for its output: a profile's workflow runs here; a messaging agent gets a TASK_ASSIGNMENT and answers with a TASK_UPDATE; an in-process agent gets a message."},
	}
}

// ListInput is the input of agent_list.
type ListInput struct {
	Team       string `json:"team,omitempty"`
	Enabled    *bool  `json:"enabled,omitempty"`
	Capability string `json:"capability,omitempty"`
	Source     string `json:"source,omitempty" jsonschema:"profile, in-process or messaging"`
	Limit      int    `json:"limit,omitempty" jsonschema:"1-1000, default 50"`
}

// ListItem is one agent of agent_list.
type ListItem struct {
	AgentID      string   `json:"agentId" jsonschema:"The agent's id"`
	DisplayName  string   `json:"displayName,omitempty" jsonschema:"Its display name"`
	Description  string   `json:"description" jsonschema:"What it does (empty without a profile)"`
	Team         string   `json:"team,omitempty" jsonschema:"Its team"`
	Enabled      bool     `json:"enabled" jsonschema:"Whether agent_run may run it"`
	Capabilities []string `json:"capabilities,omitempty" jsonschema:"What it can do"`
	Sources      []string `json:"sources" jsonschema:"Where it is known from: profile, in-process, messaging"`
	Online       *bool    `json:"online,omitempty" jsonschema:"For an agent registered for messaging: whether some process hosts it now"`
}

// ListOutput is the result of agent_list.
type ListOutput struct {
	AgentIDs  []string   `json:"agentIds" jsonschema:"Ids of the matching agents, sorted by byte order, at most 1000"`
	Truncated bool       `json:"truncated" jsonschema:"True when more than 1000 agents match"`
	Agents    []ListItem `json:"agents" jsonschema:"The first limit matching agents, described"`
	Total     int        `json:"total" jsonschema:"How many agents match"`
}

// List is the agent_list handler.
func (t *Tools) List(ctx context.Context, in ListInput) (ListOutput, error) {
	limit, err := check.Limit("limit", in.Limit, DefaultListLimit, MaxListLimit)
	if err != nil {
		return ListOutput{}, err
	}
	switch in.Source {
	case "", SourceProfile, SourceInProcess, SourceMessaging:
	default:
		return ListOutput{}, check.Invalid("source", "is %q; give profile, in-process or messaging", in.Source)
	}
	all, err := t.svc.Agents(ctx)
	if err != nil {
		return ListOutput{}, err
	}
	out := ListOutput{AgentIDs: []string{}, Agents: []ListItem{}}
	for _, a := range all {
		if !Match(a, Filter{Team: in.Team, Enabled: in.Enabled, Capability: in.Capability, Source: in.Source}) {
			continue
		}
		out.Total++
		if len(out.AgentIDs) < MaxListedIDs {
			out.AgentIDs = append(out.AgentIDs, a.AgentID)
		} else {
			out.Truncated = true
		}
		if len(out.Agents) < limit {
			out.Agents = append(out.Agents, item(a))
		}
	}
	return out, nil
}

// Filter selects agents; zero fields select all.
type Filter struct {
	Team       string
	Enabled    *bool
	Capability string
	Source     string
}

// Match reports whether a passes f.
func Match(a Info, f Filter) bool {
	team := ""
	if a.Profile != nil {
		team = a.Profile.Team
	}
	return (f.Team == "" || team == f.Team) &&
		(f.Enabled == nil || a.Enabled() == *f.Enabled) &&
		(f.Capability == "" || slices.Contains(a.Capabilities(), f.Capability)) &&
		(f.Source == "" || slices.Contains(a.Sources, f.Source))
}

func item(a Info) ListItem {
	it := ListItem{AgentID: a.AgentID, Enabled: a.Enabled(), Capabilities: a.Capabilities(), Sources: a.Sources}
	if p := a.Profile; p != nil {
		it.DisplayName, it.Description, it.Team = p.DisplayName, p.Description, p.Team
	}
	if a.Messaging != nil {
		online := a.Messaging.Online
		it.Online = &online
	}
	return it
}

// IDInput is the input of agent_get.
type IDInput struct {
	AgentID string `json:"agentId" jsonschema:"From agent_list"`
}

// OrchestrationOutput is a profile's orchestration section.
type OrchestrationOutput struct {
	MaxDelegationDepth int      `json:"maxDelegationDepth" jsonschema:"The deepest delegation at which the agent may run (the profile's, or the default)"`
	CanReadWorkspaces  []string `json:"canReadWorkspaces,omitempty" jsonschema:"Workspaces it may read"`
	CanWriteToShared   bool     `json:"canWriteToShared" jsonschema:"Whether it may write to shared workspaces"`
}

// MessagingOutput is an agent's messaging registration.
type MessagingOutput struct {
	Type            string `json:"type" jsonschema:"Manager, Implementation or AdHoc"`
	ProtocolVersion string `json:"protocolVersion" jsonschema:"The negotiated protocol version"`
	Online          bool   `json:"online" jsonschema:"Whether some process hosts it now"`
	RegisteredAt    string `json:"registeredAt" jsonschema:"When it was registered (RFC 3339, UTC)"`
}

// GetOutput is the result of agent_get.
type GetOutput struct {
	AgentID       string              `json:"agentId" jsonschema:"The agent's id"`
	DisplayName   string              `json:"displayName,omitempty" jsonschema:"Its display name"`
	Version       string              `json:"version,omitempty" jsonschema:"Its profile's version"`
	Description   string              `json:"description" jsonschema:"What it does (empty without a profile)"`
	Role          string              `json:"role,omitempty" jsonschema:"Its role"`
	Expertise     []string            `json:"expertise,omitempty" jsonschema:"Its fields of expertise"`
	Capabilities  []string            `json:"capabilities,omitempty" jsonschema:"What it can do"`
	Team          string              `json:"team,omitempty" jsonschema:"Its team"`
	Tags          []string            `json:"tags,omitempty" jsonschema:"Free-form tags"`
	Enabled       bool                `json:"enabled" jsonschema:"Whether agent_run may run it"`
	WorkflowID    string              `json:"workflowId,omitempty" jsonschema:"The workflow agent_run runs for it"`
	Workflow      []Step              `json:"workflow,omitempty" jsonschema:"Its workflow's steps, as the profile describes them"`
	Orchestration OrchestrationOutput `json:"orchestration" jsonschema:"Delegation limits"`
	Sources       []string            `json:"sources" jsonschema:"Where it is known from: profile, in-process, messaging"`
	Messaging     *MessagingOutput    `json:"messaging,omitempty" jsonschema:"Its messaging registration, when it has one"`
}

// Get is the agent_get handler.
func (t *Tools) Get(ctx context.Context, in IDInput) (GetOutput, error) {
	if err := check.Text("agentId", in.AgentID, 256, true); err != nil {
		return GetOutput{}, err
	}
	a, err := t.svc.Get(ctx, in.AgentID)
	if err != nil {
		return GetOutput{}, err
	}
	return Describe(a), nil
}

// Describe is a as agent_get shows it.
func Describe(a Info) GetOutput {
	out := GetOutput{AgentID: a.AgentID, Enabled: a.Enabled(), Capabilities: a.Capabilities(), Sources: a.Sources,
		Orchestration: OrchestrationOutput{MaxDelegationDepth: a.MaxDepth}}
	if p := a.Profile; p != nil {
		out.DisplayName, out.Version, out.Description, out.Role = p.DisplayName, p.Version, p.Description, p.Role
		out.Expertise, out.Team, out.Tags, out.WorkflowID, out.Workflow = p.Expertise, p.Team, p.Tags, p.WorkflowID, p.Workflow
		if o := p.Orchestration; o != nil {
			out.Orchestration.CanReadWorkspaces, out.Orchestration.CanWriteToShared = o.CanReadWorkspaces, o.CanWriteToShared
		}
	}
	if m := a.Messaging; m != nil {
		out.Messaging = &MessagingOutput{Type: string(m.Type), ProtocolVersion: m.ProtocolVersion, Online: m.Online,
			RegisteredAt: check.Stamp(m.RegisteredAt)}
	}
	return out
}

// RunInput is the input of agent_run.
type RunInput struct {
	AgentID         string         `json:"agentId" jsonschema:"From agent_list"`
	Input           map[string]any `json:"input,omitempty"`
	Task            string         `json:"task,omitempty" jsonschema:"What to do, in words"`
	SessionID       string         `json:"sessionId,omitempty"`
	DelegationDepth int            `json:"delegationDepth,omitempty" jsonschema:"0-16: a delegated task passes its TASK_ASSIGNMENT's context.delegation.depth"`
}

// RunOutput is the result of agent_run.
type RunOutput struct {
	Success         bool   `json:"success" jsonschema:"Always true: failures are tool errors"`
	AgentID         string `json:"agentId" jsonschema:"The agent run"`
	SessionID       string `json:"sessionId,omitempty" jsonschema:"The session given"`
	Runner          string `json:"runner" jsonschema:"How it ran: workflow, messaging or in-process"`
	TaskID          string `json:"taskId,omitempty" jsonschema:"The delegated task's id (messaging)"`
	Depth           int    `json:"depth" jsonschema:"The delegation depth of this run"`
	Output          any    `json:"output,omitempty" jsonschema:"What the agent returned"`
	TotalDurationMs int64  `json:"totalDurationMs" jsonschema:"How long the run took, in milliseconds"`
}

// Run is the agent_run handler.
func (t *Tools) Run(ctx context.Context, in RunInput) (RunOutput, error) {
	for _, f := range []struct {
		name, value string
		max         int
		required    bool
	}{{"agentId", in.AgentID, 256, true}, {"task", in.Task, maxLong, false}, {"sessionId", in.SessionID, maxShort, false}} {
		if err := check.Text(f.name, f.value, f.max, f.required); err != nil {
			return RunOutput{}, err
		}
	}
	if in.DelegationDepth < 0 || in.DelegationDepth > MaxDelegationDepth {
		return RunOutput{}, check.Invalid("delegationDepth", "is %d; give 0 to %d", in.DelegationDepth, MaxDelegationDepth)
	}
	res, err := t.svc.Run(ctx, RunRequest{AgentID: in.AgentID, Input: in.Input, Task: in.Task, SessionID: in.SessionID,
		Depth: in.DelegationDepth})
	if err != nil {
		return RunOutput{}, err
	}
	return RunOutput{Success: true, AgentID: res.AgentID, SessionID: in.SessionID, Runner: res.Runner, TaskID: res.TaskID,
		Depth: res.Depth, Output: res.Output, TotalDurationMs: res.Duration.Milliseconds()}, nil
}
