package main

// Black-box tests of the HTTP transport against hostile and careless
// clients: bearer-token variables, Last-Event-ID, held connections.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHostileNetTokenWithSpacesRefused: a token variable whose value has
// white space around it could never match an Authorization header, so the
// server refuses to start and names the variable.
func TestHostileNetTokenWithSpacesRefused(t *testing.T) {
	t.Parallel()
	for _, val := range []string{" secret", "secret ", "\tsecret\n"} {
		_, stderr, code := runBinary(t, []string{"--http"}, []string{"MCPRT_TRANSPORT_HTTP_ADDR=127.0.0.1:0",
			"MCPRT_TRANSPORT_HTTP_AUTH_TOKEN_ENV_VAR=HOSTILE_TOKEN", "HOSTILE_TOKEN=" + val, "MCPRT_STORE_DIR=" + t.TempDir()}, "")
		if code != 78 || !strings.Contains(stderr, "HOSTILE_TOKEN") || !strings.Contains(stderr, "white space") {
			t.Errorf("token %q: exit %d, want 78 naming HOSTILE_TOKEN and the white space\nstderr:\n%s", val, code, stderr)
		}
	}
}

// TestHostileNetLastEventIDNeverIssued: resuming a GET stream after a
// sequence it never issued replays it from the start, so the messages that
// follow still arrive (they used to be held back for good).
func TestHostileNetLastEventIDNeverIssued(t *testing.T) {
	t.Parallel()
	_, url := startNetServer(t, 0)
	c := newNetClient(t, url, "")
	first, stop := c.get()
	priming := first.next(t, netWait, "the priming event of the GET stream")
	stop()
	num, _, ok := strings.Cut(priming.id, "-")
	if !ok || priming.data != "" {
		t.Fatalf("first event %+v: want a priming event <stream>-0", priming)
	}
	c.call(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"memory://entries/ns/k"}}`)
	resumed, stop := c.get("Last-Event-ID", num+"-999999")
	defer stop()
	c.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_store","arguments":{"namespace":"ns","key":"k","value":1}}}`)
	deadline := time.Now().Add(netWait)
	for {
		ev := resumed.next(t, time.Until(deadline), "resources/updated on the resumed stream")
		if strings.Contains(ev.data, "notifications/resources/updated") {
			return
		}
	}
}

// TestHostileNetHeldConnections: connections that promise a body and never
// send it are answered and closed at once on every refusal (401, 403,
// 404, 415) and after the body timeout, and silent connections beyond
// transport.http.maxConnections make room, so none of them exhausts the
// server's descriptors and an authorised client still gets through.
func TestHostileNetHeldConnections(t *testing.T) {
	t.Parallel()
	const token = "hostile-net-token"
	_, url := startNetServer(t, 160, "MCPRT_TRANSPORT_HTTP_AUTH_TOKEN_ENV_VAR=HOSTILE_NET_TOKEN", "HOSTILE_NET_TOKEN="+token,
		"MCPRT_TRANSPORT_HTTP_READ_TIMEOUT_MS=1000", "MCPRT_TRANSPORT_HTTP_MAX_CONNECTIONS=100",
		"MCPRT_TRANSPORT_HTTP_MAX_CONNECTIONS_PER_CLIENT=100")
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	dial := func() net.Conn {
		c, err := net.DialTimeout("tcp", addr, netWait)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// 150 connections that send nothing at all.
	for range 150 {
		dial()
	}
	auth := "Authorization: Bearer " + token + "\r\n"
	json := "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
	variants := []struct {
		status, head string
	}{
		{"401", "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + json},
		{"403", "POST /mcp HTTP/1.1\r\nHost: evil.example\r\n" + auth + json},
		{"404", "POST /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + json},
		{"415", "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + "Content-Type: text/plain\r\n"},
		{"400", "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + json}, // the body never comes: read timeout
	}
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for i := range 200 {
		v := variants[i%len(variants)]
		c := dial()
		if _, err := c.Write([]byte(v.head + "Content-Length: 100\r\n\r\n")); err != nil {
			continue // closed to make room already
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetReadDeadline(time.Now().Add(netWait))
			got, err := io.ReadAll(c)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				errs <- fmt.Sprintf("a POST answered %s was held open for %v (got %q)", v.status, netWait, clip(string(got)))
				return
			}
			if len(got) > 0 && !strings.HasPrefix(string(got), "HTTP/1.1 "+v.status) && !strings.HasPrefix(string(got), "HTTP/1.1 503") {
				errs <- fmt.Sprintf("want %s (or 503), got %q", v.status, clip(string(got)))
			}
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for e := range errs {
		if n++; n <= 5 {
			t.Error(e)
		}
	}
	if n > 0 {
		t.Fatalf("%d connections were held open or misanswered", n)
	}
	c := newNetClient(t, url, token)
	if out := c.call(`{"jsonrpc":"2.0","id":1,"method":"ping"}`); !strings.Contains(out, `"result"`) {
		t.Fatalf("the authorised client's ping: %s", out)
	}
}

// slPost posts one stateless (2026-07-28) request; ctx keeps a listen
// open until cancelled.
func slPost(t *testing.T, ctx context.Context, url, id, method, members string) *http.Response {
	t.Helper()
	if members != "" {
		members += ","
	}
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + members + slMeta(`{}`) + `}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", statelessRevision)
	req.Header.Set("Mcp-Method", method) // a stateless request names its method in a header too
	resp, err := (&http.Client{Timeout: 0}).Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", method, err)
	}
	return resp
}

// TestHostileNetListensHaveTheirOwnBound: open subscriptions/listen
// requests beyond transport.http.maxSessions do not take the stateless
// request slots (other requests still run), and they are bounded per
// client by transport.http.maxListensPerClient.
func TestHostileNetListensHaveTheirOwnBound(t *testing.T) {
	t.Parallel()
	_, url := startNetServer(t, 0, "MCPRT_TRANSPORT_HTTP_MAX_SESSIONS=3", "MCPRT_TRANSPORT_HTTP_MAX_LISTENS_PER_CLIENT=6")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range 6 {
		resp := slPost(t, ctx, url, `"L`+strconv.Itoa(i)+`"`, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`)
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("listen %d: %d %s", i, resp.StatusCode, b)
		}
		r := &sseReader{events: make(chan sseEvent, 16)}
		go r.read(resp.Body)
		if ev := r.next(t, netWait, "the listen's acknowledgement"); !strings.Contains(ev.data, "acknowledged") {
			t.Fatalf("listen %d: first event %+v", i, ev)
		}
	}
	// Six open listens, three request slots: requests still run.
	for i := range 4 {
		resp := slPost(t, context.Background(), url, strconv.Itoa(i), "tools/list", "")
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"tools"`) {
			t.Fatalf("tools/list beside six listens: %d %s", resp.StatusCode, clip(string(b)))
		}
	}
	resp := slPost(t, context.Background(), url, `"L7"`, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "maxListensPerClient") {
		t.Fatalf("a seventh listen of one client: %d %s; want 503 naming maxListensPerClient", resp.StatusCode, b)
	}
}

// procCPUSeconds is the CPU time (user and system) process pid has used,
// from /proc/PID/stat.
func procCPUSeconds(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("reading the server's stat: %v", err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	utime, err1 := strconv.Atoi(f[11])
	stime, err2 := strconv.Atoi(f[12])
	if err1 != nil || err2 != nil {
		t.Fatalf("cannot parse the server's stat: %s", b)
	}
	return float64(utime+stime) / 100
}

// TestHostileNetIdleListensCostNothing: five listens of 1,000 domain
// resources each, with the store polled every 50 ms, leave the server
// idle: it does not resolve every URI on every poll.
func TestHostileNetIdleListensCostNothing(t *testing.T) {
	t.Parallel()
	p, url := startNetServer(t, 0, "MCPRT_STORE_WATCH_INTERVAL_MS=50")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for l := range 5 {
		uris := make([]string, 1000)
		for i := range uris {
			uris[i] = fmt.Sprintf(`"memory://entries/ns%d/key%d"`, l, i)
		}
		resp := slPost(t, ctx, url, `"L`+strconv.Itoa(l)+`"`, "subscriptions/listen",
			`"notifications":{"resourceSubscriptions":[`+strings.Join(uris, ",")+`]}`)
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("listen %d: %d %s", l, resp.StatusCode, clip(string(b)))
		}
		r := &sseReader{events: make(chan sseEvent, 16)}
		go r.read(resp.Body)
		if ev := r.next(t, netWait, "the listen's acknowledgement"); !strings.Contains(ev.data, "acknowledged") {
			t.Fatalf("listen %d: first event %+v", l, clip(ev.data))
		}
	}
	// A measurement window, not a synchronisation: the server is idle.
	before := procCPUSeconds(t, p.Pid())
	<-time.After(2 * time.Second)
	used := procCPUSeconds(t, p.Pid()) - before
	t.Logf("five idle listens of 1,000 URIs: %.2f s of CPU in 2 s", used)
	if used > 0.2 {
		t.Fatalf("five idle listens of 1,000 URIs used %.2f s of CPU in 2 s; idle listens must cost next to nothing", used)
	}
}
