package streamable

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeReadTimeout: under Serve, readTimeoutMs bounds a request's
// headers and body together (the server's ReadTimeout), and nothing after
// the body: a call that runs past it is answered, and a GET stream open
// past it still carries messages; a body that never comes gets 400.
func TestServeReadTimeout(t *testing.T) {
	const readTimeout = 200 * time.Millisecond
	f := newFixture(t, fixtureOpts{http: func(c *Config) { c.ReadTimeout = readTimeout }})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- f.h.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	f.url = "http://" + ln.Addr().String()
	sid := f.open()

	// A GET stream, and a call whose body was read and that then waits
	// for the test: both outlive the read timeout.
	getCtx, stopGet := context.WithTimeout(context.Background(), 30*time.Second) // bounds the test only
	defer stopGet()
	events := newSSE(t, f.send(f.request(getCtx, http.MethodGet, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")))
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := f.ts.Client().Do(f.request(getCtx, http.MethodPost,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"steps","arguments":{"before":0,"after":0}}}`,
			"Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25"))
		if err != nil {
			t.Errorf("the call: %v", err)
		}
		answered <- resp
	}()
	<-f.started
	<-time.After(3 * readTimeout) // not a synchronisation: the deadline must be in the past
	close(f.release)
	resp := <-answered // bounded by getCtx
	if resp == nil {
		t.FailNow()
	}
	defer resp.Body.Close()
	if m := jsonAnswer(t, resp, http.StatusOK); m.Result == nil || string(m.ID) != "1" {
		t.Fatalf("a call that ran past the read timeout: %+v", m)
	}
	jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"broadcast","arguments":{"count":1,"bytes":1}}}`),
		http.StatusOK)
	if ev := events.must(t); !strings.Contains(ev.data, "notifications/message") {
		t.Fatalf("the GET stream open past the read timeout carried %q, want the broadcast", ev.data)
	}

	// A body that never comes.
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nContent-Length: 50\r\n\r\n{", ln.Addr(), sid)
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // bounds the test only
	refused, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer to a body that never comes: %v", err)
	}
	defer refused.Body.Close()
	if refused.StatusCode != http.StatusBadRequest || !refused.Close {
		t.Fatalf("a body that never comes: status %d (close %v), want 400 and Connection: close", refused.StatusCode, refused.Close)
	}
}
