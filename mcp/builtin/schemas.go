package builtin

import (
	"bytes"
	"encoding/json"
)

// The JSON Schemas of the built-in tools (2020-12, the default dialect: no
// $schema). They are compiled once by mcp.Server.AddTool.
var (
	// emptyInput accepts only {}.
	emptyInput = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)

	serverPingOutput = json.RawMessage(`{
		"type": "object",
		"properties": {
			"version": {"type": "string"},
			"mode": {"type": "string", "enum": ["FULL", "READONLY", "MINIMAL", "TEST"]},
			"uptime_ms": {"type": "integer", "minimum": 0}
		},
		"required": ["version", "mode", "uptime_ms"],
		"additionalProperties": false
	}`)

	healthOutput = json.RawMessage(`{
		"type": "object",
		"properties": {
			"server": {
				"type": "object",
				"properties": {"name": {"type": "string"}, "version": {"type": "string"}},
				"required": ["name", "version"],
				"additionalProperties": false
			},
			"config": {
				"type": "object",
				"properties": {
					"toolTimeoutMs": {"type": "integer", "minimum": 1},
					"maxConcurrentExecutions": {"type": "integer", "minimum": 1},
					"maxPayloadBytes": {"type": "integer", "minimum": 1},
					"maxStateBytes": {"type": "integer", "minimum": 1}
				},
				"required": ["toolTimeoutMs", "maxConcurrentExecutions", "maxPayloadBytes", "maxStateBytes"],
				"additionalProperties": false
			},
			"resources": {
				"type": "object",
				"properties": {
					"memoryUsageBytes": {"type": "integer", "minimum": 0},
					"schedLatencyP99Ms": {"type": "number", "minimum": 0},
					"concurrentExecutions": {"type": "integer", "minimum": 0},
					"maxConcurrentExecutions": {"type": "integer", "minimum": 1}
				},
				"required": ["memoryUsageBytes", "schedLatencyP99Ms", "concurrentExecutions", "maxConcurrentExecutions"],
				"additionalProperties": false
			},
			"status": {"type": "string", "enum": ["healthy", "degraded", "unhealthy"]}
		},
		"required": ["server", "config", "resources", "status"],
		"additionalProperties": false
	}`)

	agentSendMessageInput = json.RawMessage(`{
		"type": "object",
		"properties": {
			"targetAgentId": {"type": "string", "minLength": 1, "description": "The id of the agent to send the message to (see agent_list)."},
			"message": {
				"type": "object",
				"properties": {
					"type": {"type": "string", "description": "What the message asks for; its meaning is up to the agent."},
					"payload": {"description": "The message body: any JSON value."}
				},
				"required": ["type"],
				"additionalProperties": false
			}
		},
		"required": ["targetAgentId", "message"],
		"additionalProperties": false
	}`)

	agentListOutput = json.RawMessage(`{
		"type": "object",
		"properties": {
			"agentIds": {"type": "array", "items": {"type": "string"}, "maxItems": 1000},
			"truncated": {"type": "boolean"}
		},
		"required": ["agentIds", "truncated"],
		"additionalProperties": false
	}`)

	agentGetStateInput = json.RawMessage(`{
		"type": "object",
		"properties": {
			"agentId": {"type": "string", "minLength": 1, "description": "The id of the agent whose state to read (see agent_list)."}
		},
		"required": ["agentId"],
		"additionalProperties": false
	}`)

	agentGetStateOutput = json.RawMessage(`{
		"type": "object",
		"properties": {
			"agentId": {"type": "string"},
			"state": {"type": "object"},
			"truncated": {"type": "boolean"}
		},
		"required": ["agentId", "state", "truncated"],
		"additionalProperties": false
	}`)

	adminRegisterInput = json.RawMessage(`{
		"type": "object",
		"properties": {
			"name": {"type": "string", "description": "The new tool's name: 1-128 characters of A-Z a-z 0-9 _ - . not already taken."},
			"description": {"type": "string", "description": "What the new tool does, for the model that will call it."},
			"toolType": {"type": "string", "description": "The built-in handler the tool runs: echo, health or agentProxy."},
			"inputSchema": {"type": "object", "description": "Optional; if given it must equal the toolType's canonical input schema."},
			"version": {"type": "string", "description": "Optional version string listed with the tool."}
		},
		"required": ["name", "description", "toolType"],
		"additionalProperties": false
	}`)

	adminRegisterOutput = json.RawMessage(`{
		"type": "object",
		"properties": {
			"registered": {"const": true},
			"name": {"type": "string"},
			"toolType": {"type": "string", "enum": ["echo", "health", "agentProxy"]}
		},
		"required": ["registered", "name", "toolType"],
		"additionalProperties": false
	}`)

	adminUnregisterInput = json.RawMessage(`{
		"type": "object",
		"properties": {
			"name": {"type": "string", "description": "The name of a tool registered by admin_register_tool."}
		},
		"required": ["name"],
		"additionalProperties": false
	}`)

	adminUnregisterOutput = json.RawMessage(`{
		"type": "object",
		"properties": {
			"unregistered": {"const": true},
			"name": {"type": "string"}
		},
		"required": ["unregistered", "name"],
		"additionalProperties": false
	}`)

	// echoOutput is the output schema of the echo fixture and of
	// dynamic echo tools.
	echoOutput = json.RawMessage(`{
		"type": "object",
		"properties": {"message": {"type": "string"}},
		"required": ["message"],
		"additionalProperties": false
	}`)

	fixtureEchoInput = json.RawMessage(`{
		"type": "object",
		"properties": {"message": {"type": "string"}},
		"required": ["message"],
		"additionalProperties": false
	}`)

	fixtureSleepInput = json.RawMessage(`{
		"type": "object",
		"properties": {
			"ms": {"type": "integer", "minimum": 0, "maximum": 86400000, "description": "How long to sleep, in milliseconds."},
			"ignoreCancel": {"type": "boolean", "description": "Sleep the whole time even when the call is cancelled or times out."}
		},
		"required": ["ms"],
		"additionalProperties": false
	}`)

	fixtureFailInput = json.RawMessage(`{
		"type": "object",
		"properties": {"message": {"type": "string", "description": "The text of the error the handler returns."}},
		"required": ["message"],
		"additionalProperties": false
	}`)

	fixtureBigResultInput = json.RawMessage(`{
		"type": "object",
		"properties": {
			"bytes": {"type": "integer", "minimum": 0, "maximum": 268435456, "description": "The length of the returned string."}
		},
		"required": ["bytes"],
		"additionalProperties": false
	}`)
)

// The toolTypes of admin_register_tool (SPEC §8.2).
const (
	toolTypeEcho       = "echo"
	toolTypeHealth     = "health"
	toolTypeAgentProxy = "agentProxy"
)

// toolTypes lists the accepted toolTypes, in the order error messages name
// them.
var toolTypes = []string{toolTypeEcho, toolTypeHealth, toolTypeAgentProxy}

// canonicalSchemas are the input schemas of the toolTypes, exactly as SPEC
// §8.2 gives them. A dynamic tool is registered with its type's schema; a
// supplied inputSchema must equal it in canonical form.
var canonicalSchemas = map[string]json.RawMessage{
	toolTypeEcho:       json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`),
	toolTypeHealth:     json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
	toolTypeAgentProxy: json.RawMessage(`{"type":"object","properties":{"targetAgentId":{"type":"string"},"message":{"type":"object"}},"required":["targetAgentId","message"]}`),
}

// canonicalJSON returns the canonical form of a JSON text: decoded and
// re-encoded by encoding/json, so that object keys are sorted, whitespace
// is gone and numbers are normalized (1, 1.0 and 1e0 all become 1).
func canonicalJSON(raw []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// sameJSON reports whether a and b are equal in canonical form.
func sameJSON(a, b []byte) bool {
	ca, err := canonicalJSON(a)
	if err != nil {
		return false
	}
	cb, err := canonicalJSON(b)
	if err != nil {
		return false
	}
	return bytes.Equal(ca, cb)
}
