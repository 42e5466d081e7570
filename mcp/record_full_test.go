package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
)

// fullOut is a struct result with a typed field, for encodeFull's tests.
type fullOut struct {
	N    int            `json:"n"`
	S    string         `json:"s,omitempty"`
	More map[string]any `json:"more,omitempty"`
}

// randomFullResult returns a CallToolResult of the kinds handlers return:
// text, image and resource_link blocks with text that needs escaping,
// structuredContent of every shape (nil, map, struct, typed nil pointer,
// array), _meta nil, empty or not, isError either way.
func randomFullResult(r *rand.Rand) CallToolResult {
	text := func() string {
		parts := []string{"a", "<b>", "&", "é", "\n", "\u2028", `"q"`, "\\", "\x01", strings.Repeat("x", r.IntN(40))}
		var b strings.Builder
		for range r.IntN(6) {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		return b.String()
	}
	var v CallToolResult
	switch r.IntN(4) {
	case 0: // nil content
	case 1:
		v.Content = []Content{}
	default:
		for range 1 + r.IntN(3) {
			switch r.IntN(3) {
			case 0:
				v.Content = append(v.Content, TextContent(text()))
			case 1:
				v.Content = append(v.Content, ImageContent("aGk=", "image/png"))
			default:
				v.Content = append(v.Content, ResourceLinkContent("file:///"+text(), text()))
			}
		}
	}
	switch r.IntN(6) {
	case 0:
	case 1:
		v.StructuredContent = map[string]any{"n": r.IntN(3) - 1, "s": text()}
	case 2:
		v.StructuredContent = fullOut{N: r.IntN(5), S: text(), More: map[string]any{"<k>": []any{1.5, true, nil, text()}}}
	case 3:
		v.StructuredContent = (*fullOut)(nil)
	case 4:
		v.StructuredContent = map[string]any{"n": "not an integer"}
	default:
		v.StructuredContent = []any{text()}
	}
	switch r.IntN(3) {
	case 1:
		v.Meta = map[string]any{}
	case 2:
		v.Meta = map[string]any{"z": text(), "a": map[string]any{"&": 1}}
	}
	v.IsError = r.IntN(4) == 0
	return v
}

// marshalNoHTML is encoding/json's encoding without HTML escaping.
func marshalNoHTML(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// TestEncodeFullProperty: a handler's CallToolResult is encoded exactly as
// encoding/json encodes what is sent (the blocks fitted to the revision,
// structuredContent from 2025-06-18), with structuredContent encoded once
// and checked against the outputSchema when the tool has one; the checks
// come in their order — structuredContent over the limit, then its
// violation of the schema, then the whole answer over the limit — and a
// result fails for its size exactly when its encoding passes the limit.
func TestEncodeFullProperty(t *testing.T) {
	srv, err := NewServer(Options{})
	if err != nil {
		t.Fatal(err)
	}
	schema, err := srv.schemas.compile("outputSchema", json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(17, 1))
	for i := range 3000 {
		v := randomFullResult(r)
		version := []string{Version20250326, Version20250618, Version20251125}[r.IntN(3)]
		structured := version >= Version20250618
		rt := &registeredTool{}
		if r.IntN(2) == 0 {
			rt.output = schema
		}
		// What is sent, encoded by encoding/json.
		sent := v
		if sent.Content == nil {
			sent.Content = []Content{}
		}
		sent.Content = contentForRevision(sent.Content, version)
		if !structured {
			sent.StructuredContent = nil
		}
		want := marshalNoHTML(t, sent)
		sc := marshalNoHTML(t, v.StructuredContent)
		check := rt.output != nil && !v.IsError
		limit := len(want) + r.IntN(7) - 3
		if r.IntN(4) == 0 && check {
			limit = len(sc) + r.IntN(3) - 1
		}
		srv.opts.Limits.MaxResultBytes = limit
		c := &toolCall{callID: callID{sess: &Session{srv: srv}, rt: rt}, req: CallToolRequest{ProtocolVersion: version}}
		got, e := c.encodeFull(v, structured)
		what := fmt.Sprintf("case %d (%s, schema %v, limit %d): %+v", i, version, rt.output != nil, limit, v)
		var reason string
		switch {
		case check && len(sc) > limit:
			reason = "result_too_large"
		case check && len(schema.validate(sc)) > 0:
			reason = "output_schema_violation"
		case len(want) > limit:
			reason = "result_too_large"
		}
		if reason != "" {
			if e == nil || e.Code != core.CodeInternal || e.Details["reason"] != reason {
				t.Fatalf("%s: want INTERNAL %s, got %v and %s", what, reason, e, got)
			}
			continue
		}
		if e != nil {
			t.Fatalf("%s: %v", what, e)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s:\n got %s\nwant %s", what, got, want)
		}
	}
}

// BenchmarkEncodeFull encodes a handler's CallToolResult whose
// structuredContent (a struct) is checked against a hand-written
// outputSchema that the fast validator models.
func BenchmarkEncodeFull(b *testing.B) {
	type report struct {
		ID      string   `json:"id"`
		Name    string   `json:"name"`
		Email   string   `json:"email"`
		Age     int      `json:"age"`
		Active  bool     `json:"active"`
		Score   float64  `json:"score"`
		Tags    []string `json:"tags"`
		Project string   `json:"project"`
	}
	srv, err := NewServer(Options{})
	if err != nil {
		b.Fatal(err)
	}
	out, err := srv.schemas.compile("outputSchema", json.RawMessage(`{"type":"object","additionalProperties":false,`+
		`"required":["id","name","email","age","active","score","tags","project"],"properties":{`+
		`"id":{"type":"string","maxLength":64},"name":{"type":"string","minLength":1,"maxLength":100},`+
		`"email":{"type":"string","pattern":"^[^@]+@[^@]+$"},"age":{"type":"integer","minimum":0,"maximum":150},`+
		`"active":{"type":"boolean"},"score":{"type":"number","minimum":0,"maximum":100},`+
		`"tags":{"type":"array","maxItems":20,"items":{"type":"string","maxLength":32}},`+
		`"project":{"type":"string","maxLength":128}}}`))
	if err != nil || out.fast == nil {
		b.Fatalf("schema: %v", err)
	}
	c := &toolCall{callID: callID{sess: &Session{srv: srv}, rt: &registeredTool{output: out}}, req: CallToolRequest{ProtocolVersion: Version20250618}}
	v := CallToolResult{Content: []Content{TextContent("Ada Lovelace (u-1)")}, StructuredContent: &report{ID: "u-1",
		Name: "Ada Lovelace", Email: "ada@example.org", Age: 36, Active: true, Score: 99.5, Tags: []string{"math", "engines"}, Project: "engine"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, e := c.encodeFull(v, true); e != nil {
			b.Fatal(e)
		}
	}
}
