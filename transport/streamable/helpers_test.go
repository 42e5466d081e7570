package streamable

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// fixture is an MCP server with test tools behind a Handler on a loopback
// httptest server.
type fixture struct {
	t       testing.TB
	srv     *mcp.Server
	h       *Handler
	ts      *httptest.Server
	url     string // where requests go; "" means ts
	clock   *core.ManualClock
	release chan struct{} // lets the steps tool finish
	started chan struct{} // the steps tool has sent its first notifications
}

type fixtureOpts struct {
	http       func(*Config)
	base       func(*mcp.Options)
	adminToken string // Options.AdminTokenEnvVar
	env        map[string]string
}

// newFixture builds the server (tools noop, notify, steps, broadcast) and
// its endpoint; the test's cleanup closes both.
func newFixture(t testing.TB, o fixtureOpts) *fixture {
	t.Helper()
	base := mcp.Options{Version: "test", Limits: mcp.Limits{ShutdownTimeout: 5 * time.Second}}
	if o.base != nil {
		o.base(&base)
	}
	f := &fixture{t: t, clock: core.NewManualClock(time.Unix(1_700_000_000, 0)),
		release: make(chan struct{}), started: make(chan struct{}, 1)}
	srv, err := mcp.NewServer(base)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	type empty struct{}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(mcp.AddTypedTool(srv, mcp.Tool{Name: "noop", Description: "does nothing"},
		func(context.Context, *mcp.CallToolRequest, empty) (empty, error) { return empty{}, nil }))
	must(mcp.AddTypedTool(srv, mcp.Tool{Name: "notify", Description: "sends a message about the call, then answers"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ empty) (empty, error) {
			err := req.Session.Notify(ctx, "notifications/message", map[string]any{"level": "info", "data": "working"})
			return empty{}, err
		}))
	type stepsIn struct {
		Before int `json:"before"`
		After  int `json:"after"`
	}
	must(mcp.AddTypedTool(srv, mcp.Tool{Name: "steps", Description: "sends messages, waits for the test, sends more"},
		func(ctx context.Context, req *mcp.CallToolRequest, in stepsIn) (empty, error) {
			for i := range in.Before {
				_ = req.Session.Notify(ctx, "notifications/message", map[string]any{"level": "info", "data": i})
			}
			f.started <- struct{}{}
			select {
			case <-f.release:
			case <-ctx.Done():
				return empty{}, ctx.Err()
			}
			for i := range in.After {
				_ = req.Session.Notify(ctx, "notifications/message", map[string]any{"level": "info", "data": in.Before + i})
			}
			return empty{}, nil
		}))
	must(mcp.AddTypedTool(srv, mcp.Tool{Name: "reconnect", Description: "closes its event stream, waits for the test, answers"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ empty) (empty, error) {
			if !f.h.CloseStream(ctx, req.Session) {
				return empty{}, errors.New("no stream to close")
			}
			f.started <- struct{}{}
			select {
			case <-f.release:
			case <-ctx.Done():
				return empty{}, ctx.Err()
			}
			return empty{}, nil
		}))
	type broadcastIn struct {
		Count int `json:"count"`
		Bytes int `json:"bytes"`
	}
	must(mcp.AddTypedTool(srv, mcp.Tool{Name: "broadcast", Description: "sends messages that belong to no request"},
		func(_ context.Context, req *mcp.CallToolRequest, in broadcastIn) (empty, error) {
			pad := strings.Repeat("x", in.Bytes)
			for i := range in.Count {
				_ = req.Session.Notify(context.Background(), "notifications/message",
					map[string]any{"level": "info", "data": pad, "n": i})
			}
			return empty{}, nil
		}))
	cfg := DefaultConfig()
	if o.http != nil {
		o.http(&cfg)
	}
	h, err := NewHandler(srv, cfg, Options{Clock: f.clock, AdminTokenEnvVar: o.adminToken, LookupEnv: func(k string) (string, bool) {
		v, ok := o.env[k]
		return v, ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	f.ts = httptest.NewServer(h)
	t.Cleanup(func() {
		f.ts.CloseClientConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("closing the handler: %v", err)
		}
		f.ts.Close()
	})
	return f
}

const initBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`

// request builds a request to the endpoint with the headers a conforming
// client sends, then the pairs of hdr ("" as a value deletes a header).
func (f *fixture) request(ctx context.Context, method, body string, hdr ...string) *http.Request {
	f.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	base := f.url
	if base == "" {
		base = f.ts.URL
	}
	req, err := http.NewRequestWithContext(ctx, method, base+"/mcp", rd)
	if err != nil {
		f.t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else {
		req.Header.Set("Accept", "text/event-stream")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	return req
}

// do sends a request and returns the response; the test's cleanup closes
// its body.
func (f *fixture) do(method, body string, hdr ...string) *http.Response {
	f.t.Helper()
	return f.send(f.request(context.Background(), method, body, hdr...))
}

func (f *fixture) send(req *http.Request) *http.Response {
	f.t.Helper()
	resp, err := f.ts.Client().Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	f.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// open initializes a session and sends notifications/initialized; it
// returns the session id.
func (f *fixture) open(hdr ...string) string {
	f.t.Helper()
	resp := f.do(http.MethodPost, initBody, hdr...)
	if resp.StatusCode != http.StatusOK {
		f.t.Fatalf("initialize: status %d: %s", resp.StatusCode, readAll(f.t, resp))
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		f.t.Fatal("initialize: no Mcp-Session-Id in the response")
	}
	readAll(f.t, resp)
	hdr = append(hdr, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	resp = f.do(http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr...)
	if resp.StatusCode != http.StatusAccepted {
		f.t.Fatalf("notifications/initialized: status %d, want 202", resp.StatusCode)
	}
	return sid
}

// post sends one message of session sid.
func (f *fixture) post(sid, body string, hdr ...string) *http.Response {
	f.t.Helper()
	return f.do(http.MethodPost, body, append([]string{"Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25"}, hdr...)...)
}

func readAll(t testing.TB, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return string(b)
}

// wire is a JSON-RPC message as a test reads it.
type wire struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	Params json.RawMessage `json:"params"`
}

func decodeWire(t *testing.T, s string) wire {
	t.Helper()
	var m wire
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not a JSON-RPC message: %v: %s", err, s)
	}
	return m
}

// jsonAnswer checks a JSON answer's status and content type and decodes
// it.
func jsonAnswer(t *testing.T, resp *http.Response, status int) wire {
	t.Helper()
	body := readAll(t, resp)
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json: %s", ct, body)
	}
	return decodeWire(t, body)
}

// sseEvent is one server-sent event.
type sseEvent struct{ id, data string }

// sseReader reads server-sent events from a response body.
type sseReader struct{ br *bufio.Reader }

func newSSE(t *testing.T, resp *http.Response) *sseReader {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", resp.StatusCode, readAll(t, resp))
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	return &sseReader{br: bufio.NewReader(resp.Body)}
}

// next returns the next event that carries a message (skipping priming
// events, as clients do), or io.EOF at the end of the stream.
func (r *sseReader) next() (sseEvent, error) {
	for {
		ev, err := r.raw()
		if err != nil || ev.data != "" {
			return ev, err
		}
	}
}

// raw returns the next event, priming events included.
func (r *sseReader) raw() (sseEvent, error) {
	var ev sseEvent
	seen := false
	for {
		line, err := r.br.ReadString('\n')
		if err != nil {
			if err == io.EOF && seen {
				return ev, io.ErrUnexpectedEOF
			}
			return ev, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if seen {
				return ev, nil
			}
		case strings.HasPrefix(line, "id: "):
			ev.id, seen = line[4:], true
		case strings.HasPrefix(line, "data: "):
			ev.data, seen = ev.data+line[6:], true
		case strings.HasPrefix(line, "event: "), strings.HasPrefix(line, "retry: "):
			seen = true
		case line == "data:" || line == "data: ":
			seen = true
		}
	}
}

// must returns the next event or fails the test.
func (r *sseReader) must(t *testing.T) sseEvent {
	t.Helper()
	ev, err := r.next()
	if err != nil {
		t.Fatalf("reading an event: %v", err)
	}
	return ev
}

// end checks that the stream has ended.
func (r *sseReader) end(t *testing.T) {
	t.Helper()
	if ev, err := r.next(); err != io.EOF {
		t.Fatalf("want the end of the stream, got event %+v, error %v", ev, err)
	}
}

// sessionByID returns the open session with this id, or nil.
func (h *Handler) sessionByID(id string) *session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

// waitStream blocks until cond, checked under the stream's lock, holds.
func waitStream(t *testing.T, st *stream, cond func(*stream) bool) {
	t.Helper()
	for {
		st.mu.Lock()
		ok, ch := cond(st), st.wakeLocked()
		st.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-t.Context().Done():
			t.Fatal("the stream never reached the expected state")
		}
	}
}

// standalone returns the session's newest standalone stream, or nil.
func (s *session) newestStandalone() *stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.standalone) == 0 {
		return nil
	}
	return s.standalone[len(s.standalone)-1]
}
