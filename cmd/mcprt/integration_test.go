package main

// End-to-end tests of the mcprt binary over its stdio pipes: the lifecycle
// of SPEC §4 row by row, the error data of §3.3 and §6, batches (§3.2),
// configuration (§10) and the process contract (§4.2: flags, exit codes,
// signals, stdin EOF, startup timeout). Every stdout line read is checked to
// be protocol (wiretest), and every test that ends cleanly checks that each
// stderr line is a JSON log entry with time, level and msg.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/mcprt/mcprt/internal/wiretest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	wiretest.Cleanup()
	os.Exit(code)
}

// The four session-based revisions (SPEC §4.1).
var revisions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

const latestRevision = "2025-11-25"

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// start runs the binary with env added to a clean environment.
func start(t *testing.T, env ...string) *wiretest.Proc {
	t.Helper()
	return wiretest.Start(t, wiretest.Build(t), wiretest.Options{Env: env})
}

// finish closes stdin, expects exit code 0 and checks the logs.
func finish(t *testing.T, p *wiretest.Proc) {
	t.Helper()
	p.CloseStdin()
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit code %d after stdin EOF, want 0\nstderr:\n%s", code, p.Stderr())
	}
	checkLogs(t, p)
}

// checkLogs checks that stderr holds only JSON log lines (StderrLines
// reports any other line as an error).
func checkLogs(t *testing.T, p *wiretest.Proc) []map[string]any {
	t.Helper()
	lines := p.StderrLines()
	if len(lines) == 0 {
		t.Errorf("no log lines on stderr")
	}
	return lines
}

// initialize sends an initialize request for rev with the given id and
// returns the result (the caller checks the negotiated version).
func initialize(t *testing.T, p *wiretest.Proc, id, rev string) map[string]any {
	t.Helper()
	p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":` + jsonString(rev) +
		`,"capabilities":{},"clientInfo":{"name":"itest","version":"1.0"}}}`)
	return expectResult(t, p, id)
}

// running brings a fresh process to RUNNING under rev.
func running(t *testing.T, rev string, env ...string) *wiretest.Proc {
	t.Helper()
	p := start(t, env...)
	p.Handshake(t, rev)
	return p
}

// expectResult reads the next line: a success response with the byte for
// byte id and an object result.
func expectResult(t *testing.T, p *wiretest.Proc, id string) map[string]any {
	t.Helper()
	return p.ExpectResult(t, id)
}

// expectError reads the next line: an error response with the byte for byte
// id and the code, whose data holds a correlationId (SPEC §3.3).
func expectError(t *testing.T, p *wiretest.Proc, id string, code int) map[string]any {
	t.Helper()
	return p.ExpectError(t, id, code)
}

// checkError is wiretest.CheckError for a line already read.
func checkError(t *testing.T, line, id string, code int) map[string]any {
	t.Helper()
	e, err := wiretest.CheckError(line, id, code)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func errData(e map[string]any) map[string]any {
	d, _ := e["data"].(map[string]any)
	return d
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func clip(s string) string {
	if len(s) > 300 {
		return fmt.Sprintf("%s…(%d bytes)", s[:300], len(s))
	}
	return s
}

// connCID returns the connection correlation id the server logged, after
// checking that it is a UUID v4.
func connCID(t *testing.T, p *wiretest.Proc) string {
	t.Helper()
	m := p.ExpectLog(t, "with connectionCorrelationId", func(m map[string]any) bool {
		_, ok := m["connectionCorrelationId"].(string)
		return ok
	})
	cid := m["connectionCorrelationId"].(string)
	if !uuidV4.MatchString(cid) {
		t.Fatalf("connectionCorrelationId %q is not a UUID v4", cid)
	}
	return cid
}

// pingOK sends a ping and expects {} — also proof that nothing was written
// for what was sent before it (messages are answered in order here).
func pingOK(t *testing.T, p *wiretest.Proc, id string) {
	t.Helper()
	p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
	if res := expectResult(t, p, id); len(res) != 0 {
		t.Fatalf("ping result %v, want {}", res)
	}
}

// --- SPEC §4.1: initialize -------------------------------------------------

func TestInitializeNegotiatesVersion(t *testing.T) {
	tests := []struct{ requested, negotiated string }{
		{"2024-11-05", "2024-11-05"},
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"1999-01-01", latestRevision},
		{"2026-07-28", latestRevision}, // stateless era: not an initialize revision
		{"", latestRevision},
		{"latest", latestRevision},
	}
	for _, tt := range tests {
		t.Run("requested="+tt.requested, func(t *testing.T) {
			t.Parallel()
			p := start(t)
			res := initialize(t, p, "1", tt.requested)
			if res["protocolVersion"] != tt.negotiated {
				t.Fatalf("protocolVersion %v, want %s", res["protocolVersion"], tt.negotiated)
			}
			want := `{"protocolVersion":` + jsonString(tt.negotiated) + `,"capabilities":{"...":true},` +
				`"serverInfo":{"name":"mcprt","version":` + jsonString(version) + `}}`
			got, _ := json.Marshal(res)
			if err := wiretest.Match(want, string(got)); err != nil {
				t.Fatalf("initialize result: %v\n%s", err, got)
			}
			p.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			pingOK(t, p, "2")
			finish(t, p)
		})
	}
}

func TestInitializeServerInfoAndInstructionsFromConfig(t *testing.T) {
	t.Parallel()
	p := start(t, "MCPRT_SERVER_NAME=acme-tools", "MCPRT_SERVER_VERSION=9.8.7",
		"MCPRT_SERVER_INSTRUCTIONS=Call health first.\nThen the rest.")
	res := initialize(t, p, "1", "2025-06-18")
	si, _ := res["serverInfo"].(map[string]any)
	if si["name"] != "acme-tools" || si["version"] != "9.8.7" {
		t.Errorf("serverInfo %v, want acme-tools 9.8.7", si)
	}
	if res["instructions"] != "Call health first.\nThen the rest." {
		t.Errorf("instructions %q, want the configured text", res["instructions"])
	}
	finish(t, p)
}

func TestInitializeHasNoInstructionsByDefault(t *testing.T) {
	t.Parallel()
	p := start(t)
	res := initialize(t, p, "1", latestRevision)
	if _, ok := res["instructions"]; ok {
		t.Errorf("instructions present without configuration: %v", res)
	}
	if _, ok := res["capabilities"].(map[string]any); !ok {
		t.Errorf("capabilities is not an object: %v", res)
	}
	finish(t, p)
}

func TestInitializeInvalidParams(t *testing.T) {
	t.Parallel()
	p := start(t)
	for i, params := range []string{
		``, // no params at all
		`,"params":{}`,
		`,"params":{"capabilities":{}}`,
		`,"params":[]`,
		`,"params":["2025-11-25"]`,
		`,"params":{"protocolVersion":5}`,
		`,"params":{"protocolVersion":null}`,
		`,"params":{"protocolVersion":"2025-11-25","capabilities":"all"}`,
		`,"params":{"protocolVersion":"2025-11-25","clientInfo":3}`,
	} {
		id := fmt.Sprint(i + 1)
		p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"initialize"` + params + `}`)
		e := expectError(t, p, id, -32602)
		if msg := e["message"].(string); !strings.Contains(msg, "params") {
			t.Errorf("initialize%s: message %q does not say what is wrong with the params", params, msg)
		}
	}
	// Failed initializes leave the connection in STARTING.
	p.Send(`{"jsonrpc":"2.0","id":100,"method":"tools/list"}`)
	expectError(t, p, "100", -32002)
	if res := initialize(t, p, "101", "2025-06-18"); res["protocolVersion"] != "2025-06-18" {
		t.Fatalf("initialize after failed ones: %v", res)
	}
	finish(t, p)
}

// --- SPEC §4: the state machine ---------------------------------------------

func TestPingInEveryState(t *testing.T) {
	t.Parallel()
	p := start(t)
	pingOK(t, p, "1") // STARTING
	initialize(t, p, "2", latestRevision)
	pingOK(t, p, "3") // INITIALIZING
	p.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	pingOK(t, p, "4") // RUNNING
	// ping with params (an object, or _meta) is still a ping.
	p.Send(`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"progressToken":1}}}`)
	expectResult(t, p, "5")
	finish(t, p)
}

func TestNotInitializedGate(t *testing.T) {
	t.Parallel()
	p := start(t)
	methods := []string{"tools/list", "tools/call", "resources/list", "prompts/list", "logging/setLevel",
		"shutdown", "no/such/method"}
	var cid string
	check := func(id, method, params string) {
		t.Helper()
		p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":` + jsonString(method) + params + `}`)
		line := p.Expect(t)
		e := checkError(t, line, id, -32002)
		if cid == "" {
			cid = connCID(t, p)
		}
		want := `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32002,"message":"Not initialized",` +
			`"data":{"code":"NOT_INITIALIZED","message":"*","correlationId":` + jsonString(cid) + `}}}`
		if err := wiretest.Match(want, line); err != nil {
			t.Fatalf("%s: %v\n%s", method, err, line)
		}
		if msg := errData(e)["message"].(string); !strings.Contains(msg, method) {
			t.Errorf("%s: data.message %q does not name the method", method, msg)
		}
	}
	n := 0
	next := func() string { n++; return fmt.Sprint(n) }

	// STARTING: a client-supplied correlation id does not replace the
	// connection's in a state error (SPEC §3.3).
	for _, m := range methods {
		check(next(), m, "")
		check(next(), m, `,"params":{"_meta":{"correlationId":"client-cid"}}`)
	}
	// notifications/initialized in STARTING is ignored with a warning.
	p.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.ExpectLog(t, "warning about notifications/initialized in STARTING", func(m map[string]any) bool {
		return m["level"] == "WARN" && strings.Contains(fmt.Sprint(m), "notifications/initialized")
	})
	for _, m := range methods {
		check(next(), m, "") // still STARTING
	}
	initialize(t, p, next(), latestRevision)
	for _, m := range methods {
		check(next(), m, "") // INITIALIZING
	}
	p.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// RUNNING: the gate is open; an unknown method is -32601 now.
	id := next()
	p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"no/such/method"}`)
	expectError(t, p, id, -32601)
	// tools/list is served (a result, or -32601 while no tools runtime is
	// registered) but never gated.
	id = next()
	p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`)
	line := p.Expect(t)
	if strings.Contains(line, "-32002") {
		t.Fatalf("tools/list in RUNNING was gated: %s", line)
	}
	finish(t, p)
	// One connection, one connection correlation id in every log line.
	for _, m := range p.StderrLines() {
		if got, ok := m["connectionCorrelationId"]; ok && got != cid {
			t.Errorf("log line with connectionCorrelationId %v, want %s: %v", got, cid, m)
		}
	}
}

func TestInitializeTwice(t *testing.T) {
	t.Parallel()
	p := start(t)
	initialize(t, p, "1", "2025-03-26")
	// INITIALIZING
	p.Send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}`)
	e := expectError(t, p, "2", -32600)
	if msg := e["message"].(string); !strings.Contains(msg, "already initialized") {
		t.Errorf("message %q does not say already initialized", msg)
	}
	p.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// RUNNING; even invalid params are answered with "already initialized".
	for i, params := range []string{`{"protocolVersion":"2025-11-25"}`, `{}`} {
		id := fmt.Sprint(3 + i)
		p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":` + params + `}`)
		e = expectError(t, p, id, -32600)
		if msg := e["message"].(string); !strings.Contains(msg, "already initialized") {
			t.Errorf("message %q does not say already initialized", msg)
		}
	}
	// The first negotiation stands: batches are still on (2025-03-26).
	p.Send(`[{"jsonrpc":"2.0","id":10,"method":"ping"}]`)
	if err := wiretest.Match(`[{"jsonrpc":"2.0","id":10,"result":{}}]`, p.Expect(t)); err != nil {
		t.Fatalf("batch after a refused second initialize: %v", err)
	}
	finish(t, p)
}

func TestUnknownMethodInRunning(t *testing.T) {
	t.Parallel()
	p := running(t, latestRevision)
	for i, method := range []string{"no/such/method", "Ping", "tools/bogus", "", "rpc.discover", "notifications/initialized"} {
		id := fmt.Sprint(i + 1)
		p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":` + jsonString(method) + `}`)
		e := expectError(t, p, id, -32601)
		if msg := e["message"].(string); !strings.Contains(msg, jsonString(method)) {
			t.Errorf("message %q does not name the method %q", msg, method)
		}
	}
	finish(t, p)
}

func TestShutdown(t *testing.T) {
	t.Parallel()
	p := running(t, latestRevision)
	// shutdown and a ping in one write: the ping must not be answered.
	p.SendRaw([]byte(`{"jsonrpc":"2.0","id":1,"method":"shutdown"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"))
	if res := expectResult(t, p, "1"); len(res) != 0 {
		t.Fatalf("shutdown result %v, want {}", res)
	}
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit code %d after shutdown, want 0", code)
	}
	p.ExpectSilence(t, 10*time.Millisecond)
	p.ExpectLog(t, "about the shutdown", func(m map[string]any) bool {
		return strings.Contains(strings.ToLower(m["msg"].(string)), "shut")
	})
	checkLogs(t, p)
}

func TestShutdownInsideABatch(t *testing.T) {
	t.Parallel()
	p := running(t, "2025-03-26")
	// The batch is answered as a whole — the shutdown's {} included — and
	// then the process ends; the line after the batch is not answered.
	p.SendRaw([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"shutdown"}]` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n"))
	if err := wiretest.Match(`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]`, p.Expect(t)); err != nil {
		t.Fatalf("batch with shutdown: %v", err)
	}
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit code %d after shutdown, want 0", code)
	}
	p.ExpectSilence(t, 10*time.Millisecond)
	checkLogs(t, p)
}

// --- SPEC §3.3: correlation ids in error data -------------------------------

func TestErrorCorrelationID(t *testing.T) {
	t.Parallel()
	p := running(t, latestRevision)
	cid := connCID(t, p)
	max := strings.Repeat("c", 128)
	multi := strings.Repeat("é", 64) // 128 bytes
	tests := []struct {
		name, params, want string
	}{
		{"client id", `{"_meta":{"correlationId":"abc"}}`, "abc"},
		{"128 bytes", `{"_meta":{"correlationId":"` + max + `"}}`, max},
		{"128 bytes of UTF-8", `{"_meta":{"correlationId":"` + multi + `"}}`, multi},
		{"129 bytes", `{"_meta":{"correlationId":"` + max + `d"}}`, cid},
		{"130 bytes of UTF-8", `{"_meta":{"correlationId":"` + multi + `é"}}`, cid},
		{"empty", `{"_meta":{"correlationId":""}}`, cid},
		{"number", `{"_meta":{"correlationId":42}}`, cid},
		{"null", `{"_meta":{"correlationId":null}}`, cid},
		{"object", `{"_meta":{"correlationId":{"a":"b"}}}`, cid},
		{"meta not an object", `{"_meta":"abc"}`, cid},
		{"case variant key", `{"_meta":{"CorrelationId":"abc"}}`, cid},
		{"no meta", `{"x":1}`, cid},
		{"params array", `["abc"]`, cid},
		{"no params", ``, cid},
	}
	for i, tt := range tests {
		id := fmt.Sprint(i + 1)
		params := ""
		if tt.params != "" {
			params = `,"params":` + tt.params
		}
		p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"no/such/method"` + params + `}`)
		e := expectError(t, p, id, -32601)
		if got := errData(e)["correlationId"]; got != tt.want {
			t.Errorf("%s: correlationId %q, want %q", tt.name, got, tt.want)
		}
	}
	// Other protocol errors read the client's id too, when the message
	// has params: an invalid request, initialize again.
	p.Send(`{"jsonrpc":"2.0","id":50,"method":7,"params":{"_meta":{"correlationId":"abc"}}}`)
	if got := errData(expectError(t, p, "50", -32600))["correlationId"]; got != "abc" {
		t.Errorf("invalid request: correlationId %q, want abc", got)
	}
	p.Send(`{"jsonrpc":"2.0","id":51,"method":"initialize","params":{"protocolVersion":"2025-11-25","_meta":{"correlationId":"abc"}}}`)
	if got := errData(expectError(t, p, "51", -32600))["correlationId"]; got != "abc" {
		t.Errorf("initialize again: correlationId %q, want abc", got)
	}
	// A parse error has no readable params: the connection's id.
	p.Send(`{"jsonrpc":"2.0","id":52,"method":"x","params":{"_meta":{"correlationId":"abc"}}`)
	if got := errData(expectError(t, p, "null", -32700))["correlationId"]; got != cid {
		t.Errorf("parse error: correlationId %q, want the connection's %q", got, cid)
	}
	finish(t, p)
}

// --- SPEC §3.2: batches -----------------------------------------------------

func TestBatchesRejectedOutside20250326(t *testing.T) {
	t.Parallel()
	batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`
	check := func(t *testing.T, p *wiretest.Proc) {
		t.Helper()
		for _, b := range []string{batch, `[]`, `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`} {
			p.Send(b)
			e := expectError(t, p, "null", -32600) // one object, not an array
			if msg := e["message"].(string); !strings.Contains(msg, "batch") {
				t.Errorf("message %q does not say batches are not allowed", msg)
			}
		}
	}
	t.Run("before initialize", func(t *testing.T) {
		t.Parallel()
		p := start(t)
		check(t, p)
		// Still STARTING: the rejected batch did not run its elements.
		p.Send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
		expectError(t, p, "3", -32002)
		finish(t, p)
	})
	t.Run("INITIALIZING under 2025-03-26", func(t *testing.T) {
		t.Parallel()
		p := start(t)
		initialize(t, p, "1", "2025-03-26")
		// The revision allows batches as soon as it is negotiated.
		p.Send(batch)
		if err := wiretest.Match(`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]`, p.Expect(t)); err != nil {
			t.Fatal(err)
		}
		finish(t, p)
	})
	for _, rev := range []string{"2024-11-05", "2025-06-18", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			p := running(t, rev)
			check(t, p)
			finish(t, p)
		})
	}
}

func TestBatchesUnder20250326(t *testing.T) {
	t.Parallel()
	p := running(t, "2025-03-26")

	// Requests, a notification and an invalid element.
	p.Send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},` +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}},` +
		`5,` +
		`{"jsonrpc":"2.0","id":"two","method":"no/such/method"},` +
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-03-26"}},` +
		`{"jsonrpc":"2.0","id":4,"method":"ping","params":"x"},` +
		`{"jsonrpc":"2.0","id":5,"method":"ping"}]`)
	line := p.Expect(t)
	var elems []json.RawMessage
	if err := json.Unmarshal([]byte(line), &elems); err != nil {
		t.Fatalf("batch response is not an array: %s", line)
	}
	got := map[string]int{} // id → code (0 for a result)
	for _, raw := range elems {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("batch element is not an object: %s", raw)
		}
		code := 0
		if _, ok := m["error"]; ok {
			code = errCode(t, raw)
			checkError(t, string(raw), string(m["id"]), code)
		}
		id := string(m["id"])
		if _, dup := got[id]; dup {
			t.Fatalf("id %s answered twice: %s", id, line)
		}
		got[id] = code
	}
	want := map[string]int{"1": 0, "null": -32600, `"two"`: -32601, "3": -32600, "4": -32600, "5": 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("batch answers %v, want %v\n%s", got, want, line)
	}

	// Only notifications: no response at all (the ping answers next).
	p.Send(`[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}},{"jsonrpc":"2.0","method":"x/y"}]`)
	pingOK(t, p, "6")

	// An empty batch: one -32600, not an array.
	p.Send(`[]`)
	expectError(t, p, "null", -32600)

	// A batch of invalid elements: an array of errors.
	p.Send(`[1,"x",null]`)
	if err := wiretest.Match(`[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"*","data":"*"}},`+
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"*","data":"*"}},`+
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"*","data":"*"}}]`, p.Expect(t)); err != nil {
		t.Fatal(err)
	}

	// A batch that is not valid JSON is one parse error.
	p.Send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},`)
	expectError(t, p, "null", -32700)
	finish(t, p)
}

func errCode(t *testing.T, raw []byte) int {
	t.Helper()
	var m struct {
		Error struct{ Code int } `json:"error"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("bad error element: %s", raw)
	}
	return m.Error.Code
}

// --- SPEC §3.2: notifications and client responses get no answer ------------

func TestNotificationsNeverAnswered(t *testing.T) {
	t.Parallel()
	silent := []string{
		`{"jsonrpc":"2.0","method":"no/such/notification"}`,
		`{"jsonrpc":"2.0","method":"no/such/notification","params":{"a":[1,2]}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope","reason":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":5}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":[]}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled"}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`,
		`{"jsonrpc":"2.0","method":"ping"}`,
		`{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
		`{"jsonrpc":"2.0","method":"tools/list"}`,
		// Responses that match no request the server sent: logged, dropped.
		`{"jsonrpc":"2.0","id":77,"result":{}}`,
		`{"jsonrpc":"2.0","id":"s-1","error":{"code":-32601,"message":"no"}}`,
	}
	run := func(t *testing.T, p *wiretest.Proc) {
		for i, line := range silent {
			p.Send(line)
			pingOK(t, p, fmt.Sprint(1000+i)) // the next line must be the ping's answer
		}
	}
	t.Run("STARTING", func(t *testing.T) {
		t.Parallel()
		p := start(t)
		run(t, p)
		// The initialize notification did not initialize anything.
		p.Send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		expectError(t, p, "1", -32002)
		finish(t, p)
	})
	t.Run("RUNNING", func(t *testing.T) {
		t.Parallel()
		p := running(t, latestRevision)
		run(t, p)
		finish(t, p)
	})
}

// --- SPEC §4.2: the process ------------------------------------------------

// runBinary runs the binary to completion with a clean environment.
func runBinary(t *testing.T, args []string, env []string, stdin string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wiretest.WaitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, wiretest.Build(t), args...)
	cmd.Env = wiretest.CleanEnv(env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("mcprt %v did not exit within %v", args, wiretest.WaitTimeout)
	}
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("mcprt %v: %v", args, err)
		}
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"--version", "-version"} {
		// The flag wins over any configuration: no config is loaded.
		stdout, stderr, code := runBinary(t, []string{arg}, []string{"MCPRT_BOGUS=1"}, "")
		if code != 0 || stdout != "mcprt "+version+"\n" || stderr != "" {
			t.Errorf("mcprt %s: code %d, stdout %q, stderr %q; want 0, %q, nothing", arg, code, stdout, stderr, "mcprt "+version+"\n")
		}
	}
}

func TestHelpFlag(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"--help", "-help", "-h"} {
		stdout, stderr, code := runBinary(t, []string{arg}, nil, "")
		if code != 0 || !strings.Contains(stdout, "Usage") || !strings.Contains(stdout, "--config") || stderr != "" {
			t.Errorf("mcprt %s: code %d, stdout %q, stderr %q; want 0 and the usage on stdout", arg, code, stdout, stderr)
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--bogus"},
		{"-x"},
		{"serve"},
		{"--config"},
		{"--version", "extra"},
		{"--config", "a.json", "b.json"},
		{"--version=maybe"},
	} {
		stdout, stderr, code := runBinary(t, args, nil, "")
		if code != 2 {
			t.Errorf("mcprt %q: exit code %d, want 2", args, code)
		}
		if stdout != "" {
			t.Errorf("mcprt %q: stdout %q, want nothing", args, stdout)
		}
		if !strings.Contains(stderr, "mcprt:") || !strings.Contains(stderr, "--help") {
			t.Errorf("mcprt %q: stderr %q does not explain the usage error", args, stderr)
		}
	}
}

func TestStdinEOF(t *testing.T) {
	t.Parallel()
	t.Run("at once", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := runBinary(t, nil, nil, "")
		if code != 0 || stdout != "" {
			t.Fatalf("empty stdin: code %d, stdout %q; want 0 and nothing\n%s", code, stdout, stderr)
		}
	})
	t.Run("running", func(t *testing.T) {
		t.Parallel()
		p := running(t, latestRevision)
		finish(t, p)
		p.ExpectLog(t, "about shutting down", func(m map[string]any) bool {
			return strings.HasPrefix(m["msg"].(string), "shutting down")
		})
	})
	t.Run("with a request in flight", func(t *testing.T) {
		t.Parallel()
		p := running(t, latestRevision)
		p.Send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		p.CloseStdin()
		expectResult(t, p, "1")
		if code := p.Wait(t); code != 0 {
			t.Fatalf("exit code %d, want 0", code)
		}
		checkLogs(t, p)
	})
	t.Run("requests piped at once", func(t *testing.T) {
		t.Parallel()
		in := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}` + "\n"
		p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Stdin: strings.NewReader(in)})
		expectResult(t, p, "1")
		expectResult(t, p, "2")
		if code := p.Wait(t); code != 0 {
			t.Fatalf("exit code %d, want 0", code)
		}
		p.ExpectSilence(t, 0)
		checkLogs(t, p)
	})
}

// TestStdinReadErrorExits1: a read error on stdin (here EISDIR: stdin is a
// directory) is a fatal error, exit 1 (SPEC §4.2), logged at level ERROR —
// not a clean end of input.
func TestStdinReadErrorExits1(t *testing.T) {
	t.Parallel()
	dir, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	for range 3 { // the session's end races with Serve's result; try a few times
		p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Stdin: dir})
		if code := p.Wait(t); code != 1 {
			t.Fatalf("exit code %d with an unreadable stdin, want 1\nstderr:\n%s", code, p.Stderr())
		}
		p.ExpectSilence(t, 0)
		p.ExpectLog(t, "at level ERROR", func(m map[string]any) bool { return m["level"] == "ERROR" })
		checkLogs(t, p)
	}
}

func TestSignalsShutDownGracefully(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			// An answered request proves the signal handler is installed.
			p := running(t, latestRevision)
			pingOK(t, p, "1")
			p.Signal(sig)
			if code := p.Wait(t); code != 0 {
				t.Fatalf("exit code %d after %v, want 0\nstderr:\n%s", code, sig, p.Stderr())
			}
			p.ExpectSilence(t, 10*time.Millisecond)
			p.ExpectLog(t, "about the signal", func(m map[string]any) bool {
				return strings.Contains(m["msg"].(string), "signal") && m["signal"] == sig.String()
			})
			checkLogs(t, p)
		})
	}
}

// --- SPEC §10: configuration -----------------------------------------------

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestInvalidConfigurationExits78(t *testing.T) {
	t.Parallel()
	const intAllowed = "an integer >= 1 and <= 9007199254740991"
	const fileAllowed = "a readable JSON object file (UTF-8, at most 1048576 bytes)"
	missing := filepath.Join(t.TempDir(), "missing.json")
	tests := []struct {
		name    string
		args    []string
		env     []string
		file    string // content of a config file passed with --config
		key     string
		envName string
		value   string
		allowed string // a prefix of the allowed field
		inMsg   string
	}{
		{name: "unknown MCPRT_ variable", env: []string{"MCPRT_SERVER_NAMEE=x"},
			key: "", envName: "MCPRT_SERVER_NAMEE", value: "x", allowed: "a known MCPRT_* variable", inMsg: "MCPRT_SERVER_NAMEE"},
		{name: "bad number", env: []string{"MCPRT_TOOLS_DEFAULT_TIMEOUT_MS=abc"},
			key: "tools.defaultTimeoutMs", envName: "MCPRT_TOOLS_DEFAULT_TIMEOUT_MS", value: "abc", allowed: intAllowed},
		{name: "zero", env: []string{"MCPRT_TRANSPORT_MAX_MESSAGE_BYTES=0"},
			key: "transport.maxMessageBytes", envName: "MCPRT_TRANSPORT_MAX_MESSAGE_BYTES", value: "0", allowed: intAllowed},
		{name: "bad enum", env: []string{"MCPRT_SERVER_MODE=fast"},
			key: "server.mode", envName: "MCPRT_SERVER_MODE", value: "fast", allowed: "one of FULL, READONLY, MINIMAL, TEST"},
		{name: "bad level", env: []string{"MCPRT_LOGGING_LEVEL=verbose"},
			key: "logging.level", envName: "MCPRT_LOGGING_LEVEL", value: "verbose", allowed: "one of debug, info, warn, error"},
		{name: "bad boolean", env: []string{"MCPRT_SECURITY_DYNAMIC_REGISTRATION_ENABLED=yes"},
			key: "security.dynamicRegistrationEnabled", envName: "MCPRT_SECURITY_DYNAMIC_REGISTRATION_ENABLED", value: "yes", allowed: "true, false, 1 or 0"},
		{name: "reserved switch", env: []string{"MCPRT_SECURITY_ALLOW_ARBITRARY_CODE_TOOLS=true"},
			key: "security.allowArbitraryCodeTools", envName: "MCPRT_SECURITY_ALLOW_ARBITRARY_CODE_TOOLS", value: "true", allowed: "false"},
		{name: "unknown file key", file: `{"server":{"nmae":"x"}}`,
			key: "server.nmae", envName: "", value: `"x"`, allowed: "one of name, version, mode"},
		{name: "unknown file section", file: `{"sever":{}}`,
			key: "sever", envName: "", value: `{}`, allowed: "one of server, transport"},
		{name: "bad file value", file: `{"transport":{"maxMessageBytes":"big"}}`,
			key: "transport.maxMessageBytes", envName: "MCPRT_TRANSPORT_MAX_MESSAGE_BYTES", value: `"big"`, allowed: intAllowed},
		{name: "file not found", args: []string{"--config", missing},
			key: "config", envName: "MCPRT_CONFIG", value: missing, allowed: fileAllowed},
		{name: "file not found via MCPRT_CONFIG", env: []string{"MCPRT_CONFIG=" + missing},
			key: "config", envName: "MCPRT_CONFIG", value: missing, allowed: fileAllowed},
		{name: "invalid JSON file", file: `{"server": {"name": "x",}}`,
			key: "config", envName: "MCPRT_CONFIG", allowed: fileAllowed},
		{name: "file is not an object", file: `[1]`,
			key: "config", envName: "MCPRT_CONFIG", allowed: fileAllowed},
		{name: "file is a directory", args: []string{"--config", filepath.Dir(missing)},
			key: "config", envName: "MCPRT_CONFIG", value: filepath.Dir(missing), allowed: fileAllowed},
		{name: "file is empty", file: " \n",
			key: "config", envName: "MCPRT_CONFIG", allowed: fileAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := tt.args
			if tt.file != "" {
				path := writeFile(t, "config.json", tt.file)
				args = []string{"--config", path}
				if tt.value == "" {
					tt.value = path
				}
			}
			stdout, stderr, code := runBinary(t, args, tt.env, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
			if code != 78 {
				t.Fatalf("exit code %d, want 78\nstderr:\n%s", code, stderr)
			}
			if stdout != "" {
				t.Fatalf("stdout %q, want nothing", stdout)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if len(lines) != 1 {
				t.Fatalf("stderr has %d lines, want exactly one:\n%s", len(lines), stderr)
			}
			m, err := wiretest.CheckLogLine(lines[0])
			if err != nil {
				t.Fatal(err)
			}
			if m["level"] != "ERROR" {
				t.Errorf("level %v, want ERROR", m["level"])
			}
			inMsg := tt.inMsg
			if inMsg == "" {
				inMsg = tt.key
			}
			if msg := m["msg"].(string); !strings.Contains(msg, inMsg) {
				t.Errorf("msg %q does not name %q", msg, inMsg)
			}
			for field, want := range map[string]string{"key": tt.key, "env": tt.envName, "value": tt.value} {
				if m[field] != want {
					t.Errorf("field %s = %#v, want %q", field, m[field], want)
				}
			}
			if allowed, _ := m["allowed"].(string); !strings.HasPrefix(allowed, tt.allowed) {
				t.Errorf("field allowed = %q, want it to start with %q", allowed, tt.allowed)
			}
		})
	}
}

func TestConfigFile(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "mcprt.json", `{"server":{"name":"from-file","instructions":"file says hi"}}`)
	tests := []struct {
		name     string
		args     []string
		env      []string
		wantName string
	}{
		{"--config", []string{"--config", path}, nil, "from-file"},
		{"--config=", []string{"--config=" + path}, nil, "from-file"},
		{"MCPRT_CONFIG", nil, []string{"MCPRT_CONFIG=" + path}, "from-file"},
		{"--config beats MCPRT_CONFIG", []string{"--config", path}, []string{"MCPRT_CONFIG=/nonexistent/x.json"}, "from-file"},
		{"environment beats file", []string{"--config", path}, []string{"MCPRT_SERVER_NAME=from-env"}, "from-env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Args: tt.args, Env: tt.env})
			res := p.Handshake(t, latestRevision)
			if si := res["serverInfo"].(map[string]any); si["name"] != tt.wantName {
				t.Errorf("serverInfo.name %v, want %s", si["name"], tt.wantName)
			}
			if res["instructions"] != "file says hi" {
				t.Errorf("instructions %v, want the file's", res["instructions"])
			}
			finish(t, p)
		})
	}
}

func TestTransportLimitFromConfig(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "mcprt.json", `{"transport":{"maxMessageBytes":100}}`)
	p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Args: []string{"--config", path}})
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 100) + `"}}`)
	e := expectError(t, p, "null", -32600)
	if got := fmt.Sprint(errData(e)["maxMessageBytes"]); got != "100" {
		t.Errorf("data.maxMessageBytes %s, want 100", got)
	}
	pingOK(t, p, "2")
	finish(t, p)
}

func TestStartupTimeoutExits75(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "config.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("cannot make a FIFO to stall the config read: %v", err)
	}
	for _, how := range []string{"--config", "MCPRT_CONFIG"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			opts := wiretest.Options{Env: []string{"MCPRT_SERVER_STARTUP_TIMEOUT_MS=300"}}
			if how == "--config" {
				opts.Args = []string{"--config", fifo}
			} else {
				opts.Env = append(opts.Env, "MCPRT_CONFIG="+fifo)
			}
			// Nobody opens the FIFO for writing: reading the config blocks.
			p := wiretest.Start(t, wiretest.Build(t), opts)
			began := time.Now()
			if code := p.Wait(t); code != 75 {
				t.Fatalf("exit code %d, want 75\nstderr:\n%s", code, p.Stderr())
			}
			if took := time.Since(began); took < 250*time.Millisecond {
				t.Errorf("exited after %v, before the 300ms startup timeout", took)
			}
			p.ExpectSilence(t, 0)
			lines := checkLogs(t, p)
			var found bool
			for _, m := range lines {
				if m["level"] == "ERROR" && strings.Contains(fmt.Sprint(m), "startupTimeoutMs") {
					found = true
				}
			}
			if !found {
				t.Errorf("no ERROR log line about server.startupTimeoutMs:\n%s", p.Stderr())
			}
		})
	}
}

// --- transcripts -------------------------------------------------------------

// TestTranscripts plays every testdata/transcripts/*.txt through the binary.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			script := string(b)
			p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Env: wiretest.ScriptEnv(script)})
			wiretest.Run(t, p, script)
			if !p.Exited() {
				finish(t, p)
			} else {
				checkLogs(t, p)
			}
		})
	}
}

// --- SPEC §4.2: shutdown while stdout is stuck ------------------------------

// stuckServer starts the binary with a stdout pipe nobody reads, shrunk to
// one page, and floods it with pings until the server's writer is blocked
// on the full pipe. Only Linux can shrink a pipe and measure its contents
// (F_SETPIPE_SZ, FIONREAD); elsewhere the test is skipped.
func stuckServer(t *testing.T, env ...string) (*exec.Cmd, fmt.Stringer, <-chan int) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux pipes (F_SETPIPE_SZ, FIONREAD) to block the server's stdout")
	}
	const (
		fSetPipeSz = 1031   // F_SETPIPE_SZ
		fionread   = 0x541B // FIONREAD
		pipeSize   = 4096
	)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() }) // runs last
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), fSetPipeSz, pipeSize); e != 0 {
		w.Close()
		t.Skipf("cannot shrink the stdout pipe: %v", e)
	}
	cmd := exec.Command(wiretest.Build(t))
	cmd.Env = wiretest.CleanEnv(env...)
	cmd.Stdout = w
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan int, 1)
	reaped := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		exited <- cmd.ProcessState.ExitCode()
		close(reaped)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		stdin.Close()
		<-reaped
		// What the server did write is protocol, and its logs are JSON.
		out, _ := io.ReadAll(r)
		for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			if err := wiretest.CheckProtocolLine(line); err != nil {
				t.Errorf("stdout: %v", err)
				break
			}
		}
		for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
			if _, err := wiretest.CheckLogLine(line); err != nil {
				t.Errorf("stderr: %v", err)
			}
		}
	})
	go func() {
		// Far more answers than the pipe holds; this goroutine blocks too
		// once the server stops reading, and ends when the process dies.
		var b strings.Builder
		for i := range 5000 {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
		}
		_, _ = io.WriteString(stdin, b.String())
	}()
	// Wait until no further answer fits in the pipe: the server is then
	// blocked writing (answers are at least 38 bytes long).
	deadline := time.Now().Add(wiretest.ExpectTimeout)
	for {
		var n int32
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, r.Fd(), fionread, uintptr(unsafe.Pointer(&n))); e != 0 {
			t.Fatalf("FIONREAD: %v", e)
		}
		if n > pipeSize-38 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stdout pipe holds %d bytes after %v; the server did not fill it", n, wiretest.ExpectTimeout)
		}
		time.Sleep(time.Millisecond)
	}
	// The write that no longer fits is (about to be) blocked; give the
	// server's reading goroutine a moment to get there.
	time.Sleep(50 * time.Millisecond)
	return cmd, stderr, exited
}

// lockedBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitExit waits for the exit code from stuckServer.
func waitExit(t *testing.T, exited <-chan int, stderr fmt.Stringer) int {
	t.Helper()
	select {
	case code := <-exited:
		return code
	case <-time.After(wiretest.WaitTimeout):
		t.Fatalf("the process did not exit within %v\nstderr:\n%s", wiretest.WaitTimeout, stderr)
		return 0
	}
}

// TestFirstSignalWithStdoutBlocked: a client that stops reading stdout does
// not keep the first signal from shutting down (exit 0).
func TestFirstSignalWithStdoutBlocked(t *testing.T) {
	t.Parallel()
	cmd, stderr, exited := stuckServer(t, "MCPRT_SERVER_SHUTDOWN_TIMEOUT_MS=600000")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, exited, stderr); code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", code, stderr)
	}
}

func TestShutdownTimeoutBoundsAStuckWriter(t *testing.T) {
	t.Parallel()
	cmd, stderr, exited := stuckServer(t, "MCPRT_SERVER_SHUTDOWN_TIMEOUT_MS=200")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, exited, stderr); code != 0 {
		t.Fatalf("exit code %d, want 0 once server.shutdownTimeoutMs has passed\nstderr:\n%s", code, stderr)
	}
}

// TestClosedStdout: a client that closes its end of stdout makes every write
// fail (EPIPE; SIGPIPE is ignored). The server must end promptly and
// cleanly — not hang, not die of SIGPIPE, not panic (a Go panic exits 2).
func TestClosedStdout(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	cmd := exec.Command(wiretest.Build(t))
	cmd.Env = wiretest.CleanEnv()
	cmd.Stdout = w
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer stdin.Close()
	exited := make(chan int, 1)
	go func() {
		_ = cmd.Wait()
		exited <- cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// stdin stays open: only the failed write can end the session.
	_, _ = io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	if code := waitExit(t, exited, stderr); code != 0 && code != 1 {
		t.Fatalf("exit code %d with a closed stdout, want 0 or 1\nstderr:\n%s", code, stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if _, err := wiretest.CheckLogLine(line); err != nil {
			t.Error(err)
		}
	}
}

// --- slow requests (TEST fixtures, SPEC §8.3) ---------------------------------

// sleepCall is a tools/call of the TEST fixture sleep.
func sleepCall(id string, ms int, ignoreCancel bool) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":%d,"ignoreCancel":%v}}}`,
		id, ms, ignoreCancel)
}

// requireSleepFixture skips the test unless the running server (started
// with MCPRT_SERVER_MODE=TEST) serves the sleep fixture.
func requireSleepFixture(t *testing.T, p *wiretest.Proc) {
	t.Helper()
	p.Send(sleepCall(`"probe"`, 1, false))
	line := p.Expect(t)
	res, err := wiretest.CheckResult(line, `"probe"`)
	if err != nil || res["isError"] == true {
		t.Skipf("the TEST fixture sleep is not available (SPEC §8.3): %s", clip(line))
	}
}

func TestCancelledRequestGetsNoAnswer(t *testing.T) {
	t.Parallel()
	p := running(t, latestRevision, "MCPRT_SERVER_MODE=TEST")
	requireSleepFixture(t, p)
	p.Send(sleepCall(`"slow"`, 60000, false))
	p.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"no longer needed"}}`)
	pingOK(t, p, "1")
	p.ExpectLog(t, "about the cancellation", func(m map[string]any) bool {
		return strings.Contains(m["msg"].(string), "cancel") && m["requestId"] == `"slow"`
	})
	p.ExpectSilence(t, 200*time.Millisecond)

	// notifications/cancelled names an id by its exact text: 1 is not "1".
	p.Send(sleepCall(`"1"`, 300, false))
	p.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	if res := expectResult(t, p, `"1"`); res["isError"] == true {
		t.Fatalf("the sleep named \"1\" failed: %v", res)
	}
	finish(t, p)
}

func TestStdinEOFWithASlowRequestInFlight(t *testing.T) {
	t.Parallel()
	p := running(t, latestRevision, "MCPRT_SERVER_MODE=TEST")
	requireSleepFixture(t, p)
	p.Send(sleepCall("1", 60000, false))
	pingOK(t, p, "2") // the sleep was dispatched before the ping was read
	p.CloseStdin()
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	p.ExpectSilence(t, 0) // CLOSED: nothing is written for the sleep
	p.ExpectLog(t, "with the sleep's completion record", func(m map[string]any) bool {
		return m["msg"] == "tool call completed" && m["tool"] == "sleep" && m["outcome"] != "success"
	})
	checkLogs(t, p)
}

func TestSecondSignalDuringASlowHandler(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			t.Parallel()
			p := running(t, latestRevision, "MCPRT_SERVER_MODE=TEST", "MCPRT_SERVER_SHUTDOWN_TIMEOUT_MS=600000")
			requireSleepFixture(t, p)
			p.Send(sleepCall("1", 600000, true)) // ignores cancellation
			pingOK(t, p, "2")
			p.Signal(tt.sig)
			p.ExpectLog(t, "about the first signal", func(m map[string]any) bool {
				return strings.Contains(m["msg"].(string), "signal")
			})
			p.ExpectSilence(t, 100*time.Millisecond) // still waiting for the handler
			if p.Exited() {
				t.Fatalf("exited on the first signal while a handler was running:\n%s", p.Stderr())
			}
			p.Signal(tt.sig)
			if code := p.Wait(t); code != tt.code {
				t.Fatalf("exit code %d after a second %v, want %d\nstderr:\n%s", code, tt.sig, tt.code, p.Stderr())
			}
			checkLogs(t, p)
		})
	}
}

func TestShutdownTimeoutAbortsASlowHandler(t *testing.T) {
	t.Parallel()
	p := running(t, latestRevision, "MCPRT_SERVER_MODE=TEST", "MCPRT_SERVER_SHUTDOWN_TIMEOUT_MS=300")
	requireSleepFixture(t, p)
	p.Send(sleepCall("1", 600000, true))
	pingOK(t, p, "2")
	p.Signal(syscall.SIGTERM)
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit code %d, want 0 once server.shutdownTimeoutMs has passed\nstderr:\n%s", code, p.Stderr())
	}
	p.ExpectSilence(t, 0)
	// SPEC §4.2: the abandoned handler gets its completion record, outcome
	// aborted, before the process exits.
	p.ExpectLog(t, "with outcome aborted for the sleep", func(m map[string]any) bool {
		return m["msg"] == "tool call completed" && m["tool"] == "sleep" && m["outcome"] == "aborted"
	})
	checkLogs(t, p)
}
