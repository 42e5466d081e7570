package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
)

// confClient is a client of an in-process server with the conformance
// fixtures, over an in-memory stream. Unlike client it declares
// capabilities and answers the server's requests (sampling, elicitation)
// with the handler registered for their method.
type confClient struct {
	t    *testing.T
	srv  *mcp.Server
	conn jsonrpc.Stream

	mu       sync.Mutex
	nextID   int
	pending  map[string]chan map[string]any                       // guarded by mu
	handlers map[string]func(params json.RawMessage) (any, error) // guarded by mu
	asked    map[string][]json.RawMessage                         // params of the server's requests, by method; guarded by mu
	notes    chan map[string]any
}

// newConfClient starts a session on a server whose mode and fixtures are
// as given, and completes the handshake declaring capabilities (a JSON
// object).
func newConfClient(t *testing.T, mode string, fixtures []string, capabilities string) *confClient {
	t.Helper()
	cfg := core.DefaultConfig("9.9.9")
	cfg.Server.Mode = mode
	cfg.Server.Fixtures = fixtures
	srv, err := mcp.NewServer(mcp.Options{Config: &cfg, Logger: core.NewLogger(io.Discard, core.LogOptions{Level: slog.LevelError})})
	if err != nil {
		t.Fatal(err)
	}
	if err := Register(srv, Options{}); err != nil {
		t.Fatalf("Register: %v", err)
	}
	serverEnd, clientEnd := jsonrpc.NewMemoryPair()
	c := &confClient{t: t, srv: srv, conn: clientEnd, pending: map[string]chan map[string]any{},
		handlers: map[string]func(json.RawMessage) (any, error){}, asked: map[string][]json.RawMessage{},
		notes: make(chan map[string]any, 100)}
	sess := srv.Connect(serverEnd, nil)
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
		_ = clientEnd.Close()
		<-served
		<-read
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_ = sess.Wait(ctx)
	})
	c.request("initialize", `{"protocolVersion":"2025-11-25","capabilities":`+capabilities+`,"clientInfo":{"name":"conformance-test","version":"1"}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// conformanceClient is a client of a TEST server with the conformance
// fixtures that can sample and elicit.
func conformanceClient(t *testing.T) *confClient {
	return newConfClient(t, core.ModeTest, []string{core.FixtureConformance}, `{"sampling":{},"elicitation":{}}`)
}

// handle makes the client answer the server's requests of method with h.
func (c *confClient) handle(method string, h func(params json.RawMessage) (any, error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.handlers[method] = h
}

// requests returns the params of the server's requests of method so far.
func (c *confClient) requests(method string) []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asked[method]
}

func (c *confClient) read() {
	for {
		msg, err := c.conn.Read()
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		var whole map[string]any
		if json.Unmarshal(msg, &m) != nil || json.Unmarshal(msg, &whole) != nil {
			c.t.Errorf("the server wrote a message that is not JSON: %q", msg)
			continue
		}
		switch {
		case m.Method != "" && m.ID != nil:
			go c.answer(m.ID, m.Method, m.Params)
		case m.Method != "":
			c.notes <- whole
		default:
			id, _ := whole["id"].(string)
			c.mu.Lock()
			ch := c.pending[id]
			delete(c.pending, id)
			c.mu.Unlock()
			if ch == nil {
				c.t.Errorf("response to an unknown request: %s", msg)
				continue
			}
			ch <- whole
		}
	}
}

// answer replies to a request of the server.
func (c *confClient) answer(id json.RawMessage, method string, params json.RawMessage) {
	c.mu.Lock()
	c.asked[method] = append(c.asked[method], bytes.Clone(params))
	h := c.handlers[method]
	c.mu.Unlock()
	reply := map[string]any{"jsonrpc": "2.0", "id": id}
	if h == nil {
		reply["error"] = map[string]any{"code": -32601, "message": "no handler for " + method}
	} else if res, err := h(params); err != nil {
		reply["error"] = map[string]any{"code": -32603, "message": err.Error()}
	} else {
		reply["result"] = res
	}
	b, err := json.Marshal(reply)
	if err != nil {
		c.t.Errorf("answer %s: %v", method, err)
		return
	}
	c.send(string(b))
}

func (c *confClient) send(line string) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := c.conn.Write(ctx, jsonrpc.Outgoing{Data: []byte(line + "\n")}); err != nil {
		c.t.Errorf("send: %v", err)
	}
}

// response sends a request and returns the whole response.
func (c *confClient) response(method, params string) map[string]any {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := "c" + strconv.Itoa(c.nextID)
	ch := make(chan map[string]any, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(params)); err != nil {
		c.t.Fatalf("%s params are not JSON: %v", method, err)
	}
	c.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"` + method + `","params":` + compact.String() + `}`)
	select {
	case m := <-ch:
		return m
	case <-time.After(waitLimit):
		c.t.Fatalf("%s: no response within %v", method, waitLimit)
		return nil
	}
}

// request sends a request and returns its result, failing on an error.
func (c *confClient) request(method, params string) map[string]any {
	c.t.Helper()
	m := c.response(method, params)
	res, ok := m["result"].(map[string]any)
	if !ok {
		c.t.Fatalf("%s %s: no result: %v", method, params, m)
	}
	return res
}

// call calls a tool (args: a JSON object, "" for none) and returns the
// CallToolResult.
func (c *confClient) call(name, args string) map[string]any {
	c.t.Helper()
	params := `{"name":` + strconv.Quote(name)
	if args != "" {
		params += `,"arguments":` + args
	}
	return c.request("tools/call", params+`}`)
}

// drainNotes returns the notifications received so far.
func (c *confClient) drainNotes() []map[string]any {
	var out []map[string]any
	for {
		select {
		case n := <-c.notes:
			out = append(out, n)
		default:
			return out
		}
	}
}

// nextNote waits for the next notification of method, skipping others.
func (c *confClient) nextNote(method string) map[string]any {
	c.t.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case n := <-c.notes:
			if n["method"] == method {
				return n
			}
		case <-deadline:
			c.t.Fatalf("no %s notification within %v", method, waitLimit)
			return nil
		}
	}
}

// jsonOf decodes the JSON text s (for expected values).
func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad expected JSON %s: %v", s, err)
	}
	return v
}

// wantJSON reports a difference between got (decoded JSON) and the JSON
// text want.
func wantJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	if d := cmp.Diff(jsonOf(t, want), got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}
