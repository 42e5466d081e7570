// Command mcpgo is an MCP server over stdio built with
// github.com/mark3labs/mcp-go (version pinned in go.mod), written as that
// library's README writes a server, with its input validation on
// (server.WithInputSchemaValidation) and two tools: noop, made with
// mcp.NewTool (an empty-object input schema), whose handler returns an
// empty CallToolResult, and lookup20 (internal/lookup20), made with
// mcp.NewToolWithRawSchema, answering {ok: true, id} as structured content.
// Served with server.ServeStdio; bench/compare measures it beside mcprt.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcprt/mcprt/bench/compare/internal/lookup20"
)

func noop(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}

func lookup(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultStructuredOnly(lookup20.Result{OK: true, ID: req.GetString("id", "")}), nil
}

func main() {
	s := server.NewMCPServer("mcpgo-noop", "1.0.0", server.WithToolCapabilities(false), server.WithInputSchemaValidation())
	s.AddTool(mcp.NewTool("noop", mcp.WithDescription("does nothing and returns an empty result")), noop)
	s.AddTool(mcp.NewToolWithRawSchema(lookup20.Name, lookup20.Description, lookup20.Schema), lookup)
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "server error:", err)
		os.Exit(1)
	}
}
