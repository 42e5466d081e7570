// Command mcpgo is a no-op MCP server over stdio built with
// github.com/mark3labs/mcp-go (version pinned in go.mod), written as that
// library's README writes a server: one tool, noop, made with mcp.NewTool
// (an empty-object input schema), whose handler returns an empty
// CallToolResult, served with server.ServeStdio. bench/compare measures it
// beside mcprt.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func noop(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}

func main() {
	s := server.NewMCPServer("mcpgo-noop", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("noop", mcp.WithDescription("does nothing and returns an empty result")), noop)
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "server error:", err)
		os.Exit(1)
	}
}
