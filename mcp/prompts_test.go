package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
)

// greetMessages uses every kind of content block.
func greetMessages(name string) []PromptMessage {
	text := TextContent("Hello " + name)
	text.Annotations = &Annotations{Audience: []Role{RoleUser}, LastModified: "2025-01-12T15:00:58Z"}
	link := ResourceLinkContent("file:///notes.txt", "notes")
	link.Title, link.MIMEType = "Notes", "text/plain"
	return []PromptMessage{
		{Role: RoleUser, Content: text},
		{Role: RoleAssistant, Content: ImageContent("iVBORw==", "image/png")},
		{Role: RoleUser, Content: AudioContent("UklGRg==", "audio/wav")},
		{Role: RoleUser, Content: link},
		{Role: RoleUser, Content: EmbeddedResourceContent(TextResource("file:///notes.txt", "text/plain", "hello"))},
		{Role: RoleAssistant, Content: EmbeddedResourceContent(BlobResource("file:///logo.png", "image/png", []byte{1, 2, 3}))},
	}
}

// addPromptFixtures registers prompts that use every field and handlers
// that fail in every way.
func addPromptFixtures(t *testing.T, s *Server) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.AddPrompt(Prompt{Name: "greet", Title: "Greeting", Description: "greets someone",
		Arguments: []PromptArgument{{Name: "name", Title: "Name", Description: "who", Required: true}, {Name: "lang"}},
		Icons:     fixtureIcons, Meta: map[string]any{"x.example/v": 2},
		Complete: CompletionsFrom(map[string][]string{"lang": {"en", "fr", "de", "EN-gb"}})},
		func(_ context.Context, req *GetPromptRequest) (*GetPromptResult, error) {
			return &GetPromptResult{Description: "lang=" + req.Arguments["lang"] + " extra=" + req.Arguments["extra"],
				Messages: greetMessages(req.Arguments["name"]), Meta: map[string]any{"rev": req.ProtocolVersion}}, nil
		}))
	must(s.AddPrompt(Prompt{Name: "plain"}, func(context.Context, *GetPromptRequest) (*GetPromptResult, error) {
		return &GetPromptResult{}, nil
	}))
	fixed := func(res *GetPromptResult, err error) PromptHandler {
		return func(context.Context, *GetPromptRequest) (*GetPromptResult, error) { return res, err }
	}
	must(s.AddPrompt(Prompt{Name: "fails"}, fixed(nil, errors.New("the template is missing"))))
	must(s.AddPrompt(Prompt{Name: "nil"}, fixed(nil, nil)))
	must(s.AddPrompt(Prompt{Name: "panics"}, func(context.Context, *GetPromptRequest) (*GetPromptResult, error) {
		panic("boom")
	}))
	must(s.AddPrompt(Prompt{Name: "badrole"}, fixed(&GetPromptResult{Messages: []PromptMessage{
		{Role: "system", Content: TextContent("x")}}}, nil)))
	must(s.AddPrompt(Prompt{Name: "badcontent"}, fixed(&GetPromptResult{Messages: []PromptMessage{
		{Role: RoleUser, Content: ImageContent("not base64", "image/png")}}}, nil)))
	must(s.AddPrompt(Prompt{Name: "big"}, fixed(&GetPromptResult{Messages: []PromptMessage{
		{Role: RoleUser, Content: TextContent(strings.Repeat("x", 4096))}}}, nil)))
}

// TestPromptsAcrossRevisions: prompts/list and prompts/get under every
// session revision: fields and content blocks from the revision that has
// them (an older revision gets a text block in place of a newer block),
// every result valid against that revision's schema.
func TestPromptsAcrossRevisions(t *testing.T) {
	for _, v := range SupportedVersions() {
		t.Run(v, func(t *testing.T) {
			c := resourceClient(t, v, nil, func(s *Server) { addPromptFixtures(t, s) })
			raw := c.rpc(MethodPromptsList, `{}`).ok(t, "prompts/list")
			checkSchema(t, v, "ListPromptsResult", raw)
			list := decode(t, raw)["prompts"].([]any)
			var names []string
			for _, p := range list {
				names = append(names, p.(map[string]any)["name"].(string))
			}
			if strings.Join(names, ",") != "badcontent,badrole,big,fails,greet,nil,panics,plain" {
				t.Fatalf("prompts: %v", names)
			}
			greet := list[4].(map[string]any)
			_, hasTitle := greet["title"]
			_, hasIcons := greet["icons"]
			_, hasMeta := greet["_meta"]
			arg := greet["arguments"].([]any)[0].(map[string]any)
			_, argTitle := arg["title"]
			if hasTitle != (v >= Version20250618) || hasMeta != (v >= Version20250618) || argTitle != (v >= Version20250618) ||
				hasIcons != (v >= Version20251125) || arg["required"] != true || arg["description"] != "who" {
				t.Errorf("greet listed as %v", greet)
			}
			if _, ok := list[7].(map[string]any)["arguments"]; ok {
				t.Errorf("a prompt without arguments lists them: %v", list[7])
			}

			raw = c.rpc(MethodPromptsGet, `{"name":"greet","arguments":{"name":"Ada","lang":"fr","extra":"x"}}`).ok(t, "get")
			checkSchema(t, v, "GetPromptResult", raw)
			res := decode(t, raw)
			if res["description"] != "lang=fr extra=x" || res["_meta"].(map[string]any)["rev"] != v {
				t.Errorf("result: %s", raw)
			}
			var types []string
			for _, m := range res["messages"].([]any) {
				types = append(types, m.(map[string]any)["content"].(map[string]any)["type"].(string))
			}
			want := map[string]string{
				Version20241105: "text,image,text,text,resource,resource",
				Version20250326: "text,image,audio,text,resource,resource",
				Version20250618: "text,image,audio,resource_link,resource,resource",
				Version20251125: "text,image,audio,resource_link,resource,resource",
			}[v]
			if strings.Join(types, ",") != want {
				t.Errorf("content types %v, want %s", types, want)
			}
			first := res["messages"].([]any)[0].(map[string]any)["content"].(map[string]any)
			_, lastModified := first["annotations"].(map[string]any)["lastModified"]
			if first["text"] != "Hello Ada" || lastModified != (v >= Version20250618) {
				t.Errorf("first message: %v", first)
			}
			if link := res["messages"].([]any)[3].(map[string]any)["content"].(map[string]any); v < Version20250618 &&
				link["text"] != "[resource link] Notes: file:///notes.txt (text/plain)" {
				t.Errorf("a resource link before 2025-06-18: %v", link)
			}
			raw = c.rpc(MethodPromptsGet, `{"name":"plain","arguments":{}}`).ok(t, "plain")
			if string(raw) != `{"messages":[]}` {
				t.Errorf("plain: %s", raw)
			}
			checkSchema(t, v, "GetPromptResult", raw)
		})
	}
}

// TestPromptGetErrors: bad params, unknown prompts and missing arguments
// are -32602 naming what is wrong; handler failures are -32603.
func TestPromptGetErrors(t *testing.T) {
	c := resourceClient(t, Version20251125, func(cfg *Options) { cfg.Limits.MaxResultBytes = 1024 },
		func(s *Server) { addPromptFixtures(t, s) })
	m := MethodPromptsGet
	runBadParams(t, c, []badParams{
		{"no params", m, ``, []string{"needs params.name"}},
		{"no name", m, `{"arguments":{}}`, []string{"needs params.name"}},
		{"name number", m, `{"name":1}`, []string{"params.name must be a string, got 1"}},
		{"not object", m, `[1]`, []string{"must be an object {name, arguments?, _meta?}"}},
		{"twice", m, `{"name":"greet","name":"plain"}`, []string{"member name twice"}},
		{"unknown", m, `{"name":"nope"}`, []string{`unknown prompt "nope"`, "prompts/list"}},
		{"missing required", m, `{"name":"greet"}`, []string{`prompt "greet" needs the argument(s) "name"`}},
		{"missing required 2", m, `{"name":"greet","arguments":{"lang":"en"}}`, []string{`"name"`}},
		{"arguments array", m, `{"name":"greet","arguments":["Ada"]}`, []string{"params.arguments must be an object whose values are strings"}},
		{"argument number", m, `{"name":"greet","arguments":{"name":3}}`, []string{"params.arguments.name must be a string, got 3"}},
		{"argument null", m, `{"name":"greet","arguments":{"name":null}}`, []string{"params.arguments.name must be a string"}},
		{"argument twice", m, `{"name":"greet","arguments":{"name":"a","name":"b"}}`, []string{`"name" twice`}},
		{"_meta", m, `{"name":"plain","_meta":"x"}`, []string{"params._meta must be an object"}},
	})
	for _, tc := range []struct{ name, want string }{
		{"fails", "the template is missing"},
		{"nil", "neither a result nor an error"},
		{"panics", "panicked"},
		{"badrole", `role "system"`},
		{"badcontent", "base64 data"},
		{"big", "tools.maxResultBytes"},
	} {
		c.rpc(m, `{"name":"`+tc.name+`"}`).fails(t, tc.name, jsonrpc.CodeInternalError, `prompt "`+tc.name+`"`, tc.want)
	}
	c.quiet()
}

// TestPromptsListChanged: adding and removing prompts tells running
// sessions; prompts/list pages like the other lists.
func TestPromptsListChanged(t *testing.T) {
	c := resourceClient(t, Version20251125, func(cfg *Options) { cfg.Limits.PageSize = 2 }, nil)
	plain := func(context.Context, *GetPromptRequest) (*GetPromptResult, error) { return &GetPromptResult{}, nil }
	for _, n := range []string{"c", "a", "b"} {
		if err := c.srv.AddPrompt(Prompt{Name: n}, plain); err != nil {
			t.Fatal(err)
		}
		checkSchema(t, Version20251125, "PromptListChangedNotification", c.expectNotification(NotifyPromptsListChanged))
	}
	first := decode(t, c.rpc(MethodPromptsList, ``).ok(t, "page 1"))
	if len(first["prompts"].([]any)) != 2 {
		t.Fatalf("page 1: %v", first)
	}
	second := decode(t, c.rpc(MethodPromptsList, `{"cursor":`+quoteString(first["nextCursor"].(string))+`}`).ok(t, "page 2"))
	if p := second["prompts"].([]any); len(p) != 1 || p[0].(map[string]any)["name"] != "c" || second["nextCursor"] != nil {
		t.Fatalf("page 2: %v", second)
	}
	c.rpc(MethodPromptsList, `{"cursor":"bad"}`).fails(t, "bad cursor", jsonrpc.CodeInvalidParams, "invalid cursor", "prompts/list")
	if err := c.srv.RemovePrompt("a"); err != nil {
		t.Fatal(err)
	}
	c.expectNotification(NotifyPromptsListChanged)
	var ce *core.Error
	if err := c.srv.RemovePrompt("a"); !isCoreError(err, &ce) || ce.Code != core.CodeNotFound {
		t.Errorf("RemovePrompt of a removed prompt: %v", err)
	}
	c.quiet()
}

// TestPromptRegistrationErrors: bad definitions are refused.
func TestPromptRegistrationErrors(t *testing.T) {
	srv, _ := newTestServer(t, testConfig(), Options{}, nil)
	h := func(context.Context, *GetPromptRequest) (*GetPromptResult, error) { return &GetPromptResult{}, nil }
	if err := srv.AddPrompt(Prompt{Name: "dup"}, h); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		p    Prompt
		h    PromptHandler
		want string
	}{
		{"empty name", Prompt{}, h, "invalid prompt name"},
		{"bad name", Prompt{Name: "a b"}, h, "invalid prompt name"},
		{"long name", Prompt{Name: strings.Repeat("a", 129)}, h, "invalid prompt name"},
		{"no handler", Prompt{Name: "p"}, nil, "no handler"},
		{"duplicate", Prompt{Name: "dup"}, h, "already registered"},
		{"argument name", Prompt{Name: "p", Arguments: []PromptArgument{{}}}, h, "arguments[0] has no name"},
		{"argument twice", Prompt{Name: "p", Arguments: []PromptArgument{{Name: "a"}, {Name: "a"}}}, h, `two arguments are named "a"`},
		{"icon", Prompt{Name: "p", Icons: []Icon{{Src: ""}}}, h, "icons[0].src"},
		{"meta", Prompt{Name: "p", Meta: map[string]any{"c": make(chan int)}}, h, "_meta"},
	}
	for _, tc := range cases {
		err := srv.AddPrompt(tc.p, tc.h)
		var ce *core.Error
		if !isCoreError(err, &ce) || ce.Code != core.CodeInvalidArgument || !strings.Contains(ce.Message, tc.want) {
			t.Errorf("%s: %v, want INVALID_ARGUMENT saying %q", tc.name, err, tc.want)
		}
	}
}
