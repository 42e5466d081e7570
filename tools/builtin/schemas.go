package builtin

import (
	"bytes"
	"encoding/json"
)

// The JSON Schemas of the built-in tools that are written by hand (2020-12,
// the default dialect: no $schema), because they say more than a Go type
// can: enums, bounds, a const, a non-empty string, "any object". Every
// other schema is derived from the tool's input and output types by
// mcp.AddTypedTool. All are compiled once, at registration.
var (
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
					"maxConcurrentExecutions": {"type": "integer", "minimum": 1},
					"droppedLogEntries": {"type": "integer", "minimum": 0}
				},
				"required": ["memoryUsageBytes", "schedLatencyP99Ms", "concurrentExecutions", "maxConcurrentExecutions", "droppedLogEntries"],
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
			"targetAgentId": {"type": "string", "minLength": 1},
			"message": {
				"type": "object",
				"properties": {
					"type": {"type": "string", "description": "What the message asks for (the agent decides)"},
					"payload": {"description": "Any JSON value"}
				},
				"required": ["type"],
				"additionalProperties": false
			}
		},
		"required": ["targetAgentId", "message"],
		"additionalProperties": false
	}`)

	agentGetStateInput = json.RawMessage(`{
		"type": "object",
		"properties": {
			"agentId": {"type": "string", "minLength": 1}
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

	adminUnregisterOutput = json.RawMessage(`{
		"type": "object",
		"properties": {
			"unregistered": {"const": true},
			"name": {"type": "string"}
		},
		"required": ["unregistered", "name"],
		"additionalProperties": false
	}`)
)

// The toolTypes of admin_register_tool.
const (
	toolTypeEcho       = "echo"
	toolTypeHealth     = "health"
	toolTypeAgentProxy = "agentProxy"
)

// toolTypes lists the accepted toolTypes, in the order error messages name
// them.
var toolTypes = []string{toolTypeEcho, toolTypeHealth, toolTypeAgentProxy}

// canonicalSchemas are the input schemas of the toolTypes. They are part of
// the admin tools' contract and written by hand: derivation would add
// additionalProperties false to echo and agentProxy, and cannot say that
// message is any object. A dynamic tool is registered with its type's
// schema; a supplied inputSchema must equal it in canonical form.
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
