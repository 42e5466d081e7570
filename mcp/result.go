package mcp

import (
	"encoding/json"

	"github.com/mcprt/mcprt/core"
)

// CallToolResult is a full tools/call result. A handler that returns one
// has it sent as is; any other result is wrapped into one.
type CallToolResult struct {
	Content           []Content      `json:"content"`
	StructuredContent any            `json:"structuredContent,omitempty"`
	IsError           bool           `json:"isError"`
	Meta              map[string]any `json:"_meta,omitempty"`
}

// Content is one content block: text, image, audio, resource_link or an
// embedded resource. Use the constructors; Type decides which fields are
// encoded, and the negotiated revision which blocks and fields are sent
// (see ContentForRevision).
type Content struct {
	Type        string            `json:"type"`
	Text        string            `json:"text,omitempty"`
	Data        string            `json:"data,omitempty"`
	MIMEType    string            `json:"mimeType,omitempty"`
	URI         string            `json:"uri,omitempty"`
	Name        string            `json:"name,omitempty"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Size        int64             `json:"size,omitempty"`  // resource_link: bytes, 0 if unknown (from 2025-06-18)
	Icons       []Icon            `json:"icons,omitempty"` // resource_link (from 2025-11-25)
	Resource    *ResourceContents `json:"resource,omitempty"`
	Annotations *Annotations      `json:"annotations,omitempty"`
	Meta        map[string]any    `json:"_meta,omitempty"` // from 2025-06-18
}

// ResourceContents is the resource of an embedded resource block: URI plus
// Text or Blob (base64).
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// MarshalJSON encodes a text block with its text member even when empty.
func (c Content) MarshalJSON() ([]byte, error) {
	type plain Content
	if c.Type == "text" && c.Text == "" {
		return json.Marshal(struct {
			plain
			Text string `json:"text"`
		}{plain(c), ""})
	}
	return json.Marshal(plain(c))
}

// TextContent returns a text block.
func TextContent(text string) Content { return Content{Type: "text", Text: text} }

// ImageContent returns an image block; data is base64.
func ImageContent(data, mimeType string) Content {
	return Content{Type: "image", Data: data, MIMEType: mimeType}
}

// AudioContent returns an audio block; data is base64.
func AudioContent(data, mimeType string) Content {
	return Content{Type: "audio", Data: data, MIMEType: mimeType}
}

// ResourceLinkContent returns a resource_link block.
func ResourceLinkContent(uri, name string) Content {
	return Content{Type: "resource_link", URI: uri, Name: name}
}

// EmbeddedResourceContent returns an embedded resource block.
func EmbeddedResourceContent(r ResourceContents) Content {
	return Content{Type: "resource", Resource: &r}
}

// toolErrorResult is the tools/call result of a tool error: the
// first content block is text holding the StructuredError's JSON.
func toolErrorResult(e *core.Error) json.RawMessage {
	text, err := json.Marshal(e)
	if err != nil { // details that cannot be encoded: drop them
		c := *e
		c.Details = nil
		text, _ = json.Marshal(&c)
	}
	out, _ := json.Marshal(CallToolResult{Content: []Content{TextContent(string(text))}, IsError: true})
	return out
}
