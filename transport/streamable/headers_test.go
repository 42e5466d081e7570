package streamable

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/mcprt/mcprt/mcp"
)

// TestStatelessParamHeaders: a tools/call of a tool with x-mcp-header
// annotations must mirror each present argument in its Mcp-Param-* header
// (plain or =?base64?...?=), and send no header for an absent one.
func TestStatelessParamHeaders(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	err := f.srv.AddTool(mcp.Tool{Name: "region", Description: "mirrors its arguments into headers",
		InputSchema: json.RawMessage(`{"type":"object","properties":{
			"region":{"type":"string","x-mcp-header":"Region"},
			"count":{"type":"integer","x-mcp-header":"Count"},
			"dry":{"type":"boolean","x-mcp-header":"Dry"},
			"opts":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
			"plain":{"type":"string"}}}`),
		Handler: func(context.Context, *mcp.CallToolRequest) (any, error) { return map[string]any{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	call := func(args string) string { return slBody(`"p"`, "tools/call", `"name":"region","arguments":`+args) }
	for _, tc := range []struct {
		name string
		args string
		hdr  []string
		ok   bool
	}{
		{"no annotated argument, no header", `{"plain":"x"}`, nil, true},
		{"plain value", `{"region":"eu-west"}`, []string{"Mcp-Param-Region", "eu-west"}, true},
		{"header name in another case", `{"region":"eu-west"}`, []string{"mcp-param-region", "eu-west"}, true},
		{"value with whitespace around it", `{"region":"eu-west"}`, []string{"Mcp-Param-Region", "  eu-west "}, true},
		{"Base64 value", `{"region":"Hello"}`, []string{"Mcp-Param-Region", b64("Hello")}, true},
		{"Base64 of non-ASCII text", `{"region":"Zürich "}`, []string{"Mcp-Param-Region", b64("Zürich ")}, true},
		{"Base64-looking text without the prefix is literal", `{"region":"SGVsbG8="}`, []string{"Mcp-Param-Region", "SGVsbG8="}, true},
		{"without the suffix is literal", `{"region":"=?base64?SGVsbG8="}`, []string{"Mcp-Param-Region", "=?base64?SGVsbG8="}, true},
		{"integer", `{"count":42}`, []string{"Mcp-Param-Count", "42"}, true},
		{"integer written 42.0", `{"count":42.0}`, []string{"Mcp-Param-Count", "42"}, true},
		{"boolean", `{"dry":true}`, []string{"Mcp-Param-Dry", "true"}, true},
		{"nested property", `{"opts":{"zone":"a"}}`, []string{"Mcp-Param-Zone", "a"}, true},
		{"null argument, no header", `{"region":null}`, nil, true},
		{"header missing", `{"region":"eu-west"}`, nil, false},
		{"header for an absent argument", `{}`, []string{"Mcp-Param-Region", "eu-west"}, false},
		{"value differs", `{"region":"eu-west"}`, []string{"Mcp-Param-Region", "us-east"}, false},
		{"value differs in case", `{"region":"eu-west"}`, []string{"Mcp-Param-Region", "EU-WEST"}, false},
		{"Base64 without padding", `{"region":"Hello"}`, []string{"Mcp-Param-Region", "=?base64?SGVsbG8?="}, false},
		{"Base64 with bad characters", `{"region":"Hello"}`, []string{"Mcp-Param-Region", "=?base64?SGVs!!!bG8=?="}, false},
		{"Base64 of another value", `{"region":"Hello"}`, []string{"Mcp-Param-Region", b64("Hallo")}, false},
		{"integer differs", `{"count":42}`, []string{"Mcp-Param-Count", "43"}, false},
		{"boolean differs", `{"dry":true}`, []string{"Mcp-Param-Dry", "false"}, false},
		{"boolean in another case", `{"dry":true}`, []string{"Mcp-Param-Dry", "True"}, false},
		{"nested header missing", `{"opts":{"zone":"a"}}`, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.t = t
			resp := f.slPost(call(tc.args), tc.hdr...)
			if tc.ok {
				resultMap(t, jsonAnswer(t, resp, 200))
				return
			}
			m := jsonAnswer(t, resp, 400)
			if m.Error == nil || m.Error.Code != mcp.CodeHeaderMismatch {
				t.Fatalf("want -32020, got %+v", m)
			}
		})
	}
}

// TestPrimitiveText: the header text of each JSON argument kind.
func TestPrimitiveText(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want string
		ok   bool
	}{
		{`"a b"`, "a b", true},
		{`"\u00e9"`, "é", true},
		{`true`, "true", true},
		{`false`, "false", true},
		{`7`, "7", true},
		{`-7`, "-7", true},
		{`1e2`, "100", true},
		{`1.5`, "", false},
		{`9007199254740993`, "", false},
		{`{}`, "", false},
		{`[1]`, "", false},
		{``, "", false},
	} {
		got, ok := primitiveText([]byte(tc.raw))
		if got != tc.want || ok != tc.ok {
			t.Errorf("primitiveText(%s) = %q, %v; want %q, %v", tc.raw, got, ok, tc.want, tc.ok)
		}
	}
}
