package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// TestOfficialTypeScriptHTTPClient drives the real binary, serving
// Streamable HTTP (mcprt --http on a port of the kernel's choosing), with
// the official MCP TypeScript SDK client and its
// StreamableHTTPClientTransport (@modelcontextprotocol/sdk, pinned in
// testdata/tshttp/package-lock.json); testdata/tshttp/client.mjs holds the
// checks.
//
// The session run goes through a whole session: initialize (a session id,
// the GET stream and its priming event), ping, tools (structuredContent
// checked by the SDK against each outputSchema, tool errors), resources
// (list, templates, text, blob and template reads, NOT_FOUND, subscribe,
// notifications/resources/updated on the calling session and, on its GET
// stream, on a second session, unsubscribe), prompts, completion,
// logging/setLevel and notifications/message, progress (checked on the
// call's own event stream as the server sent it, since the SDK may drop
// reports that arrive with the response), the client answering
// sampling/createMessage, elicitation/create and roots/list, a call the
// client abandons, and terminateSession (DELETE), after which the old
// session id gets 404. Every message the server sent must then validate
// against the official schema of the negotiated revision (vendored in
// testdata/mcp-schema).
//
// The bearer run serves with transport.http.authTokenEnvVar set: without
// the token, or with a wrong one, the client gets 401; with
// requestInit.headers carrying it, a session works, and each request of it
// needs the token. The token must never reach the server's log.
//
// Each server must log no ERROR and exit 0 on SIGTERM. Without node or npm
// the test skips, saying why; a failed install of the pinned packages
// fails it.
func TestOfficialTypeScriptHTTPClient(t *testing.T) {
	node, modules := npmInstall(t, "tshttp")
	bin := wiretest.Build(t)
	t.Run("session", func(t *testing.T) {
		t.Parallel()
		srv, url := startHTTPServer(t, bin, "")
		record := runHTTPClient(t, node, modules, srv, url, "session")
		t.Run("schema", func(t *testing.T) {
			checkHTTPRecord(t, record)
		})
	})
	t.Run("bearer", func(t *testing.T) {
		t.Parallel()
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		token := "tshttp-" + hex.EncodeToString(b)
		srv, url := startHTTPServer(t, bin, token, "MCPRT_TRANSPORT_HTTP_AUTH_TOKEN_ENV_VAR=MCPRT_TSHTTP_TOKEN",
			"MCPRT_TSHTTP_TOKEN="+token)
		runHTTPClient(t, node, modules, srv, url, "auth", "MCPRT_TOKEN="+token)
	})
}

// startHTTPServer starts bin --http in mode TEST on 127.0.0.1 at a port
// the kernel picks, with env added, and returns it and the endpoint URL it
// logged once listening. When the test ends the server is sent SIGTERM
// and must exit 0, having logged no ERROR and, unless it is "", not
// secret; wiretest kills it if it does not exit.
func startHTTPServer(t *testing.T, bin, secret string, env ...string) (*wiretest.Proc, string) {
	t.Helper()
	p := wiretest.Start(t, bin, wiretest.Options{Args: []string{"--http"},
		Env: append([]string{"MCPRT_SERVER_MODE=TEST", "MCPRT_TRANSPORT_HTTP_ADDR=127.0.0.1:0"}, env...)})
	ready := p.ExpectLog(t, `"mcprt ready" with a url`, func(m map[string]any) bool {
		_, ok := m["url"].(string)
		return m["msg"] == "mcprt ready" && ok
	})
	t.Cleanup(func() {
		p.Signal(syscall.SIGTERM)
		if code := p.Wait(t); code != 0 {
			t.Errorf("the server exited %d on SIGTERM, not 0\nstderr:\n%s", code, stderrTail(p))
		}
		if secret != "" && strings.Contains(p.Stderr(), secret) {
			t.Errorf("the server logged the bearer token")
		}
		for _, m := range p.StderrLines() {
			if m["level"] == "ERROR" {
				t.Errorf("the server logged an error: %v", m)
			}
		}
	})
	return p, ready["url"].(string)
}

// runHTTPClient runs testdata/tshttp/client.mjs in mode against url, with
// env added, and returns the messages it recorded. It fails the test,
// showing the client's output and the server's log, when the client fails
// or takes longer than 45 s.
func runHTTPClient(t *testing.T, node, modules string, srv *wiretest.Proc, url, mode string, env ...string) []byte {
	t.Helper()
	dir := nodeWorkDir(t, "tshttp", modules, "client.mjs")
	record := filepath.Join(dir, "record.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	run := exec.CommandContext(ctx, node, "client.mjs")
	run.Dir = dir
	run.Env = wiretest.CleanEnv(append([]string{"MCPRT_URL=" + url, "TSHTTP_MODE=" + mode, "TSHTTP_RECORD=" + record}, env...)...)
	start := time.Now()
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the TypeScript SDK client failed (%v, after %v):\n%s\nserver stderr:\n%s", err,
			time.Since(start).Round(time.Millisecond), out, stderrTail(srv))
	}
	t.Logf("%d checks passed in %v", bytes.Count(append([]byte{'\n'}, out...), []byte("\nok [")),
		time.Since(start).Round(time.Millisecond))
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stderrTail returns the last 4000 bytes of what p wrote to stderr.
func stderrTail(p *wiretest.Proc) string {
	s := p.Stderr()
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

// httpRecord is one message client.mjs recorded: from "client" (via
// "post") or "server" (via "post-json", "post-sse", "get", "http-error"
// for the JSON body of an HTTP error status, or "not-json" for a body that
// is not JSON, as a string), in the session whose id the exchange sent or,
// for initialize, received.
type httpRecord struct {
	Session string          `json:"session"`
	From    string          `json:"from"`
	Via     string          `json:"via"`
	Status  int             `json:"status"`
	Msg     json.RawMessage `json:"msg"`
}

// checkHTTPRecord validates every message the server sent in a recorded
// session against the official schema of the revision initialize
// negotiated: results against the result definition of the client request
// they answer and ServerResult, errors, requests and notifications against
// their own definitions. HTTP error bodies (id null, which the schema has
// no room for) are left out. It then checks that the record holds what
// the client script exercised, so that a path that went quiet cannot pass
// unvalidated.
func checkHTTPRecord(t *testing.T, record []byte) {
	var recs []httpRecord
	for _, l := range splitLines(t, "client script", record) {
		var r httpRecord
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatalf("record line %s: %v", clip(string(l)), err)
		}
		recs = append(recs, r)
	}
	type message struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	methods := map[string]string{} // session and the client's request id (JSON) → method
	rev := ""
	for _, r := range recs {
		if r.Via == "not-json" {
			t.Errorf("the server answered a POST (status %d) with a body that is not JSON: %s", r.Status, clip(string(r.Msg)))
			continue
		}
		var m message
		if err := json.Unmarshal(r.Msg, &m); err != nil {
			t.Fatalf("recorded message %s: %v", clip(string(r.Msg)), err)
		}
		switch {
		case r.From == "client" && m.Method != "" && m.ID != nil:
			methods[r.Session+" "+string(m.ID)] = m.Method
		case r.From == "server" && rev == "" && methods[r.Session+" "+string(m.ID)] == "initialize" && m.Result != nil:
			var res struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(m.Result, &res)
			rev = res.ProtocolVersion
		}
	}
	if rev == "" {
		t.Fatal("the record has no initialize result")
	}
	s := loadSchema(t, schemaDir(t), rev)
	registerByteFormat(s)
	seen := map[string]int{} // "result <method>", "error <method>", a server method, "via <via>"
	for _, r := range recs {
		if r.From != "server" || r.Via == "http-error" || r.Via == "not-json" {
			continue
		}
		seen["via "+r.Via]++
		var m message
		_ = json.Unmarshal(r.Msg, &m)
		if err := s.validate(t, "JSONRPCMessage", r.Msg); err != nil {
			t.Errorf("%v\n%s", err, clip(string(r.Msg)))
		}
		var defs []string
		var value json.RawMessage = r.Msg
		switch {
		case m.Method != "":
			union := "ServerNotification"
			if m.ID != nil {
				union = "ServerRequest"
			}
			def, ok := serverMessageDefs[m.Method]
			if !ok {
				t.Errorf("the server sent %s, which this test does not expect: %s", m.Method, clip(string(r.Msg)))
				continue
			}
			defs = []string{union, def}
			seen[m.Method]++
		case m.Error != nil:
			defs = []string{s.firstDef("JSONRPCErrorResponse", "JSONRPCError")}
			seen["error "+methods[r.Session+" "+string(m.ID)]]++
		case m.Result != nil:
			req, ok := methods[r.Session+" "+string(m.ID)]
			if !ok {
				t.Errorf("a result for id %s, which the client never used: %s", m.ID, clip(string(r.Msg)))
				continue
			}
			seen["result "+req]++
			if err := s.validate(t, s.firstDef("JSONRPCResultResponse", "JSONRPCResponse"), r.Msg); err != nil {
				t.Errorf("%v\n%s", err, clip(string(r.Msg)))
			}
			defs, value = []string{resultDefs[req], "ServerResult"}, m.Result
		default:
			t.Errorf("neither a request, a notification, a result nor an error: %s", clip(string(r.Msg)))
		}
		for _, def := range defs {
			if err := s.validate(t, def, value); err != nil {
				t.Errorf("%s: %v\n%s", def, err, clip(string(r.Msg)))
			}
		}
	}
	want := []string{"result initialize", "result ping", "result tools/list", "result tools/call",
		"result resources/list", "result resources/templates/list", "result resources/read",
		"result resources/subscribe", "result resources/unsubscribe", "result prompts/list", "result prompts/get",
		"result completion/complete", "result logging/setLevel", "error resources/read", "error prompts/get",
		"error completion/complete", "error logging/setLevel", "error resources/subscribe",
		"notifications/resources/updated", "notifications/message", "notifications/progress",
		"sampling/createMessage", "elicitation/create", "roots/list", "via post-json", "via post-sse", "via get"}
	for _, w := range want {
		if seen[w] == 0 {
			t.Errorf("%s: the record has no %s; seen %v", rev, w, seen)
		}
	}
	t.Logf("%s: validated %d server messages", rev, countServer(recs))
}

// countServer counts the server's messages in recs, HTTP error bodies
// left out.
func countServer(recs []httpRecord) int {
	n := 0
	for _, r := range recs {
		if r.From == "server" && r.Via != "http-error" && r.Via != "not-json" {
			n++
		}
	}
	return n
}
