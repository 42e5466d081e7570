// Command barehttp is the floor of the HTTP comparison: no MCP library,
// just what it costs net/http to take a POST, decode its envelope and
// write a reply. Its handler reads the body, decodes the message's id and
// method with encoding/json and writes a canned application/json reply: a
// real one to initialize (with an Mcp-Session-Id header) and tools/list,
// so that the harness's handshake works, an empty result to tools/call and
// -32601 to anything else; a notification gets 202 Accepted and DELETE
// 204. There are no sessions: every request is served alike. It listens
// at -addr and stops gracefully on SIGTERM or SIGINT.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

const (
	initializeResult = `,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":false}},` +
		`"serverInfo":{"name":"barehttp","version":"1.0.0"}}}`
	toolsListResult = `,"result":{"tools":[{"name":"noop","description":"does nothing and returns an empty result",` +
		`"inputSchema":{"type":"object"}}]}}`
	toolsCallResult = `,"result":{"content":[]}}`
	methodNotFound  = `,"error":{"code":-32601,"message":"Method not found"}}`
)

// envelope is the part of a message the handler looks at.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func serve(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var env envelope
	if err != nil || json.Unmarshal(body, &env) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if len(env.ID) == 0 || string(env.ID) == "null" {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	reply := make([]byte, 0, 256)
	reply = append(reply, `{"jsonrpc":"2.0","id":`...)
	reply = append(reply, env.ID...)
	switch env.Method {
	case "initialize":
		w.Header().Set("Mcp-Session-Id", "bare")
		reply = append(reply, initializeResult...)
	case "tools/list":
		reply = append(reply, toolsListResult...)
	case "tools/call":
		reply = append(reply, toolsCallResult...)
	default:
		reply = append(reply, methodNotFound...)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(reply)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "host:port to listen on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	hs := &http.Server{Addr: *addr, Handler: http.HandlerFunc(serve)}
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
