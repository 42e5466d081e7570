package main

// Black-box tests of the HTTP transport against hostile and careless
// clients: bearer-token variables, Last-Event-ID, held connections.

import (
	"strings"
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
