package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
)

// sessionMaxMessageBytes is the line limit of the fuzzed sessions: small,
// so that the fuzzer reaches the over-long path.
const sessionMaxMessageBytes = 4096

// sessionTimeout bounds Serve and Wait; an input that holds the session
// longer is a hang.
const sessionTimeout = 10 * time.Second

// handshakes maps a first input byte to the handshake that replaces it.
var handshakes = map[byte]struct{ version, lines string }{
	0x01: {mcp.Version20250326, handshakeLines(mcp.Version20250326)},
	0x02: {mcp.Version20251125, handshakeLines(mcp.Version20251125)},
}

func handshakeLines(version string) string {
	return `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
}

// sessionInput returns the session's whole input for fuzz data, and the
// revision of the handshake put in front of it ("" for none).
func sessionInput(data []byte) (input []byte, version string) {
	if len(data) > 0 {
		if h, ok := handshakes[data[0]]; ok {
			return append([]byte(h.lines), data[1:]...), h.version
		}
	}
	return data, ""
}

// lockedBuffer is the session's output.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// responseBound is the most response lines input may get: one per line
// over the limit, per batch, per request and per line that is not a valid
// message; none per notification or response. After shutdown nothing more
// is written, so when shutdown says the session ended by a shutdown
// request, lines after the last one that holds a shutdown request count
// for nothing.
func responseBound(input []byte, shutdown bool) int {
	events, _ := refFrames(input, sessionMaxMessageBytes)
	counts := make([]int, len(events))
	last := len(events) - 1
	for i, ev := range events {
		if ev.Kind == evTooLong {
			counts[i] = 1
		}
		if ev.Kind != evLine {
			continue
		}
		line := []byte(ev.Line)
		msgs := []json.RawMessage{line}
		if startsArray(line) {
			counts[i] = 1
			if elems, derr := jsonrpc.DecodeBatch(line); derr == nil {
				msgs = elems
			}
		}
		for _, raw := range msgs {
			msg, derr := jsonrpc.Decode(raw)
			req, isReq := msg.(*jsonrpc.Request)
			if !startsArray(line) && (isReq || derr != nil) {
				counts[i] = 1
			}
			if isReq && req.Method == mcp.MethodShutdown {
				last = i
			}
		}
	}
	n := 0
	for i, c := range counts {
		if shutdown && i > last {
			break
		}
		n += c
	}
	return n
}

// the error codes a session may answer with.
var sessionCodes = map[int64]bool{
	jsonrpc.CodeParseError: true, jsonrpc.CodeInvalidRequest: true, jsonrpc.CodeMethodNotFound: true,
	jsonrpc.CodeInvalidParams: true, jsonrpc.CodeInternalError: true, mcp.CodeNotInitialized: true,
	// The stateless revision's (2026-07-28), for requests whose _meta names it.
	mcp.CodeMissingClientCapability: true, mcp.CodeUnsupportedProtocolVersion: true,
}

// listenNotification reports whether an output line is a notification of a
// subscriptions/listen stream: the acknowledgement, tagged with the
// subscription id (the listen request's id, which the input holds).
func listenNotification(t *testing.T, line, input []byte) bool {
	t.Helper()
	var m struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if !bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","method":`)) {
		return false
	}
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("notification %q: %v", line, err)
	}
	if m.Method != mcp.NotifySubscriptionsAcknowledged {
		t.Fatalf("unexpected notification %q", line)
	}
	id, ok := m.Params.Meta[mcp.MetaSubscriptionID]
	if !ok || !validID(id) || !bytes.Contains(input, id) {
		t.Fatalf("acknowledgement without the listen request's id: %q", line)
	}
	return true
}

// checkResponseLine checks one output line: compact JSON holding one
// response object, or a non-empty array of them.
func checkResponseLine(t *testing.T, line, input []byte, connCID string) {
	t.Helper()
	if !utf8.Valid(line) || !json.Valid(line) {
		t.Fatalf("output line is not valid UTF-8 JSON: %q", line)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, line); err != nil || !bytes.Equal(compact.Bytes(), line) {
		t.Fatalf("output line is not compact JSON: %q", line)
	}
	if line[0] == '[' {
		var elems []json.RawMessage
		if err := json.Unmarshal(line, &elems); err != nil || len(elems) == 0 {
			t.Fatalf("output batch is not a non-empty array: %q", line)
		}
		for _, e := range elems {
			if e[0] != '{' {
				t.Fatalf("output batch holds a non-object %q: %q", e, line)
			}
			checkResponseObject(t, e, input, connCID)
		}
		return
	}
	if line[0] != '{' {
		t.Fatalf("output line is not an object or an array: %q", line)
	}
	checkResponseObject(t, line, input, connCID)
}

func checkResponseObject(t *testing.T, obj, input []byte, connCID string) {
	t.Helper()
	for key, n := range topLevelKeyCounts(obj) {
		if n != 1 || !slicesContains([]string{"jsonrpc", "id", "result", "error"}, key) {
			t.Fatalf("response has member %q %d times: %q", key, n, obj)
		}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		t.Fatalf("response %q: %v", obj, err)
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		t.Fatalf(`response without "jsonrpc":"2.0": %q`, obj)
	}
	id, ok := m["id"]
	if !ok {
		t.Fatalf("response without an id: %q", obj)
	}
	if string(id) != "null" && (!validID(id) || !bytes.Contains(input, id)) {
		t.Fatalf("response id %s is not null nor an id of the input: %q", id, obj)
	}
	_, hasResult := m["result"]
	errRaw, hasError := m["error"]
	if hasResult == hasError {
		t.Fatalf("response must hold exactly one of result and error: %q", obj)
	}
	if !hasError {
		return
	}
	var e map[string]json.RawMessage
	if err := json.Unmarshal(errRaw, &e); err != nil || errRaw[0] != '{' {
		t.Fatalf("error is not an object: %q", obj)
	}
	code, ok := jsonInteger(e["code"])
	if !ok || !sessionCodes[code] {
		t.Fatalf("error code %s is not one of the session's codes: %q", e["code"], obj)
	}
	if msg, ok := jsonString(e["message"]); !ok || msg == "" {
		t.Fatalf("error message is not a non-empty string: %q", obj)
	}
	var data map[string]json.RawMessage
	if raw := e["data"]; raw == nil || raw[0] != '{' || json.Unmarshal(raw, &data) != nil {
		t.Fatalf("error data is not an object: %q", obj)
	}
	cid, ok := jsonString(data["correlationId"])
	if !ok || cid == "" {
		t.Fatalf("error data.correlationId is not a non-empty string: %q", obj)
	}
	if code == mcp.CodeNotInitialized {
		if c, _ := jsonString(data["code"]); c != "NOT_INITIALIZED" || cid != connCID {
			t.Fatalf("state error must carry code NOT_INITIALIZED and the connection's correlation id %q: %q",
				connCID, obj)
		}
	}
}

func FuzzSession(f *testing.F) {
	for _, s := range sessionSeeds() {
		f.Add(s.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		input, version := sessionInput(data)
		cfg := config.DefaultBase("fuzz")
		cfg.Transport.MaxMessageBytes = sessionMaxMessageBytes
		srv, err := mcp.NewServer(serverOptions(cfg, mcp.Options{IDs: &core.SequenceGenerator{}}))
		if err != nil {
			t.Fatal(err)
		}
		var out lockedBuffer
		sess := srv.Connect(srv.Lines(bytes.NewReader(input), &out), nil)
		done := make(chan error, 1)
		go func() { done <- sess.Serve(context.Background()) }()
		timer := time.NewTimer(sessionTimeout)
		defer timer.Stop()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Serve: %v", err)
			}
		case <-timer.C:
			sess.Close()
			t.Fatalf("Serve did not return within %v of the input's end", sessionTimeout)
		}
		if st := sess.State(); st != mcp.StateClosed {
			t.Fatalf("state after Serve = %v; want CLOSED", st)
		}
		ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
		defer cancel()
		if err := sess.Wait(ctx); err != nil {
			t.Fatalf("Wait: handlers still running after %v: %v", sessionTimeout, err)
		}

		output := out.Bytes()
		if len(output) == 0 {
			if version != "" {
				t.Fatalf("no answer to initialize")
			}
			return
		}
		if output[len(output)-1] != '\n' {
			t.Fatalf("output does not end in a newline: %q", output)
		}
		var lines [][]byte
		for _, line := range bytes.Split(output[:len(output)-1], []byte{'\n'}) {
			if !listenNotification(t, line, input) {
				lines = append(lines, line)
			}
		}
		if bound := responseBound(input, sess.ShutdownRequested()); len(lines) > bound {
			t.Fatalf("%d response lines for %d lines that call for one; output:\n%s", len(lines), bound, output)
		}
		for _, line := range lines {
			checkResponseLine(t, line, input, sess.CorrelationID())
		}
		if version != "" {
			want := `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"` + version + `",`
			if !bytes.HasPrefix(lines[0], []byte(want)) {
				t.Fatalf("first output line %q is not the initialize result %s…", lines[0], want)
			}
		}
	})
}

// sessionSeeds are whole session inputs for FuzzSession; a first byte 0x01
// or 0x02 stands for a handshake (see sessionInput).
func sessionSeeds() []seed {
	const (
		hs03 = "\x01"
		hs11 = "\x02"
	)
	req := func(id, method, params string) string {
		s := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"`
		if params != "" {
			s += `,"params":` + params
		}
		return s + "}\n"
	}
	init := req("1", "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)
	initialized := `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	long := req("9", "ping", `{"pad":"`+strings.Repeat("x", sessionMaxMessageBytes)+`"}`)
	s := []seed{
		{"gate", []byte(req("1", "tools/list", "") + req("2", "ping", "") + req("3", "shutdown", `{"_meta":{"correlationId":"c"}}`))},
		{"handshake-in-data", []byte(init + initialized + req("2", "ping", "") + req("3", "tools/list", ""))},
		{"handshake-twice", []byte(init + init + initialized + init)},
		{"initialized-before-initialize", []byte(initialized + req("1", "ping", "") + init + req("2", "tools/call", `{"name":"x"}`))},
		{"initialize-bad-params", []byte(req("1", "initialize", `{"protocolVersion":1}`) + req("2", "initialize", `[]`) + init)},
		{"running-methods", []byte(hs11 + req("1", "tools/list", "") + req(`"x"`, "resources/list", "") +
			req("1.0", "prompts/list", "") + req("-0", "logging/setLevel", `{"level":"debug"}`) +
			req("9007199254740993", "completion/complete", "{}") + req("null", "nope", ""))},
		{"shutdown-then-more", []byte(hs11 + req("1", "shutdown", "") + req("2", "ping", "") + "garbage\n")},
		{"batch-2025-03-26", []byte(hs03 + `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},1,[]]` + "\n" + "[]\n")},
		{"batch-2025-11-25", []byte(hs11 + `[{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n")},
		{"batch-before-initialize", []byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n" + init)},
		{"batch-initialize", []byte(`[` + strings.TrimSuffix(init, "\n") + `,{"jsonrpc":"2.0","method":"notifications/initialized"}]` + "\n")},
		{"batch-only-notifications", []byte(hs03 + `[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}]` + "\n")},
		{"over-long", []byte(hs11 + long + req("2", "ping", ""))},
		{"over-long-at-eof", []byte(hs11 + req("2", "ping", "") + strings.TrimSuffix(long, "\n"))},
		{"half-written", []byte(hs11 + req("1", "ping", "") + `{"jsonrpc":"2.0","id":2,"method":"pi`)},
		{"crlf-blank", []byte(hs11 + "\r\n \t\n\n" + strings.ReplaceAll(req("1", "ping", "")+req("2", "tools/list", ""), "\n", "\r\n"))},
		{"cancel-unknown", []byte(hs11 + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}` + "\n" + req("1", "ping", ""))},
		{"client-response", []byte(hs11 + `{"jsonrpc":"2.0","id":"mcprt-1","result":{}}` + "\n" + `{"jsonrpc":"2.0","id":"mcprt-2","error":{"code":1,"message":"m"}}` + "\n")},
		{"duplicate-keys", []byte(hs11 + `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":3,"Method":"ping"}` + "\n")},
		{"invalid-utf8-nul", []byte(hs11 + "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}\n\x00\n" + req("2", "ping\\u0000", ""))},
		{"deep-nesting", []byte(hs11 + req("1", "ping", strings.Repeat("[", 500)+strings.Repeat("]", 500)) +
			strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + "\n")},
	}
	// The stateless revision (2026-07-28), beside the session and without one.
	meta := func(version, caps string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":` + version + `,"io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	}
	modern := meta(`"2026-07-28"`, `{}`)
	s = append(s,
		seed{"stateless-no-session", []byte(req("1", "server/discover", "{"+modern+"}") + req("2", "tools/list", "{"+modern+"}") +
			req(`"c"`, "tools/call", `{"name":"x","arguments":{},`+modern+`}`) + req("3", "ping", "{"+modern+"}") +
			req("4", "initialize", "{"+modern+"}") + req("5", "logging/setLevel", `{"level":"info",`+modern+`}`))},
		seed{"stateless-beside-session", []byte(hs11 + req("1", "tools/list", "") + req("2", "tools/list", "{"+modern+"}") +
			req("3", "resources/read", `{"uri":"file:///x",`+modern+`}`) + req("4", "resources/read", `{"uri":"file:///x"}`) +
			req("5", "prompts/get", `{"name":"p",`+modern+`}`))},
		seed{"stateless-bad-meta", []byte(req("1", "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`) +
			req("2", "tools/list", "{"+meta(`"2026-07-28"`, `[]`)+"}") + req("3", "tools/list", "{"+meta(`2026`, `{}`)+"}") +
			req("4", "tools/list", "{"+meta(`"2026-07-28"`, `{"sampling":1}`)+"}") + req("5", "server/discover", "") +
			req("6", "server/discover", `{"_meta":[]}`) + req("7", "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}`))},
		seed{"stateless-unsupported-version", []byte(hs03 + req("1", "tools/list", "{"+meta(`"2099-01-01"`, `{}`)+"}") +
			req("2", "tools/list", "{"+meta(`"2025-11-25"`, `{}`)+"}") + req("3", "tools/list", "{"+meta(`"`+strings.Repeat("9", 300)+`"`, `{}`)+"}"))},
		seed{"stateless-input-responses", []byte(req("1", "tools/call", `{"name":"t","arguments":{},"inputResponses":{"k":{"action":"accept"}},"requestState":"e30.AAAA",`+modern+`}`) +
			req("2", "tools/call", `{"name":"t","inputResponses":[1],`+modern+`}`) +
			req("3", "tools/call", `{"name":"t","inputResponses":{"k":"x"},"requestState":42,`+modern+`}`) +
			req("4", "prompts/get", `{"name":"p","requestState":"",`+modern+`}`) +
			req("5", "resources/read", `{"uri":"u","requestState":"!!.!!","inputResponses":{},`+modern+`}`))},
		seed{"stateless-listen", []byte(hs11 + req(`"L"`, "subscriptions/listen", `{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["file:///a"]},`+modern+`}`) +
			req("2", "subscriptions/listen", `{"notifications":[],`+modern+`}`) + req("3", "subscriptions/listen", "{"+modern+"}") +
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L"}}` + "\n" + req("4", "ping", ""))},
		seed{"stateless-listen-no-session", []byte(req("9", "subscriptions/listen", `{"notifications":{"promptsListChanged":true},`+modern+`}`))},
	)
	for _, d := range decodeSeeds() {
		s = append(s, seed{"line-" + d.name, append(append([]byte(hs03), d.data...), '\n')})
	}
	return s
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
