package main

// End-to-end tests of the mcprt binary over its stdio pipes: the lifecycle
// of the lifecycle table row by row, the error data, batches,
// configuration and the process contract. Every stdout line read is checked to
// be protocol (wiretest), and every test that ends cleanly checks that each
// stderr line is a JSON log entry with time, level and msg.

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/mcprt/mcprt/internal/wiretest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	wiretest.Cleanup()
	os.Exit(code)
}

// The four session-based revisions.
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
// id and the code, whose data holds a correlationId.
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
