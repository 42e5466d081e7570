// Package toolspec describes the MCP tools of the domain packages without
// depending on the mcp package: each domain lists a Spec per tool, and the
// program that registers the tools pairs each Spec with the domain's typed
// handler of the same name.
package toolspec

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Spec is what a tool declares besides its handler and schemas. The hints
// are MCP tool annotations and are stated truthfully: ReadOnly tools change
// nothing; Destructive tools may change or remove what exists (not only
// add); Idempotent tools have no further effect when called again with the
// same arguments; OpenWorld tools reach outside this server's own data.
type Spec struct {
	Name        string
	Title       string
	Description string
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	OpenWorld   bool
}

// Object is a tool argument that holds any JSON object, kept as its raw
// text (as json.RawMessage keeps it), whose input schema says
// {"type":"object"} so that schema-driven clients send an object rather
// than a string. Decoding accepts an object or null (nil); the domain
// checks its size and depth.
type Object json.RawMessage

// JSONType is the JSON Schema type of Object: "object".
func (Object) JSONType() string { return "object" }

// UnmarshalJSON keeps a copy of an object's text; null leaves o nil.
func (o *Object) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*o = nil
	case len(b) > 0 && b[0] == '{':
		*o = append((*o)[:0], b...)
	default:
		return errors.New("must be a JSON object")
	}
	return nil
}

// MarshalJSON writes the object's text, or null when o is empty.
func (o Object) MarshalJSON() ([]byte, error) {
	if len(o) == 0 {
		return []byte("null"), nil
	}
	return o, nil
}
