package builtin

import (
	"context"
	"encoding/json"

	"github.com/mcprt/mcprt/mcp"
)

// lookup20Input is the lookup20 fixture's input schema: twenty properties
// of the kinds a real tool declares (bounded strings, patterns, enums,
// ranges, a nested object, arrays), five of them required, nothing else
// admitted. It is the benchmarks' realistic call: validating it is most of
// the call's cost, which is what it measures.
var lookup20Input = json.RawMessage(`{
	"type": "object",
	"properties": {
		"id": {"type": "string", "maxLength": 64},
		"name": {"type": "string", "minLength": 1, "maxLength": 100},
		"email": {"type": "string", "maxLength": 254, "pattern": "^[^@]+@[^@]+$"},
		"age": {"type": "integer", "minimum": 0, "maximum": 150},
		"role": {"type": "string", "enum": ["admin", "dev", "ops", "guest"]},
		"active": {"type": "boolean"},
		"score": {"type": "number", "minimum": 0, "maximum": 100},
		"tags": {"type": "array", "maxItems": 20, "items": {"type": "string", "maxLength": 32}},
		"address": {
			"type": "object",
			"properties": {
				"street": {"type": "string", "maxLength": 200},
				"city": {"type": "string", "maxLength": 100},
				"zip": {"type": "string", "pattern": "^[0-9]{5}$"}
			},
			"required": ["city"]
		},
		"phone": {"type": "string", "maxLength": 32},
		"team": {"type": "string", "maxLength": 64},
		"manager": {"type": "string", "maxLength": 64},
		"level": {"type": "integer", "minimum": 1, "maximum": 10},
		"locale": {"type": "string", "enum": ["en", "de", "fr", "ja"]},
		"timezone": {"type": "string", "maxLength": 64},
		"created": {"type": "string", "maxLength": 40},
		"notes": {"type": "string", "maxLength": 2000},
		"quota": {"type": "integer", "minimum": 0},
		"flags": {"type": "array", "maxItems": 10, "items": {"type": "boolean"}},
		"project": {"type": "string", "maxLength": 128}
	},
	"required": ["id", "name", "email", "age", "role"],
	"additionalProperties": false
}`)

// lookup20Args are the part of lookup20's arguments its handler reads; the
// schema has checked the rest.
type lookup20Args struct {
	ID string `json:"id"`
}

// lookup20Result is lookup20's result.
type lookup20Result struct {
	OK bool   `json:"ok"`
	ID string `json:"id"`
}

// lookup20Tool is the lookup20 fixture: valid arguments answer {ok: true, id}.
func lookup20Tool() tool {
	return typed(mcp.Tool{
		Name: "lookup20",
		Description: "TEST fixture: takes a 20-property record (id, name, email, age and role required; no other " +
			"properties) and returns {ok: true, id}. A realistic input schema for benchmarks.",
		InputSchema: lookup20Input,
		Annotations: &mcp.ToolAnnotations{Title: "Lookup (20 properties)", ReadOnlyHint: mcp.Bool(false), OpenWorldHint: mcp.Bool(false)},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in lookup20Args) (lookup20Result, error) {
		return lookup20Result{OK: true, ID: in.ID}, nil
	})
}
