package mcp

import (
	"encoding/json"

	"github.com/mcprt/mcprt/internal/jsontext"
)

// CallToolRequest is a tools/call as a tool handler sees it: the call, the
// session it arrived on, and the protocol it speaks. It is valid only
// while the handler runs and must not be changed.
type CallToolRequest struct {
	// Session is the session the call arrived on. Through it a handler
	// reaches the client: its capabilities and info, notifications, and
	// requests to the client.
	Session *Session
	// Name is the tool's name.
	Name string
	// Arguments is the arguments object exactly as validated: never nil
	// ({} when the client sent none) and never holding _meta.
	Arguments json.RawMessage
	// Meta is the request's _meta object (nil when absent).
	Meta Meta
	// ProtocolVersion is the protocol revision of this request.
	ProtocolVersion string
	// RunID and CorrelationID identify the call in logs and records.
	RunID, CorrelationID string

	progress *progressReporter // nil when the client sent no progressToken
	decoded  any               // a typed tool's *In, decoded while validated (argsdecode.go)
}

// Meta is a request's _meta object, as raw JSON. Keys the server does not
// know are kept and ignored.
type Meta json.RawMessage

// Get returns the raw value of key, or nil.
func (m Meta) Get(key string) json.RawMessage {
	if len(m) == 0 {
		return nil
	}
	return jsontext.Member(m, key)
}

// ProgressToken returns the request's progressToken (a string or a
// number, as raw JSON), when the client sent one: the client then accepts
// notifications/progress for this request.
func (m Meta) ProgressToken() (json.RawMessage, bool) {
	v := m.Get("progressToken")
	if len(v) == 0 || (v[0] != '"' && v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return nil, false
	}
	return v, true
}

// Implementation names a client or a server (clientInfo, serverInfo).
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// ClientCapabilities are what the client declared in initialize. Raw keeps
// the whole object, for capabilities this type does not name.
type ClientCapabilities struct {
	// Roots is set when the client can list its roots.
	Roots *struct {
		ListChanged bool `json:"listChanged,omitempty"`
	} `json:"roots,omitempty"`
	// Sampling is set when the client can sample an LLM for the server.
	Sampling *json.RawMessage `json:"sampling,omitempty"`
	// Elicitation is set when the client can ask its user for input.
	Elicitation *json.RawMessage `json:"elicitation,omitempty"`
	// Experimental holds non-standard capabilities.
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	// Extensions are the MCP extensions the client supports, by
	// identifier (stateless revision), e.g. ExtensionTasks.
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
	// Raw is the capabilities object as the client sent it.
	Raw json.RawMessage `json:"-"`
}
