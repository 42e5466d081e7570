package domain

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcprt/mcprt/domain/workflow"
	"strings"

	"github.com/mcprt/mcprt/aacp"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/agent"
	"github.com/mcprt/mcprt/mcp"
	"github.com/mcprt/mcprt/tools/messaging"
)

// The agent resources and prompts.
const (
	URIAgentsAvailable = "agents://available"
	URIAgent           = "agents://id/{agentId}"
	PromptListAgents   = "list_agents"
	PromptRunAgent     = "run_agent"
)

// newAgents reads the agent profiles (a bad file is a *config.Error
// for agent.dir) and builds the agent service, connected to nothing yet.
func newAgents(cfg config.Domain, dataDir string, opts Options) (*agent.Service, error) {
	dir := cfg.AgentsDir(dataDir)
	profiles, err := agent.LoadDir(dir)
	if err != nil {
		source := "file or env"
		if cfg.Agent.Dir == "" {
			source = "default"
		}
		return nil, &config.Error{Key: "agent.dir", Env: config.EnvName("agent.dir"), Value: dir,
			Allowed: "a directory of valid agent profiles (*.json), or one that does not exist", Source: source,
			Reason: core.AsError(err).Message}
	}
	svc, err := agent.NewService(agent.Options{Profiles: profiles, DefaultMaxDepth: cfg.Agent.MaxDelegationDepth,
		Clock: opts.Clock, IDs: opts.IDs})
	if err != nil {
		return nil, fmt.Errorf("domain: the agent service: %w", err)
	}
	return svc, nil
}

// Agents returns the agent service: the workflow engine's agent runner
// (RunAgent), and where a workflow runner is connected
// (SetWorkflowRunner).
func (d *Domain) Agents() *agent.Service { return d.agents }

// ConnectAgents gives agent_list, agent_get and agent_run the in-process
// agents of coord and the agents registered for messaging through
// messaging; either may be nil. Delegation acts as the agent
// agent.DelegatorID(messaging.AgentID()), registered by the first
// delegated run. Call it before serving.
func (d *Domain) ConnectAgents(coord *aacp.Coordinator, messaging *messaging.Service) error {
	if coord != nil {
		d.agents.SetCoordinator(coord)
	}
	if messaging == nil {
		return nil
	}
	m, err := agent.NewMessaging(agent.MessagingOptions{AgentID: agent.DelegatorID(messaging.AgentID()),
		Open: func(create bool) (agent.Mailbox, error) {
			b, err := messaging.Broker(create)
			if b == nil || err != nil {
				return nil, err // never a typed nil
			}
			return b, nil
		}})
	if err != nil {
		return fmt.Errorf("domain: connect agent messaging: %w", err)
	}
	d.agents.SetMessaging(m)
	return nil
}

// addAgentTools registers agent_list, agent_get and agent_run (with the
// deadline agent.runTimeoutMs).
func (d *Domain) addAgentTools(r *registrar) {
	at := agent.NewTools(d.agents)
	add(r, "agent_list", at.List)
	add(r, "agent_get", at.Get)
	addTimed(r, "agent_run", d.runTimeout, d.tracedRun(at.Run))
}

// tracedRun records, with tracing on, an agent run handed to an in-process
// agent or delegated over messaging as a step nested in the agent_run
// call's trace (correlation id T/agentId; a workflow run records its own
// steps under T/workflowId).
func (d *Domain) tracedRun(run func(context.Context, agent.RunInput) (agent.RunOutput, error)) func(context.Context, agent.RunInput) (agent.RunOutput, error) {
	if d.recorder == nil {
		return run
	}
	tracer := &stepTracer{rec: d.recorder, serverID: d.serverID}
	return func(ctx context.Context, in agent.RunInput) (agent.RunOutput, error) {
		start := d.clock.Now()
		out, err := run(ctx, in)
		cid := mcp.CorrelationID(ctx)
		if cid == "" || out.Runner == agent.RunnerWorkflow || in.AgentID == "" || strings.Contains(in.AgentID, "/") {
			return out, err
		}
		name := "agent:" + in.AgentID
		if out.TaskID != "" {
			name += " (task " + out.TaskID + ")"
		}
		tracer.Step(workflow.StepEvent{RunID: out.TaskID, Name: name, CorrelationID: cid + "/" + in.AgentID,
			Start: start, Duration: d.clock.Now().Sub(start), Err: err, Output: out.Output})
		return out, err
	}
}

// registerAgentExtras adds agents://available (with agent_list),
// agents://id/{agentId} (with agent_get), and the prompts list_agents
// (with agent_list) and run_agent (with agent_run).
func (d *Domain) registerAgentExtras(srv *mcp.Server, admitted map[string]bool) error {
	at := agent.NewTools(d.agents)
	if admitted["agent_list"] {
		err := srv.AddResource(mcp.Resource{URI: URIAgentsAvailable, Name: "available-agents", Title: "Available agents",
			Description: "The first 100 known agents (profiles, in-process, messaging) with their details, and how many there are",
			MIMEType:    mimeJSON},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				out, err := at.List(ctx, agent.ListInput{Limit: maxCompletionItems})
				return jsonResult(req.URI, out, err)
			})
		if err == nil {
			err = srv.AddPrompt(mcp.Prompt{Name: PromptListAgents, Title: "List agents",
				Description: "Ask the model to list the available agents with agent_list and say what each can do",
				Arguments: []mcp.PromptArgument{
					{Name: "team", Title: "Team", Description: "Only the agents of this team"},
					{Name: "enabled", Title: "Enabled", Description: "true or false: only enabled or disabled agents"}},
			}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				args := "no filter"
				if team := req.Arguments["team"]; team != "" {
					args = "team " + quote(team)
				}
				if en := req.Arguments["enabled"]; en != "" {
					if en != "true" && en != "false" {
						return nil, core.Errorf(core.CodeInvalidArgument, "enabled is %s; give true or false", quote(en))
					}
					if args == "no filter" {
						args = "enabled " + en
					} else {
						args += " and enabled " + en
					}
				}
				return userPrompt("List the available agents",
					"Call the agent_list tool with "+args+", then present the agents: their id, display name, team, "+
						"what they can do (description and capabilities), whether they are enabled and where they come from."), nil
			})
		}
		if err != nil {
			return err
		}
	}
	if admitted["agent_get"] {
		err := srv.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: URIAgent, Name: "agent", Title: "Agent",
			Description: "One agent: its profile, where it is known from and its delegation depth limit", MIMEType: mimeJSON,
			Complete: d.completeAgents},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				out, err := at.Get(ctx, agent.IDInput{AgentID: req.Variables["agentId"]})
				var ce *core.Error
				if errors.As(err, &ce) && ce.Code == agent.CodeAgentNotFound {
					err = core.NewError(core.CodeNotFound, ce.Message).WithDetail("agentId", ce.Details["agentId"])
				}
				return jsonResult(req.URI, out, err)
			})
		if err != nil {
			return err
		}
	}
	if admitted["agent_run"] {
		err := srv.AddPrompt(mcp.Prompt{Name: PromptRunAgent, Title: "Run agent",
			Description: "Ask the model to run an agent on a task with agent_run and report its output",
			Arguments: []mcp.PromptArgument{
				{Name: "agentId", Title: "Agent id", Required: true, Description: "The agent to run (agent_list or agents://available shows them)"},
				{Name: "task", Title: "Task", Description: "What the agent should do, in words"},
				{Name: "input", Title: "Input", Description: "JSON object input for the agent"}},
			Complete: d.completeAgents,
		}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			id := req.Arguments["agentId"]
			text := "Call the agent_run tool with agentId " + quote(id)
			if task := req.Arguments["task"]; task != "" {
				text += ", task " + quote(task)
			}
			if in := req.Arguments["input"]; in != "" {
				text += " and input " + in + " (a JSON object)"
			}
			return userPrompt("Run agent "+quote(id),
				text+", then report the agent's output, or the error code and what it means if the run failed."), nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// completeAgents proposes the ids of the known agents.
func (d *Domain) completeAgents(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	if req.Argument != "agentId" {
		return completions(nil, ""), nil
	}
	all, err := d.agents.Agents(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(all))
	for i, a := range all {
		ids[i] = a.AgentID
	}
	return completions(ids, req.Value), nil
}
