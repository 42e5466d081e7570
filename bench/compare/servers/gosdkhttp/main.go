// Command gosdkhttp is a no-op MCP server over Streamable HTTP built with
// the official Go SDK (github.com/modelcontextprotocol/go-sdk, version
// pinned in go.mod), written as that SDK's README and examples write one:
// the server of servers/gosdk (two tools added with the typed mcp.AddTool:
// noop, returning an empty result, and lookup20) behind
// mcp.NewStreamableHTTPHandler with default options (stateful sessions,
// answers as text/event-stream), served by net/http at -addr.
//
// With -json the handler's JSONResponse option is set, so that answers are
// single application/json bodies, as mcprt's are: the comparison's
// go-sdk-http-json row, which tells the SDK's cost of event-stream framing
// from the rest.
//
// It stops gracefully on SIGTERM or SIGINT. With BENCH_CPUPROFILE set,
// SIGUSR1 starts a CPU profile into $BENCH_CPUPROFILE.tmp and SIGUSR2 stops
// it and renames the file to $BENCH_CPUPROFILE (for bench/compare's
// -cpuprofile).
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

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
	addr := flag.String("addr", "127.0.0.1:8080", "host:port to listen on")
	jsonResponse := flag.Bool("json", false, "answer with application/json bodies instead of event streams")
	flag.Parse()
	profileOnSignals(os.Getenv("BENCH_CPUPROFILE"))

	server := mcp.NewServer(&mcp.Implementation{Name: "gosdk-noop", Version: "v1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "noop", Description: "does nothing and returns an empty result"}, noop)
	mcp.AddTool(server, &mcp.Tool{Name: lookup20.Name, Description: lookup20.Description, InputSchema: lookup20.Schema}, lookup)
	var opts *mcp.StreamableHTTPOptions
	if *jsonResponse {
		opts = &mcp.StreamableHTTPOptions{JSONResponse: true}
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, opts)

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

// profileOnSignals writes CPU profiles to path between SIGUSR1 and
// SIGUSR2; it does nothing when path is empty.
func profileOnSignals(path string) {
	if path == "" {
		return
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		var f *os.File
		for sig := range sigs {
			switch {
			case sig == syscall.SIGUSR1 && f == nil:
				tmp, err := os.Create(path + ".tmp")
				if err != nil {
					continue
				}
				if pprof.StartCPUProfile(tmp) != nil {
					tmp.Close()
					continue
				}
				f = tmp
			case sig == syscall.SIGUSR2 && f != nil:
				pprof.StopCPUProfile()
				f.Close()
				f = nil
				os.Rename(path+".tmp", path)
			}
		}
	}()
}
