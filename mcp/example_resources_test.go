package mcp_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// A resource with a fixed URI, and a template whose handler gets the
// variables of the URI it reads. A URI that names nothing is -32002 with
// data.uri. (exchange, in example_test.go, runs an in-memory session.)
func ExampleServer_AddResourceTemplate() {
	srv, _ := mcp.NewServer(mcp.Options{Name: "notes", Version: "1.0.0", IDs: &core.SequenceGenerator{}})
	_ = srv.AddResource(mcp.Resource{URI: "file:///readme.md", Name: "readme", MIMEType: "text/markdown"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
				mcp.TextResource(req.URI, "text/markdown", "# Notes")}}, nil
		})
	_ = srv.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "file:///notes/{day}", Name: "daily-note"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			day := req.Variables["day"]
			if day == "someday" {
				return nil, core.NewError(core.CodeNotFound, "no note for "+day)
			}
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
				mcp.TextResource("", "text/plain", "note of "+day)}}, nil
		})
	exchange(srv,
		`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///notes/monday"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///notes/someday"}}`,
	)
	// Output:
	// {"resources":[{"uri":"file:///readme.md","name":"readme","mimeType":"text/markdown"}]}
	// {"contents":[{"uri":"file:///notes/monday","mimeType":"text/plain","text":"note of monday"}]}
	// error: {"code":-32002,"message":"Resource not found: no note for someday","data":{"code":"NOT_FOUND","correlationId":"00000000-0000-4000-8000-000000000001","uri":"file:///notes/someday"}}
}

// Subscribers hear of changes to a resource; other sessions do not.
func ExampleServer_ResourceUpdated() {
	srv, _ := mcp.NewServer(mcp.Options{Name: "feeds", Version: "1.0.0"})
	_ = srv.AddResource(mcp.Resource{URI: "feed://news", Name: "news"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{mcp.TextResource(req.URI, "", "headlines")}}, nil
		})
	// With no session subscribed, nobody is told.
	fmt.Println(srv.ResourceUpdated(context.Background(), "feed://news"))
	// Output: 0
}

// A prompt with a required argument and a completion function for it.
func ExampleServer_AddPrompt() {
	srv, _ := mcp.NewServer(mcp.Options{Name: "review", Version: "1.0.0", IDs: &core.SequenceGenerator{}})
	_ = srv.AddPrompt(mcp.Prompt{
		Name:        "code_review",
		Description: "Review a change in one language",
		Arguments:   []mcp.PromptArgument{{Name: "language", Required: true}},
		Complete:    mcp.CompletionsFrom(map[string][]string{"language": {"go", "python", "rust"}}),
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser,
			Content: mcp.TextContent("Review this " + strings.ToUpper(req.Arguments["language"]) + " change.")}}}, nil
	})
	exchange(srv,
		`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"code_review","arguments":{"language":"go"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"code_review"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"code_review"},"argument":{"name":"language","value":"py"}}}`,
	)
	// Output:
	// {"messages":[{"role":"user","content":{"type":"text","text":"Review this GO change."}}]}
	// error: {"code":-32602,"message":"Invalid params: prompt \"code_review\" needs the argument(s) \"language\" in params.arguments; prompts/list says which arguments each prompt takes","data":{"correlationId":"00000000-0000-4000-8000-000000000001"}}
	// {"completion":{"values":["python"],"total":1,"hasMore":false}}
}
