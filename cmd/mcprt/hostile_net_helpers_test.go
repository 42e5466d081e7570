package main

// Helpers of the hostile HTTP tests (hostile_net_test.go): a server
// started under a lowered descriptor limit, a small Streamable HTTP client
// and an event-stream reader with bounded waits.

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// netWait bounds every wait of these tests. It only ends a hung test: a
// connection the server holds open (the defect TestHostileNetHeldConnections
// guards against) is held for good, while a loaded machine can delay an
// answer by many seconds: connections that overflow the listen backlog
// while the server is starved of CPU are taken only at the kernel's next
// SYN-ACK retransmission (after 1, 3, 7, 15, 31 s). A 10 s bound failed
// 145 of 200 held-connection reads on a loaded CI machine.
const netWait = 60 * time.Second

// startNetServer starts the binary with --http in mode TEST on a port the
// kernel picks, under a descriptor limit of nofile (0: unchanged), and
// returns it and its endpoint URL.
func startNetServer(t *testing.T, nofile int, env ...string) (*wiretest.Proc, string) {
	t.Helper()
	bin, args := wiretest.Build(t), []string{"--http"}
	if nofile > 0 {
		// sh sets the soft and the hard limit, so Go cannot raise it.
		args = []string{"-c", "ulimit -n " + strconv.Itoa(nofile) + ` && exec "$0" --http`, bin}
		bin = "/bin/sh"
	}
	p := wiretest.Start(t, bin, wiretest.Options{Args: args,
		Env: append([]string{"MCPRT_SERVER_MODE=TEST", "MCPRT_TRANSPORT_HTTP_ADDR=127.0.0.1:0", "MCPRT_STORE_DIR=" + t.TempDir()}, env...)})
	ready := p.ExpectLog(t, `"mcprt ready" with a url`, func(m map[string]any) bool {
		_, ok := m["url"].(string)
		return m["msg"] == "mcprt ready" && ok
	})
	return p, ready["url"].(string)
}

// netClient is a Streamable HTTP client of one session.
type netClient struct {
	t     *testing.T
	url   string
	token string
	sid   string
	hc    *http.Client
}

// newNetClient opens a session of revision 2025-11-25.
func newNetClient(t *testing.T, url, token string) *netClient {
	t.Helper()
	c := &netClient{t: t, url: url, token: token, hc: &http.Client{Timeout: netWait}}
	resp := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
		`"capabilities":{},"clientInfo":{"name":"hostile-net","version":"1"}}}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	c.sid = resp.Header.Get("Mcp-Session-Id")
	resp = c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	return c
}

// request builds a request with the session's headers.
func (c *netClient) request(ctx context.Context, method, body string, hdr ...string) *http.Request {
	c.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, c.url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return req
}

// post sends one message and returns the response.
func (c *netClient) post(body string) *http.Response {
	c.t.Helper()
	resp, err := c.hc.Do(c.request(context.Background(), http.MethodPost, body))
	if err != nil {
		c.t.Fatalf("POST %s: %v", clip(body), err)
	}
	return resp
}

// call posts a request and returns its whole answer body.
func (c *netClient) call(body string) string {
	c.t.Helper()
	resp := c.post(body)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		c.t.Fatalf("POST %s: %d %s %v", clip(body), resp.StatusCode, b, err)
	}
	return string(b)
}

// get opens an event stream (GET) with the extra headers; cancel ends it.
func (c *netClient) get(hdr ...string) (*sseReader, context.CancelFunc) {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := (&http.Client{}).Do(c.request(ctx, http.MethodGet, "", hdr...))
	if err != nil {
		cancel()
		c.t.Fatalf("GET: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		cancel()
		c.t.Fatalf("GET: %d %s", resp.StatusCode, b)
	}
	r := &sseReader{events: make(chan sseEvent, 16)}
	go r.read(resp.Body)
	return r, func() { cancel(); resp.Body.Close() }
}

// sseEvent is one event of a stream.
type sseEvent struct{ id, data string }

// sseReader delivers a stream's events on a channel.
type sseReader struct{ events chan sseEvent }

func (r *sseReader) read(body io.Reader) {
	defer close(r.events)
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			r.events <- ev
			ev = sseEvent{}
		case strings.HasPrefix(line, "id:"):
			ev.id = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "data:"):
			ev.data += strings.TrimSpace(line[5:])
		}
	}
}

// next returns the next event, failing the test after d.
func (r *sseReader) next(t *testing.T, d time.Duration, what string) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-r.events:
		if !ok {
			t.Fatalf("%s: the stream ended", what)
		}
		return ev
	case <-time.After(d):
		t.Fatalf("%s: no event within %v", what, d)
	}
	return sseEvent{}
}
