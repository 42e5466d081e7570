package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
)

// testClient speaks JSON-RPC to an in-process Session over pipes.
type testClient struct {
	t      *testing.T
	srv    *Server
	sess   *Session
	in     *io.PipeWriter
	lines  chan string
	logBuf *syncBuffer
	done   chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// records returns the decoded "tool call completed" log entries.
func (s *syncBuffer) records() []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(s.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "tool call completed" {
			out = append(out, m)
		}
	}
	return out
}

func testConfig() core.Config {
	cfg := core.DefaultConfig("test")
	cfg.Logging.Level = "debug"
	return cfg
}

// newTestClient builds a server with cfg, lets setup register tools, starts
// a session and completes the handshake with the given revision ("" skips
// the handshake).
func newTestClient(t *testing.T, cfg core.Config, opts Options, setup func(*Server), version string) *testClient {
	t.Helper()
	logBuf := &syncBuffer{}
	opts.Config = &cfg
	opts.Logger = core.NewLogger(logBuf, core.LogOptions{Level: slog.LevelDebug})
	srv, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(srv)
	}
	pr, pw := io.Pipe()
	outR, outW := io.Pipe()
	c := &testClient{t: t, srv: srv, in: pw, lines: make(chan string, 1000), logBuf: logBuf, done: make(chan struct{})}
	c.sess = srv.NewSession(pr, outW)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	go func() {
		_ = c.sess.Serve(context.Background())
		close(c.done)
	}()
	t.Cleanup(func() {
		pw.Close()
		<-c.done
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.sess.Wait(ctx)
		outW.Close()
	})
	if version != "" {
		c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version +
			`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		c.expect()
		c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		waitFor(t, func() bool { return c.sess.State() == jsonrpc.StateRunning })
	}
	return c
}

func (c *testClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

func (c *testClient) expect() map[string]any {
	c.t.Helper()
	select {
	case l := <-c.lines:
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			c.t.Fatalf("output is not JSON: %q", l)
		}
		return m
	case <-time.After(10 * time.Second):
		c.t.Fatal("no output within 10s")
		return nil
	}
}

func (c *testClient) silence(d time.Duration) {
	c.t.Helper()
	select {
	case l := <-c.lines:
		c.t.Fatalf("unexpected output: %s", l)
	case <-time.After(d):
	}
}

// call sends tools/call and returns the result object.
func (c *testClient) call(id, name, args string) map[string]any {
	c.t.Helper()
	params := `{"name":` + quoteString(name)
	if args != "" {
		params += `,"arguments":` + args
	}
	params += `}`
	c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}`)
	m := c.expect()
	res, ok := m["result"].(map[string]any)
	if !ok {
		c.t.Fatalf("tools/call %s: no result: %v", name, m)
	}
	return res
}

// toolError decodes the StructuredError of an isError result ("" code when
// the result is not an error).
func toolError(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	if res["isError"] != true {
		return nil
	}
	content := res["content"].([]any)
	text := content[0].(map[string]any)["text"].(string)
	var e map[string]any
	if err := json.Unmarshal([]byte(text), &e); err != nil {
		t.Fatalf("tool error text is not JSON: %q", text)
	}
	return e
}

// waitRecord waits until a completion record with the outcome appears.
func (c *testClient) waitRecord(outcome string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range c.logBuf.records() {
			if r["outcome"] == outcome {
				return r
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.t.Fatalf("no completion record with outcome %q; log:\n%s", outcome, c.logBuf.String())
	return nil
}
