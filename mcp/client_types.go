package mcp

import (
	"encoding/json"
	"errors"
)

// Root is one of the client's roots (roots/list): a directory or file the
// server may operate on.
type Root struct {
	// URI identifies the root; today always a file:// URI.
	URI string `json:"uri"`
	// Name is an optional human-readable name.
	Name string `json:"name,omitempty"`
	// Meta is the root's _meta, when the client sent one.
	Meta map[string]any `json:"_meta,omitempty"`
}

// listRootsResult is the client's answer to roots/list.
type listRootsResult struct {
	Roots *[]Root `json:"roots"`
}

// Role is the speaker of a sampling message: "user" or "assistant".
type Role string

// The roles of sampling messages and content audiences.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// SamplingMessage is one message of a sampling conversation. Content is a
// text, image or audio block (audio from 2025-03-26; under 2024-11-05 an
// audio block is sent as a text block saying it was omitted).
type SamplingMessage struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
}

// ModelPreferences are the server's advisory wishes for the client's
// choice of model. Priorities are in [0, 1]; nil means no preference.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// ModelHint names a model, or part of a model's name, the server would
// like the client to use.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// The values of CreateMessageParams.IncludeContext.
const (
	IncludeNone       = "none"
	IncludeThisServer = "thisServer"
	IncludeAllServers = "allServers"
)

// CreateMessageParams are the params of sampling/createMessage: the
// server asks the client to sample its LLM.
type CreateMessageParams struct {
	// Messages is the conversation so far; at least one.
	Messages []SamplingMessage `json:"messages"`
	// MaxTokens is the most tokens to sample; at least 1.
	MaxTokens int `json:"maxTokens"`
	// SystemPrompt is an optional system prompt the client may change.
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// IncludeContext asks for context from MCP servers: IncludeNone,
	// IncludeThisServer or IncludeAllServers ("" for none). Under
	// 2025-11-25 the last two need the client's sampling.context
	// capability.
	IncludeContext string `json:"includeContext,omitempty"`
	// Temperature is the sampling temperature; nil for the client's.
	Temperature *float64 `json:"temperature,omitempty"`
	// StopSequences end the sampling.
	StopSequences []string `json:"stopSequences,omitempty"`
	// ModelPreferences are advisory.
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	// Metadata is passed to the LLM provider as it is.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// CreateMessageResult is the client's answer to sampling/createMessage.
type CreateMessageResult struct {
	// Role is the role of the sampled message (normally assistant).
	Role Role `json:"role"`
	// Content holds the sampled content: one block, or several when a
	// 2025-11-25 client answers with an array.
	Content []Content `json:"content"`
	// Model names the model that sampled.
	Model string `json:"model"`
	// StopReason says why sampling stopped ("endTurn", "stopSequence",
	// "maxTokens", or the client's own), when known.
	StopReason string `json:"stopReason,omitempty"`
	// Meta is the result's _meta, when the client sent one.
	Meta map[string]any `json:"_meta,omitempty"`
}

// Text returns the text of the result's text blocks, joined.
func (r *CreateMessageResult) Text() string {
	s := ""
	for _, c := range r.Content {
		if c.Type == "text" {
			s += c.Text
		}
	}
	return s
}

// UnmarshalJSON reads content as one block or as an array of blocks.
func (r *CreateMessageResult) UnmarshalJSON(data []byte) error {
	var raw struct {
		Role       Role            `json:"role"`
		Content    json.RawMessage `json:"content"`
		Model      string          `json:"model"`
		StopReason string          `json:"stopReason"`
		Meta       map[string]any  `json:"_meta"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*r = CreateMessageResult{Role: raw.Role, Model: raw.Model, StopReason: raw.StopReason, Meta: raw.Meta}
	switch {
	case isObject(raw.Content):
		var c Content
		if err := json.Unmarshal(raw.Content, &c); err != nil {
			return err
		}
		r.Content = []Content{c}
	case len(raw.Content) > 0 && raw.Content[0] == '[':
		if err := json.Unmarshal(raw.Content, &r.Content); err != nil {
			return err
		}
	default:
		return errors.New("the sampling result has no content (an object or an array of content blocks)")
	}
	return nil
}

// The elicitation modes. URL mode exists from 2025-11-25.
const (
	ElicitForm = "form"
	ElicitURL  = "url"
)

// ElicitParams are the params of elicitation/create: the server asks the
// client's user for input.
type ElicitParams struct {
	// Mode is ElicitForm (the default when "") or ElicitURL.
	Mode string `json:"mode,omitempty"`
	// Message tells the user what is asked and why.
	Message string `json:"message"`
	// RequestedSchema is the form (form mode): a JSON Schema object whose
	// properties are flat primitives (string, number, integer, boolean,
	// enum). Any JSON-encodable value: a map, a struct or raw JSON.
	RequestedSchema any `json:"requestedSchema,omitempty"`
	// URL is the page the user is sent to (URL mode).
	URL string `json:"url,omitempty"`
	// ElicitationID identifies a URL-mode elicitation, unique within the
	// server (URL mode).
	ElicitationID string `json:"elicitationId,omitempty"`
}

// The actions of an ElicitResult.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitResult is the client's answer to elicitation/create.
type ElicitResult struct {
	// Action is ElicitAccept, ElicitDecline or ElicitCancel.
	Action string `json:"action"`
	// Content is the submitted form (form mode, when accepted).
	Content map[string]any `json:"content,omitempty"`
	// Meta is the result's _meta, when the client sent one.
	Meta map[string]any `json:"_meta,omitempty"`
}
