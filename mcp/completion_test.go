package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/jsonrpc"
)

// addCompletionFixtures registers prompts whose completion handlers show
// what they were asked, return too much, fail or panic.
func addCompletionFixtures(t *testing.T, s *Server) {
	t.Helper()
	plain := func(context.Context, *GetPromptRequest) (*GetPromptResult, error) { return &GetPromptResult{}, nil }
	many := func(n, total int, hasMore bool) CompletionHandler {
		return func(context.Context, *CompleteRequest) (*CompleteResult, error) {
			vals := make([]string, n)
			for i := range vals {
				vals[i] = "v" + itoa(i)
			}
			return &CompleteResult{Values: vals, Total: total, HasMore: hasMore}, nil
		}
	}
	prompts := []Prompt{
		{Name: "echo", Arguments: []PromptArgument{{Name: "a"}, {Name: "b"}},
			Complete: func(_ context.Context, req *CompleteRequest) (*CompleteResult, error) {
				ctx, _ := json.Marshal(req.Context)
				return &CompleteResult{Values: []string{req.Prompt + "|" + req.URITemplate + "|" + req.Argument + "|" +
					req.Value + "|" + string(ctx) + "|" + req.ProtocolVersion}}, nil
			}},
		{Name: "many250", Arguments: []PromptArgument{{Name: "a"}}, Complete: many(250, 0, false)},
		{Name: "many100", Arguments: []PromptArgument{{Name: "a"}}, Complete: many(100, 0, false)},
		{Name: "few-of-500", Arguments: []PromptArgument{{Name: "a"}}, Complete: many(3, 500, false)},
		{Name: "total-too-small", Arguments: []PromptArgument{{Name: "a"}}, Complete: many(3, 1, false)},
		{Name: "nothing", Arguments: []PromptArgument{{Name: "a"}}, Complete: many(0, 0, false)},
		{Name: "no-completer", Arguments: []PromptArgument{{Name: "a"}}},
		{Name: "cfails", Arguments: []PromptArgument{{Name: "a"}},
			Complete: func(context.Context, *CompleteRequest) (*CompleteResult, error) {
				return nil, errors.New("index offline")
			}},
		{Name: "cpanics", Arguments: []PromptArgument{{Name: "a"}},
			Complete: func(context.Context, *CompleteRequest) (*CompleteResult, error) { panic("boom") }},
	}
	for _, p := range prompts {
		if err := s.AddPrompt(p, plain); err != nil {
			t.Fatal(err)
		}
	}
	addResourceFixtures(t, s)
	addPromptFixtures(t, s)
}

func completeParams(ref, arg, value, ctx string) string {
	p := `{"ref":` + ref + `,"argument":{"name":` + quoteString(arg) + `,"value":` + quoteString(value) + `}`
	if ctx != "" {
		p += `,"context":` + ctx
	}
	return p + `}`
}

func promptRef(name string) string { return `{"type":"ref/prompt","name":` + quoteString(name) + `}` }

func templateRef(uri string) string { return `{"type":"ref/resource","uri":` + quoteString(uri) + `}` }

// TestCompletionAcrossRevisions: prompt arguments and template variables
// complete under every revision; context.arguments reaches the handler
// from 2025-06-18 on; results are cut at 100 values with total and
// hasMore, and valid against the revision's schema.
func TestCompletionAcrossRevisions(t *testing.T) {
	cases := []struct{ name, params, want string }{
		{"prompt", completeParams(promptRef("greet"), "lang", "e", ""), `{"completion":{"values":["en","EN-gb"],"total":2,"hasMore":false}}`},
		{"prompt none", completeParams(promptRef("greet"), "lang", "x", ""), `{"completion":{"values":[],"hasMore":false}}`},
		{"template", completeParams(templateRef("file:///logs/{day}"), "day", "T", ""), `{"completion":{"values":["tuesday","Thursday"],"total":2,"hasMore":false}}`},
		{"template without completer", completeParams(templateRef("db://{table}/{id}{?fields*}"), "fields", "", ""), `{"completion":{"values":[],"hasMore":false}}`},
		{"prompt without completer", completeParams(promptRef("no-completer"), "a", "", ""), `{"completion":{"values":[],"hasMore":false}}`},
		{"250 values", completeParams(promptRef("many250"), "a", "", ""), ``},
		{"100 values", completeParams(promptRef("many100"), "a", "", ""), ``},
		{"3 of 500", completeParams(promptRef("few-of-500"), "a", "", ""), `{"completion":{"values":["v0","v1","v2"],"total":500,"hasMore":true}}`},
		{"total too small", completeParams(promptRef("total-too-small"), "a", "", ""), `{"completion":{"values":["v0","v1","v2"],"total":3,"hasMore":false}}`},
		{"nothing", completeParams(promptRef("nothing"), "a", "", ""), `{"completion":{"values":[],"hasMore":false}}`},
	}
	for _, v := range SupportedVersions() {
		t.Run(v, func(t *testing.T) {
			c := resourceClient(t, v, nil, func(s *Server) { addCompletionFixtures(t, s) })
			for _, tc := range cases {
				raw := c.rpc(MethodCompletionComplete, tc.params).ok(t, tc.name)
				checkSchema(t, v, "CompleteResult", raw)
				if tc.want != "" && string(raw) != tc.want {
					t.Errorf("%s:\n got %s\nwant %s", tc.name, raw, tc.want)
				}
			}
			var res struct {
				Completion struct {
					Values  []string
					Total   int
					HasMore bool
				}
			}
			_ = json.Unmarshal(c.rpc(MethodCompletionComplete, cases[5].params).ok(t, "250"), &res)
			if r := res.Completion; len(r.Values) != MaxCompletionValues || r.Total != 250 || !r.HasMore || r.Values[99] != "v99" {
				t.Errorf("250 values: %d values, total %d, hasMore %v", len(r.Values), r.Total, r.HasMore)
			}
			var hundred struct {
				Completion struct {
					Values  []string
					Total   *int
					HasMore bool
				}
			}
			_ = json.Unmarshal(c.rpc(MethodCompletionComplete, cases[6].params).ok(t, "100"), &hundred)
			if r := hundred.Completion; len(r.Values) != 100 || r.Total != nil || r.HasMore {
				t.Errorf("100 values: %d values, total %d, hasMore %v", len(r.Values), r.Total, r.HasMore)
			}
			// The handler sees the ref, the argument and, from 2025-06-18,
			// the context.
			raw := c.rpc(MethodCompletionComplete, completeParams(promptRef("echo"), "b", "x",
				`{"arguments":{"a":"1"}}`)).ok(t, "echo")
			ctx := "null"
			if v >= Version20250618 {
				ctx = `{"a":"1"}`
			}
			want := `{"completion":{"values":[` + quoteString("echo||b|x|"+ctx+"|"+v) + `],"hasMore":false}}`
			if string(raw) != want {
				t.Errorf("echo:\n got %s\nwant %s", raw, want)
			}
		})
	}
}

// TestCompletionErrors: every malformed request is -32602 saying what is
// wrong; handler failures are -32603.
func TestCompletionErrors(t *testing.T) {
	c := resourceClient(t, Version20251125, nil, func(s *Server) { addCompletionFixtures(t, s) })
	m := MethodCompletionComplete
	arg := `"argument":{"name":"a","value":""}`
	runBadParams(t, c, []badParams{
		{"no params", m, ``, []string{"needs params.argument"}},
		{"not object", m, `[]`, []string{"must be an object {ref, argument, context?, _meta?}"}},
		{"no ref", m, `{` + arg + `}`, []string{"needs params.ref"}},
		{"ref string", m, `{"ref":"greet",` + arg + `}`, []string{"needs params.ref"}},
		{"ref type", m, `{"ref":{"type":"ref/tool","name":"x"},` + arg + `}`, []string{`params.ref must be`, `"ref/tool"`}},
		{"ref no type", m, `{"ref":{"name":"greet"},` + arg + `}`, []string{`params.ref must be`}},
		{"prompt no name", m, `{"ref":{"type":"ref/prompt"},` + arg + `}`, []string{`"ref/prompt" needs name`}},
		{"resource no uri", m, `{"ref":{"type":"ref/resource","name":"x"},` + arg + `}`, []string{`"ref/resource" needs uri`}},
		{"unknown prompt", m, completeParams(promptRef("nope"), "a", "", ""), []string{`unknown prompt "nope"`}},
		{"unknown template", m, completeParams(templateRef("file:///nope/{x}"), "x", "", ""), []string{`no resource template has the uriTemplate "file:///nope/{x}"`}},
		{"a resource is no template", m, completeParams(templateRef("file:///notes.txt"), "x", "", ""), []string{"resources/templates/list"}},
		{"undeclared argument", m, completeParams(promptRef("greet"), "mood", "", ""), []string{`prompt "greet" has no argument "mood"; it has: name, lang`}},
		{"unknown variable", m, completeParams(templateRef("file:///logs/{day}"), "month", "", ""), []string{`has no variable "month"; it has: day`}},
		{"no argument", m, `{"ref":` + promptRef("greet") + `}`, []string{"needs params.argument"}},
		{"argument no value", m, `{"ref":` + promptRef("greet") + `,"argument":{"name":"lang"}}`, []string{"needs both name and value"}},
		{"argument value number", m, `{"ref":` + promptRef("greet") + `,"argument":{"name":"lang","value":1}}`, []string{"params.argument.value must be a string"}},
		{"context array", m, completeParams(promptRef("greet"), "lang", "", `[]`), []string{"params.context must be an object"}},
		{"context arguments", m, completeParams(promptRef("greet"), "lang", "", `{"arguments":{"name":1}}`), []string{"params.context.arguments.name must be a string"}},
		{"context twice", m, completeParams(promptRef("greet"), "lang", "", `{"arguments":{},"arguments":{}}`), []string{"member arguments twice"}},
		{"_meta", m, `{"ref":` + promptRef("greet") + `,` + arg + `,"_meta":1}`, []string{"params._meta must be an object"}},
	})
	c.rpc(m, completeParams(promptRef("cfails"), "a", "", "")).fails(t, "fails", jsonrpc.CodeInternalError, "index offline")
	c.rpc(m, completeParams(promptRef("cpanics"), "a", "", "")).fails(t, "panics", jsonrpc.CodeInternalError, "panicked")
	c.quiet()
}

// TestCapabilitiesFollowRegistrations: a server advertises resources,
// prompts and completions only once it serves them, and answers their
// methods with -32601 until then; the advertised capabilities validate
// against each revision's schema.
func TestCapabilitiesFollowRegistrations(t *testing.T) {
	plain := func(context.Context, *GetPromptRequest) (*GetPromptResult, error) { return &GetPromptResult{}, nil }
	cases := []struct {
		name   string
		setup  func(*Server) error
		want   string
		served []string // method families served
	}{
		{"nothing", func(*Server) error { return nil }, `{"tools":{"listChanged":true}}`, nil},
		{"a resource", func(s *Server) error { return s.AddResource(Resource{URI: "file:///a", Name: "a"}, textHandler("a")) },
			`{"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}`, []string{"resources"}},
		{"a template", func(s *Server) error {
			return s.AddResourceTemplate(ResourceTemplate{URITemplate: "file:///{x}", Name: "a"}, textHandler("a"))
		}, `{"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}`, []string{"resources"}},
		{"a prompt", func(s *Server) error { return s.AddPrompt(Prompt{Name: "p"}, plain) },
			`{"prompts":{"listChanged":true},"tools":{"listChanged":true}}`, []string{"prompts"}},
		{"a completing prompt", func(s *Server) error {
			return s.AddPrompt(Prompt{Name: "p", Arguments: []PromptArgument{{Name: "a"}}, Complete: CompletionsFrom(nil)}, plain)
		}, `{"completions":{},"prompts":{"listChanged":true},"tools":{"listChanged":true}}`, []string{"prompts", "completion"}},
		{"a completing template, then removed", func(s *Server) error {
			if err := s.AddResourceTemplate(ResourceTemplate{URITemplate: "file:///{x}", Name: "a", Complete: CompletionsFrom(nil)},
				textHandler("a")); err != nil {
				return err
			}
			return s.RemoveResourceTemplate("file:///{x}")
		}, `{"completions":{},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}`,
			[]string{"resources", "completion"}},
	}
	calls := map[string][][2]string{
		"resources": {{MethodResourcesList, ``}, {MethodResourcesTemplatesList, ``},
			{MethodResourcesRead, `{"uri":"file:///a"}`}, {MethodResourcesSubscribe, `{"uri":"file:///a"}`},
			{MethodResourcesUnsubscribe, `{"uri":"file:///a"}`}},
		"prompts":    {{MethodPromptsList, ``}, {MethodPromptsGet, `{"name":"p"}`}},
		"completion": {{MethodCompletionComplete, completeParams(promptRef("p"), "a", "", "")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := resourceClient(t, "", nil, func(s *Server) {
				if err := tc.setup(s); err != nil {
					t.Fatal(err)
				}
			})
			res := c.handshake(Version20251125, `{}`, `{"name":"t","version":"1"}`)
			got := res["capabilities"].(map[string]any)
			delete(got, "logging")      // not this test's business
			caps := mustMarshal(t, got) // keys sorted
			if string(caps) != tc.want {
				t.Errorf("capabilities %s, want %s", caps, tc.want)
			}
			for _, v := range SupportedVersions() {
				checkSchema(t, v, "ServerCapabilities", mustMarshal(t, c.srv.capabilities().forVersion(v)))
			}
			for family, list := range calls {
				for _, call := range list {
					r := c.rpc(call[0], call[1])
					notFound := r.Error != nil && r.Error.Code == jsonrpc.CodeMethodNotFound
					if served := slices.Contains(tc.served, family); served == notFound {
						t.Errorf("%s: served %v, got %s %+v", call[0], served, r.Result, r.Error)
					}
					if notFound && !strings.Contains(r.Error.Message, "did not advertise") {
						t.Errorf("%s: %q", call[0], r.Error.Message)
					}
				}
			}
		})
	}
}

// TestCompletionsCapabilityByRevision: revision 2024-11-05 has
// completion/complete but no completions capability, so none is
// advertised under it.
func TestCompletionsCapabilityByRevision(t *testing.T) {
	srv, _ := newTestServer(t, testConfig(), Options{}, func(s *Server) { addPromptFixtures(t, s) })
	for _, v := range SupportedVersions() {
		caps := srv.capabilities().forVersion(v)
		if (caps.Completions != nil) != (v >= Version20250326) || caps.Prompts == nil || caps.Resources != nil {
			t.Errorf("%s: %s", v, mustMarshal(t, caps))
		}
	}
}
