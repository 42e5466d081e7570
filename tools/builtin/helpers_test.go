package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/fixtures"
	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
)

// waitLimit bounds every wait of the tests; it is never reached by a
// passing test.
const waitLimit = 60 * time.Second

// client speaks JSON-RPC to an in-process mcp.Session over an in-memory
// stream (jsonrpc.NewMemoryPair). Responses
// are matched to requests by id, so calls may overlap; notifications are
// collected apart.
type client struct {
	t      *testing.T
	srv    *mcp.Server
	agents *aacp.Coordinator
	logs   *syncBuffer

	conn jsonrpc.Stream // the client's end of the session's in-memory stream
	*routes
}

// routes matches responses to requests; it is shared by the copies of a
// client that subtests use (see sub).
type routes struct {
	mu      sync.Mutex
	nextID  int                            // guarded by mu
	pending map[string]chan map[string]any // guarded by mu
	raw     map[string][]byte              // responses as the server wrote them, by id; guarded by mu
	notes   chan map[string]any
}

// sub returns a client for the subtest t on the same session.
func (c *client) sub(t *testing.T) *client {
	cc := *c
	cc.t = t
	return &cc
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// entries returns the decoded log entries whose msg is msg.
func (s *syncBuffer) entries(msg string) []map[string]any {
	s.mu.Lock()
	text := s.b.String()
	s.mu.Unlock()
	var out []map[string]any
	for line := range strings.SplitSeq(text, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// setup describes the server a test runs against.
type setup struct {
	mode      string             // server.mode; FULL when empty
	admin     bool               // both admin switches on
	policy    string             // tools.adminPolicy.mode; deny_all when empty
	noAgents  bool               // Options.Agents nil
	version   string             // Options.Version
	queue     int                // the coordinator's QueueSize; its default when 0
	network   string             // mcp.Options.Transport (the server's default); stdio when empty
	transport string             // the session's transport (mcp.SessionOptions); the server's when empty
	tweak     func(*config.Base) // last changes to the config
}

// newClient builds a server per s, registers the built-ins (and in mode
// TEST the fixtures, as the binary does), starts a
// session and completes the handshake.
func newClient(t *testing.T, s setup) *client {
	t.Helper()
	cfg := config.DefaultBase("9.9.9-config")
	if s.mode != "" {
		cfg.Server.Mode = s.mode
	}
	cfg.Tools.AdminRegistrationEnabled = s.admin
	cfg.Security.DynamicRegistrationEnabled = s.admin
	if s.policy != "" {
		cfg.Tools.AdminPolicy.Mode = s.policy
	}
	if s.tweak != nil {
		s.tweak(&cfg)
	}
	logs := &syncBuffer{}
	srv, err := mcp.NewServer(serverOptions(cfg, mcp.Options{Transport: s.network,
		Logger: core.NewLogger(logs, core.LogOptions{Level: slog.LevelDebug, RedactKeys: cfg.Logging.RedactKeys})}))
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, srv: srv, logs: logs, routes: &routes{pending: map[string]chan map[string]any{},
		raw: map[string][]byte{}, notes: make(chan map[string]any, 100)}}
	if !s.noAgents {
		c.agents = aacp.NewCoordinator(aacp.Options{MaxPayloadBytes: cfg.Tools.MaxPayloadBytes, QueueSize: s.queue})
		t.Cleanup(func() { _ = c.agents.Close(context.Background()) })
	}
	if err := Register(srv, Options{Agents: c.agents, Version: s.version,
		Admin:       cfg.Tools.AdminRegistrationEnabled && cfg.Security.DynamicRegistrationEnabled,
		AdminPolicy: cfg.Tools.AdminPolicy.Mode, MaxStateBytes: cfg.Tools.MaxStateBytes, RedactKeys: cfg.Logging.RedactKeys}); err != nil {
		t.Fatalf("Register: %v", err)
	}
	// As the binary does: the fixtures of mode TEST (nothing in other modes).
	if err := fixtures.Register(srv, fixtures.Options{Agents: c.agents}); err != nil {
		t.Fatalf("fixtures.Register: %v", err)
	}
	serverEnd, clientEnd := jsonrpc.NewMemoryPair()
	c.conn = clientEnd
	sess := srv.Connect(serverEnd, &mcp.SessionOptions{Transport: s.transport})
	served, read := make(chan struct{}), make(chan struct{})
	go func() {
		_ = sess.Serve(context.Background())
		close(served)
	}()
	go func() {
		c.read()
		close(read)
	}()
	t.Cleanup(func() {
		_ = clientEnd.Close() // ends both ends: Serve returns, read sees io.EOF
		<-served
		<-read
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_ = sess.Wait(ctx)
	})
	c.request("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"builtin-test","version":"1"}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// read routes the session's output until the stream ends: responses to
// their waiters (with their raw text kept in c.raw), notifications to
// c.notes.
func (c *client) read() {
	for {
		msg, err := c.conn.Read()
		if err != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(msg, &m); err != nil {
			c.t.Errorf("the server wrote a message that is not JSON: %q", msg)
			continue
		}
		id, isResponse := m["id"].(string)
		if !isResponse {
			c.notes <- m
			continue
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.raw[id] = bytes.Clone(msg)
		c.mu.Unlock()
		if ch == nil {
			c.t.Errorf("response to an unknown request id %q: %s", id, msg)
			continue
		}
		ch <- m
	}
}

// send writes one message (a JSON text without newlines) to the session.
func (c *client) send(line string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := c.conn.Write(ctx, jsonrpc.Outgoing{Data: []byte(line + "\n")}); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// start sends a request and returns its id and a channel for its response.
func (c *client) start(method, params string) (string, <-chan map[string]any) {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := "r" + strconv.Itoa(c.nextID)
	ch := make(chan map[string]any, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	var compact bytes.Buffer // one message per line: no newlines inside
	if err := json.Compact(&compact, []byte(params)); err != nil {
		c.t.Fatalf("%s params are not JSON: %v", method, err)
	}
	c.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"` + method + `","params":` + compact.String() + `}`)
	return id, ch
}

// wait returns the response on ch.
func (c *client) wait(ch <-chan map[string]any) map[string]any {
	c.t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(waitLimit):
		c.logs.mu.Lock()
		logs := c.logs.b.String()
		c.logs.mu.Unlock()
		c.t.Fatalf("no response within the wait limit; server log:\n%s", logs)
		return nil
	}
}

// request sends a request and returns its result, failing on an error
// response.
func (c *client) request(method, params string) map[string]any {
	c.t.Helper()
	_, ch := c.start(method, params)
	m := c.wait(ch)
	res, ok := m["result"].(map[string]any)
	if !ok {
		c.t.Fatalf("%s: no result: %v", method, m)
	}
	return res
}

// callAsync starts tools/call of name with args (a JSON object text, ""
// for none).
func (c *client) callAsync(name, args string) (string, <-chan map[string]any) {
	c.t.Helper()
	params := `{"name":` + strconv.Quote(name)
	if args != "" {
		params += `,"arguments":` + args
	}
	return c.start("tools/call", params+`}`)
}

// call calls a tool and returns the CallToolResult.
func (c *client) call(name, args string) map[string]any {
	c.t.Helper()
	_, ch := c.callAsync(name, args)
	m := c.wait(ch)
	res, ok := m["result"].(map[string]any)
	if !ok {
		c.t.Fatalf("tools/call %s: no result: %v", name, m)
	}
	return res
}

// serverOptions is opts with the settings of cfg, mapped as the binary maps
// them (config.ServerOptions); a mapping error panics, failing the test.
func serverOptions(cfg config.Base, opts mcp.Options) mcp.Options {
	o, err := config.ServerOptions(cfg, opts)
	if err != nil {
		panic(fmt.Sprintf("config.ServerOptions: %v", err))
	}
	return o
}
