package main

// The lifecycle through the binary: initialize, the state machine and shutdown.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// --- initialize -------------------------------------------------

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
				`"serverInfo":{"name":"mcprt","version":` + jsonString(version) + `},"instructions":"*"}`
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

// --- the state machine ---------------------------------------------

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
	// connection's in a state error.
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
