package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/mcprt/mcprt/aacp"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// MaxListedAgents bounds the ids agent_list returns; with more agents it
// returns the first MaxListedAgents in sorted order and truncated true.
const MaxListedAgents = 1000

// agentListResult is agent_list's result.
type agentListResult struct {
	AgentIDs  []string `json:"agentIds"`
	Truncated bool     `json:"truncated"`
}

// agentStateResult is agent_get_state's result.
type agentStateResult struct {
	AgentID   string         `json:"agentId"`
	State     map[string]any `json:"state"`
	Truncated bool           `json:"truncated"`
}

// agentTools returns agent_send_message, agent_list and agent_get_state,
// all talking to agents.
func agentTools(srv *mcp.Server, agents *aacp.Coordinator) []mcp.Tool {
	cfg := srv.Config()
	redactor := core.NewRedactor(cfg.Logging.RedactKeys)
	maxState := cfg.Tools.MaxStateBytes
	return []mcp.Tool{
		{
			Name:  "agent_send_message",
			Title: "Send a message to an agent",
			Description: "Sends {type, payload} to the in-process agent targetAgentId and returns the agent's " +
				"response as the agent gave it. Each agent handles its messages one at a time in arrival " +
				"order. Errors: NOT_FOUND when no such agent is registered (see agent_list), " +
				"RESOURCE_EXHAUSTED when its queue is full (retry with backoff) or the message is too large.",
			InputSchema: agentSendMessageInput,
			Annotations: &mcp.ToolAnnotations{Title: "Send a message to an agent", ReadOnlyHint: mcp.Bool(false),
				DestructiveHint: mcp.Bool(false), IdempotentHint: mcp.Bool(false), OpenWorldHint: mcp.Bool(false)},
			Handler: func(ctx context.Context, args json.RawMessage) (any, error) {
				return proxyToAgent(ctx, agents, args)
			},
		},
		{
			Name:  "agent_list",
			Title: "List agents",
			Description: fmt.Sprintf("Lists the ids of the registered in-process agents: {agentIds, truncated}, "+
				"agentIds sorted by byte order. At most %d ids are returned; truncated is true when there are more.",
				MaxListedAgents),
			InputSchema:  emptyInput,
			OutputSchema: agentListOutput,
			Annotations:  readOnly("List agents"),
			Handler: func(context.Context, json.RawMessage) (any, error) {
				ids := agents.AgentIDs()
				if ids == nil {
					ids = []string{}
				}
				res := agentListResult{AgentIDs: ids}
				if len(ids) > MaxListedAgents {
					res.AgentIDs, res.Truncated = ids[:MaxListedAgents], true
				}
				return res, nil
			},
		},
		{
			Name:  "agent_get_state",
			Title: "Read an agent's state",
			Description: fmt.Sprintf("Returns {agentId, state, truncated}: the agent's state map as it was after its "+
				"last finished message, with the values of secret-looking keys (logging.redactKeys) replaced "+
				"by \"[REDACTED]\". The state's JSON is bounded by tools.maxStateBytes (%d bytes here): a larger "+
				"state keeps only its first keys in sorted order that fit, and truncated is true. "+
				"NOT_FOUND when no such agent is registered.", maxState),
			InputSchema:  agentGetStateInput,
			OutputSchema: agentGetStateOutput,
			Annotations:  readOnly("Read an agent's state"),
			Handler: func(_ context.Context, args json.RawMessage) (any, error) {
				var in struct {
					AgentID string `json:"agentId"`
				}
				if err := json.Unmarshal(args, &in); err != nil {
					return nil, badArguments(err)
				}
				st, err := agents.AgentState(in.AgentID)
				if err != nil {
					return nil, err
				}
				red, _ := redactor.Redact(map[string]any(st)).(map[string]any)
				bounded, truncated, err := boundState(red, maxState)
				if err != nil {
					return nil, core.Errorf(core.CodeInternal, "cannot encode the state of agent %q: %v", in.AgentID, err)
				}
				return agentStateResult{AgentID: in.AgentID, State: bounded, Truncated: truncated}, nil
			},
		},
	}
}

// boundState returns st when its JSON is at most limit bytes. Otherwise it
// returns the longest prefix of st's keys, in sorted order, whose JSON
// object fits in limit ({} when not even the first key fits), and true.
// Sizes are those of encoding/json (HTML-escaping), never smaller than
// what reaches the wire.
func boundState(st map[string]any, limit int) (map[string]any, bool, error) {
	if st == nil {
		return map[string]any{}, false, nil
	}
	data, err := json.Marshal(st)
	if err != nil {
		return nil, false, err
	}
	if len(data) <= limit {
		return st, false, nil
	}
	out := map[string]any{}
	size := len("{}")
	for _, k := range slices.Sorted(maps.Keys(st)) {
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, false, err
		}
		vb, err := json.Marshal(st[k])
		if err != nil {
			return nil, false, err
		}
		n := len(kb) + len(":") + len(vb)
		if len(out) > 0 {
			n += len(",")
		}
		if size+n > limit {
			break
		}
		size += n
		out[k] = st[k]
	}
	return out, true, nil
}

// agentMessage is the message of agent_send_message and of dynamic
// agentProxy tools.
type agentMessage struct {
	Type    *string         `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// proxyToAgent decodes {targetAgentId, message:{type, payload?}} and sends
// the message to the agent, returning its response as it is.
func proxyToAgent(ctx context.Context, agents *aacp.Coordinator, args json.RawMessage) (any, error) {
	var in struct {
		TargetAgentID string          `json:"targetAgentId"`
		Message       json.RawMessage `json:"message"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, badArguments(err)
	}
	var msg agentMessage
	dec := json.NewDecoder(bytes.NewReader(in.Message))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&msg); err != nil || msg.Type == nil {
		reason := "it has no type"
		if err != nil && !errors.Is(err, io.EOF) {
			reason = err.Error()
		}
		return nil, core.Errorf(core.CodeInvalidArgument,
			"message must be an object {type: string, payload?: any JSON}, but %s", reason)
	}
	return agents.SendMessage(ctx, in.TargetAgentID, aacp.Message{Type: *msg.Type, Payload: msg.Payload})
}

// badArguments is the error of arguments that passed the input schema but
// do not decode (which only a schema change could cause).
func badArguments(err error) *core.Error {
	return core.Errorf(core.CodeInvalidArgument, "the arguments do not fit the tool: %v", err)
}
