// Command mcpgohttp is a no-op MCP server over Streamable HTTP built with
// github.com/mark3labs/mcp-go (version pinned in go.mod), written as that
// library's README writes one: the server of servers/mcpgo (input
// validation on, the noop and lookup20 tools) behind
// server.NewStreamableHTTPServer with default options (stateful sessions),
// served by net/http at -addr. It stops gracefully on SIGTERM or SIGINT.
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"

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
	addr := flag.String("addr", "127.0.0.1:8080", "host:port to listen on")
	flag.Parse()

	s := server.NewMCPServer("mcpgo-noop", "1.0.0", server.WithToolCapabilities(false), server.WithInputSchemaValidation())
	s.AddTool(mcp.NewTool("noop", mcp.WithDescription("does nothing and returns an empty result")), noop)
	s.AddTool(mcp.NewToolWithRawSchema(lookup20.Name, lookup20.Description, lookup20.Schema), lookup)
	handler := server.NewStreamableHTTPServer(s)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	hs := &http.Server{Addr: *addr, Handler: handler}
	errc := make(chan error, 1)
	go func() { errc <- hs.ListenAndServe() }()
	select {
	case err := <-errc:
		log.Fatal(err)
	case <-ctx.Done():
	}
	if err := hs.Shutdown(context.Background()); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
