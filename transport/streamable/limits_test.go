package streamable

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/mcp"
)

// TestAbandonedSessionsAreCappedAndExpire opens 1,000 sessions and leaves
// them: at most maxSessions exist (the rest get 503 with a JSON-RPC error
// body), and idle expiry (on the manual clock) closes them all, except one
// whose GET stream is open.
func TestAbandonedSessionsAreCappedAndExpire(t *testing.T) {
	const max = 50
	f := newFixture(t, fixtureOpts{http: func(c *Config) { c.MaxSessions = max; c.SessionIdleTimeout = time.Minute }})
	opened := 0
	for range 1000 {
		resp := f.do(http.MethodPost, initBody)
		switch resp.StatusCode {
		case http.StatusOK:
			opened++
			readAll(t, resp)
		case http.StatusServiceUnavailable:
			m := jsonAnswer(t, resp, http.StatusServiceUnavailable)
			if errorCode(t, m) != "RESOURCE_EXHAUSTED" || !strings.Contains(m.Error.Message, "maxSessions") || m.Error.Code != codeUnavailable {
				t.Fatalf("503 body: %+v", m.Error)
			}
		default:
			t.Fatalf("initialize: status %d: %s", resp.StatusCode, readAll(t, resp))
		}
		resp.Body.Close()
	}
	if opened != max || f.h.Sessions() != max {
		t.Fatalf("opened %d sessions, %d open; want %d", opened, f.h.Sessions(), max)
	}
	f.h.mu.Lock()
	var all []*session
	for _, s := range f.h.sessions {
		all = append(all, s)
	}
	f.h.mu.Unlock()

	// One session keeps a GET stream open: it is not idle.
	busy := all[0]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	newSSE(t, f.send(f.request(ctx, http.MethodGet, "", "Mcp-Session-Id", busy.id)))

	f.clock.Advance(59 * time.Second)
	if n := f.h.Sessions(); n != max {
		t.Fatalf("%d sessions before the idle timeout, want %d", n, max)
	}
	f.clock.Advance(time.Second)
	if n := f.h.Sessions(); n != 1 {
		t.Fatalf("%d sessions after the idle timeout, want 1 (the one with an open stream)", n)
	}
	for _, s := range all[1:] {
		<-s.finished
	}
	if n := f.srv.Stats().Sessions; n != 1 {
		t.Fatalf("the server still serves %d sessions, want 1", n)
	}
	jsonAnswer(t, f.post(all[1].id, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), http.StatusNotFound)
	f.open() // there is room again
}

// TestClientThatNeverReads: a GET stream whose client never reads is cut
// off once it is a budget behind; the server's memory for it stays within
// the budget, the tool that writes to it is never blocked, and other
// sessions are served meanwhile.
func TestClientThatNeverReads(t *testing.T) {
	const budget = 64 << 10
	f := newFixture(t, fixtureOpts{
		base: func(o *mcp.Options) { o.Limits.MaxOutputBytes = budget },
		http: func(c *Config) { c.WriteTimeout = 50 * time.Millisecond },
	})
	sid := f.open()
	s := f.h.sessionByID(sid)
	// One message makes the standalone stream; the stuck client adopts it.
	jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"broadcast","arguments":{"count":1,"bytes":1}}}`), http.StatusOK)
	st := s.newestStandalone()

	conn, err := net.Dial("tcp", f.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\n\r\n",
		f.ts.Listener.Addr(), sid)
	waitStream(t, st, func(st *stream) bool { return st.attached && st.sent == 1 })

	// 16 MiB for a client that reads nothing: far more than socket buffers.
	m := jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"broadcast","arguments":{"count":2048,"bytes":8192}}}`), http.StatusOK)
	if m.Result == nil || strings.Contains(string(m.Result), `"isError":true`) {
		t.Fatalf("broadcast: %+v %s", m, m.Result)
	}
	st.mu.Lock()
	attached, kept, n := st.attached, st.bytes, len(st.events)
	st.mu.Unlock()
	if attached {
		t.Fatal("the stuck consumer is still attached")
	}
	if kept > budget || n > f.h.cfg.ReplayBufferEvents {
		t.Fatalf("the stream keeps %d bytes in %d events; want at most %d bytes and %d events", kept, n, budget, f.h.cfg.ReplayBufferEvents)
	}

	// Another session is served while that client is stuck.
	other := f.open()
	if m := jsonAnswer(t, f.post(other, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noop"}}`), http.StatusOK); m.Result == nil {
		t.Fatalf("another session's call: %+v", m)
	}
	// The stuck GET's handler gives up at its write deadline: both
	// sessions are then idle, with an expiry timer each.
	if err := f.clock.WaitForTimers(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
}

// TestGracefulShutdown: when Serve's context ends, a call in progress is
// still answered, then every session closes and Serve returns nil.
func TestGracefulShutdown(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- f.h.Serve(ctx, ln) }()
	f.url = "http://" + ln.Addr().String()
	sid := f.open()

	answered := make(chan wire, 1)
	go func() {
		resp, err := f.ts.Client().Do(f.request(context.Background(), http.MethodPost,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"steps","arguments":{"before":0,"after":0}}}`,
			"Mcp-Session-Id", sid))
		if err != nil {
			t.Error(err)
			close(answered)
			return
		}
		defer resp.Body.Close()
		answered <- jsonAnswer(t, resp, http.StatusOK)
	}()
	<-f.started
	cancel()
	<-f.h.drainStarted
	close(f.release)
	if m := <-answered; m.Result == nil || string(m.ID) != "1" {
		t.Fatalf("the call in progress at shutdown: %+v", m)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if n := f.h.Sessions(); n != 0 {
		t.Fatalf("%d sessions after shutdown", n)
	}
	if n := f.srv.Stats().Sessions; n != 0 {
		t.Fatalf("the server serves %d sessions after shutdown", n)
	}
}

// TestListenAndServe binds the configured address, serves only the
// configured path, and returns nil when its context ends.
func TestListenAndServe(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	cfg := DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.Path = "/rpc"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() {
		served <- ListenAndServe(ctx, f.srv, cfg, Options{}, func(a net.Addr) { addr <- a })
	}()
	base := "http://" + (<-addr).String()
	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(initBody))
	if err != nil {
		t.Fatal(err)
	}
	jsonAnswer(t, resp, http.StatusNotFound)
	resp.Body.Close()
	resp, err = http.Post(base+"/rpc", "application/json", strings.NewReader(initBody))
	if err != nil {
		t.Fatal(err)
	}
	if m := jsonAnswer(t, resp, http.StatusOK); m.Result == nil || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize at the configured path: %+v", m)
	}
	resp.Body.Close()
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("ListenAndServe: %v", err)
	}
}
