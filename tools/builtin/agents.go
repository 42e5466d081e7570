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

// agentStateResult is agent_get_state's result.
type agentStateResult struct {
	AgentID   string         `json:"agentId"`
	State     map[string]any `json:"state"`
	Truncated bool           `json:"truncated"`
}

// agentStateArgs are agent_get_state's arguments.
type agentStateArgs struct {
	AgentID string `json:"agentId"`
}

// agentTools returns agent_send_message and agent_get_state,
// all talking to agents. Their schemas are written by hand where they say
// more than the Go types: non-empty agent ids, the bound on agentIds, and
// a state that is any object.
func agentTools(opts Options, agents *aacp.Coordinator) []mcp.ToolDef {
	redactor := core.NewRedactor(opts.RedactKeys)
	maxState := opts.MaxStateBytes
	return []mcp.ToolDef{
		// Out is any: the agent's response is passed on as it is, and no
		// output schema is listed.
		mcp.Typed(mcp.Tool{
			Name:  "agent_send_message",
			Title: "Send a message to an agent",
			Description: "Send {type, payload} to an in-process agent (agent_list) and return its response. " +
				"An agent handles one message at a time; a full queue is RESOURCE_EXHAUSTED (retry later).",
			InputSchema: agentSendMessageInput,
			Annotations: &mcp.ToolAnnotations{DestructiveHint: mcp.Bool(false), OpenWorldHint: mcp.Bool(false)},
		}, proxyTool(agents)),
		mcp.Typed(mcp.Tool{
			Name:  "agent_get_state",
			Title: "Read an agent's state",
			Description: fmt.Sprintf("An in-process agent's state after its last message, secret-looking values "+
				"redacted; over %d bytes only the first keys (sorted) that fit, with truncated true.", maxState),
			InputSchema:      agentGetStateInput,
			OutputSchema:     agentGetStateOutput,
			HideOutputSchema: true,
			Annotations:      readOnly("Read an agent's state"),
		}, func(_ context.Context, _ *mcp.CallToolRequest, in agentStateArgs) (agentStateResult, error) {
			st, err := agents.AgentState(in.AgentID)
			if err != nil {
				return agentStateResult{}, err
			}
			red, _ := redactor.Redact(map[string]any(st)).(map[string]any)
			bounded, truncated, err := boundState(red, maxState)
			if err != nil {
				return agentStateResult{}, core.Errorf(core.CodeInternal, "cannot encode the state of agent %q: %v", in.AgentID, err)
			}
			return agentStateResult{AgentID: in.AgentID, State: bounded, Truncated: truncated}, nil
		}),
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

// proxyArgs are the arguments of agent_send_message and of dynamic
// agentProxy tools. message stays raw: the canonical agentProxy schema
// only says it is an object, so its shape is checked here.
type proxyArgs struct {
	TargetAgentID string          `json:"targetAgentId"`
	Message       json.RawMessage `json:"message"`
}

// agentMessage is the message of agent_send_message and of dynamic
// agentProxy tools.
type agentMessage struct {
	Type    *string         `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// proxyTool returns the handler of agent_send_message and of dynamic
// agentProxy tools: it checks that the message is {type, payload?} and
// sends it to the agent, returning the agent's response as it is.
func proxyTool(agents *aacp.Coordinator) func(context.Context, *mcp.CallToolRequest, proxyArgs) (any, error) {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in proxyArgs) (any, error) {
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
}
