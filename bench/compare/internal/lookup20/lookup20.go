// Package lookup20 holds the realistic benchmark tool that every server of
// bench/compare offers beside noop: lookup20, whose input schema has twenty
// properties (five required, no others admitted), exactly as mcprt's TEST
// fixture of that name declares it (mcp/builtin/lookup20.go), and which
// answers {ok: true, id}. Arguments are the valid arguments the comparison
// sends.
package lookup20

import "encoding/json"

// Name is the tool's name.
const Name = "lookup20"

// Description is the tool's description on every server.
const Description = "takes a 20-property record and returns {ok: true, id}"

// Schema is the tool's input schema, the same text as mcprt's fixture.
var Schema = json.RawMessage(`{
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

// Arguments are valid arguments with every property set: what the
// comparison sends on each call.
const Arguments = `{"id":"u-1","name":"Ada Lovelace","email":"ada@example.org","age":36,"role":"dev","active":true,` +
	`"score":99.5,"tags":["math","engines"],"address":{"street":"1 Main St","city":"London","zip":"10115"},` +
	`"phone":"+44 20 1234","team":"core","manager":"babbage","level":7,"locale":"en","timezone":"Europe/London",` +
	`"created":"2026-01-01T00:00:00Z","notes":"first programmer","quota":10,"flags":[true,false],"project":"engine"}`

// Args is the part of the arguments a handler reads.
type Args struct {
	ID string `json:"id"`
}

// Result is the tool's result.
type Result struct {
	OK bool   `json:"ok"`
	ID string `json:"id"`
}
