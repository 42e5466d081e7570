// Command gosdk is a no-op MCP server over stdio built with the official Go
// SDK (github.com/modelcontextprotocol/go-sdk, version pinned in go.mod),
// written as that SDK's README writes a server: one tool, noop, added with
// the typed mcp.AddTool so its input schema (an empty object) is inferred
// from struct{} and its arguments are validated, returning an empty
// result. bench/compare measures it beside mcprt.
package main

import (
	"context"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func noop(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{}, nil, nil
}

func main() {
	server := mcp.NewServer(&mcp.Implementation{Name: "gosdk-noop", Version: "v1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "noop", Description: "does nothing and returns an empty result"}, noop)
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
