// Command gosdk is an MCP server over stdio built with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk, version pinned in go.mod),
// written as that SDK's README writes a server, with two tools added with
// the typed mcp.AddTool (arguments validated against the input schema,
// results against the output schema): noop, whose input schema (an empty
// object) is inferred from struct{} and which returns an empty result, and
// lookup20 (internal/lookup20), whose input schema is given.
// bench/compare measures it beside mcprt.
package main

import (
	"context"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcprt/mcprt/bench/compare/internal/lookup20"
)

func noop(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{}, nil, nil
}

func lookup(_ context.Context, _ *mcp.CallToolRequest, in lookup20.Args) (*mcp.CallToolResult, lookup20.Result, error) {
	return nil, lookup20.Result{OK: true, ID: in.ID}, nil
}

func main() {
	server := mcp.NewServer(&mcp.Implementation{Name: "gosdk-noop", Version: "v1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "noop", Description: "does nothing and returns an empty result"}, noop)
	mcp.AddTool(server, &mcp.Tool{Name: lookup20.Name, Description: lookup20.Description, InputSchema: lookup20.Schema}, lookup)
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
