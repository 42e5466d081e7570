package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
)

// Fixtures and a raw request helper shared by the resource, prompt and
// completion tests. Every session runs over the in-memory transport.

// rawReply is one response, its result kept as raw JSON.
type rawReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64          `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
}

// rpc sends a request with a fresh id and returns its response, which must
// be the next message.
func (c *testClient) rpc(method, params string) rawReply {
	c.t.Helper()
	c.nextID++
	id := strconv.Itoa(c.nextID)
	line := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"`
	if params != "" {
		line += `,"params":` + params
	}
	c.send(line + "}")
	raw := c.expectRaw()
	var env struct {
		ID json.RawMessage `json:"id"`
		rawReply
	}
	if err := json.Unmarshal(raw, &env); err != nil || string(env.ID) != id {
		c.t.Fatalf("%s: want the response to id %s, got %s", method, id, raw)
	}
	return env.rawReply
}

// ok returns the result of a reply that must not be an error.
func (r rawReply) ok(t *testing.T, what string) json.RawMessage {
	t.Helper()
	if r.Error != nil || r.Result == nil {
		t.Fatalf("%s: want a result, got error %+v", what, r.Error)
	}
	return r.Result
}

// fails checks that a reply is the error code and that its message holds
// every one of want; every error's data carries a correlationId.
func (r rawReply) fails(t *testing.T, what string, code int64, want ...string) {
	t.Helper()
	if r.Error == nil {
		t.Fatalf("%s: want error %d, got result %s", what, code, r.Result)
	}
	if r.Error.Code != code {
		t.Fatalf("%s: error %d %q, want code %d", what, r.Error.Code, r.Error.Message, code)
	}
	for _, w := range want {
		if !strings.Contains(r.Error.Message, w) {
			t.Errorf("%s: message %q does not say %q", what, r.Error.Message, w)
		}
	}
	if cid, _ := r.Error.Data["correlationId"].(string); cid == "" {
		t.Errorf("%s: error data %v has no correlationId", what, r.Error.Data)
	}
}

// decode decodes raw JSON into a generic value.
func decode(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON object: %s", raw)
	}
	return m
}

// expectNotification returns the next message, which must be the
// notification method.
func (c *testClient) expectNotification(method string) json.RawMessage {
	c.t.Helper()
	raw := c.expectRaw()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Method != method || m.ID != nil {
		c.t.Fatalf("want %s, got %s", method, raw)
	}
	return raw
}

var fixturePriority = 0.5

// fixtureAnnotations use every field, lastModified included.
var fixtureAnnotations = &Annotations{Audience: []Role{RoleUser, RoleAssistant}, Priority: &fixturePriority,
	LastModified: "2025-01-12T15:00:58Z"}

var fixtureIcons = []Icon{{Src: "https://example.com/icon.png", MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: "light"}}

// textHandler returns a handler that reads as text.
func textHandler(text string) ResourceHandler {
	return func(_ context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []ResourceContents{TextResource(req.URI, "text/plain", text)}}, nil
	}
}

// addResourceFixtures registers resources and templates that use every
// field, and handlers that fail in every way.
func addResourceFixtures(t *testing.T, s *Server) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.AddResource(Resource{URI: "file:///notes.txt", Name: "notes", Title: "Notes", Description: "my notes",
		MIMEType: "text/plain", Size: 5, Annotations: fixtureAnnotations, Icons: fixtureIcons,
		Meta: map[string]any{"x.example/owner": "me"}}, textHandler("hello")))
	must(s.AddResource(Resource{URI: "file:///logo.png", Name: "logo", MIMEType: "image/png"},
		func(_ context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{Contents: []ResourceContents{BlobResource("", "image/png", []byte{0x89, 'P', 'N', 'G'})},
				Meta: map[string]any{"x.example/cached": true}}, nil
		}))
	must(s.AddResource(Resource{URI: "file:///empty.txt", Name: "empty"}, textHandler("")))
	fail := func(err error) ResourceHandler {
		return func(context.Context, *ReadResourceRequest) (*ReadResourceResult, error) { return nil, err }
	}
	must(s.AddResource(Resource{URI: "test://gone", Name: "gone"}, fail(core.NewError(core.CodeNotFound, "the row was deleted"))))
	must(s.AddResource(Resource{URI: "test://broken", Name: "broken"}, fail(errors.New("disk on fire"))))
	must(s.AddResource(Resource{URI: "test://wrapped", Name: "wrapped"},
		fail(fmt.Errorf("wrapped: %w", jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: not today")))))
	must(s.AddResource(Resource{URI: "test://panics", Name: "panics"},
		func(context.Context, *ReadResourceRequest) (*ReadResourceResult, error) { panic("boom") }))
	must(s.AddResource(Resource{URI: "test://nil", Name: "nil"}, fail(nil)))
	must(s.AddResource(Resource{URI: "test://badblob", Name: "badblob"},
		func(context.Context, *ReadResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{Contents: []ResourceContents{{URI: "test://badblob", Blob: "not base64!"}}}, nil
		}))
	must(s.AddResource(Resource{URI: "test://big", Name: "big"}, textHandler(strings.Repeat("x", 2048))))
	must(s.AddResourceTemplate(ResourceTemplate{URITemplate: "file:///logs/{day}", Name: "log", Title: "Daily log",
		MIMEType: "text/plain", Annotations: fixtureAnnotations, Icons: fixtureIcons, Meta: map[string]any{"k": 1},
		Complete: CompletionsFrom(map[string][]string{"day": {"monday", "tuesday", "Thursday"}})},
		func(_ context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
			if req.Variables["day"] == "never" {
				return nil, core.NewError(core.CodeNotFound, "there is no log for day never")
			}
			return &ReadResourceResult{Contents: []ResourceContents{
				TextResource(req.URI, "text/plain", req.Template+" day="+req.Variables["day"])}}, nil
		}))
	must(s.AddResourceTemplate(ResourceTemplate{URITemplate: "db://{table}/{id}{?fields*}", Name: "row"},
		func(_ context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
			b, _ := json.Marshal(req.Variables)
			return &ReadResourceResult{Contents: []ResourceContents{TextResource("", "application/json", string(b))}}, nil
		}))
}

// resourceClient starts a running session of a server with the resource
// fixtures, under revision version.
func resourceClient(t *testing.T, version string, edit func(*Options), setup func(*Server)) *testClient {
	t.Helper()
	cfg := testConfig()
	if edit != nil {
		edit(&cfg)
	}
	return newTestClient(t, transportMemory, cfg, Options{}, setup, version)
}

// badParams is one malformed request and what its -32602 must say.
type badParams struct {
	name, method, params string
	want                 []string
}

// runBadParams sends each malformed request and checks its -32602.
func runBadParams(t *testing.T, c *testClient, cases []badParams) {
	t.Helper()
	for _, tc := range cases {
		c.rpc(tc.method, tc.params).fails(t, tc.name, jsonrpc.CodeInvalidParams, tc.want...)
	}
}
