package wiretest

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

func TestMatch(t *testing.T) {
	tests := []struct {
		name      string
		want, got string
		errHas    string // "" means the values match
	}{
		{"equal objects", `{"a":1,"b":"x"}`, `{"b":"x","a":1}`, ""},
		{"star matches a string", `{"a":"*"}`, `{"a":"anything"}`, ""},
		{"star matches an object", `{"a":"*"}`, `{"a":{"b":[1,2]}}`, ""},
		{"star matches null", `{"a":"*"}`, `{"a":null}`, ""},
		{"star at the top", `"*"`, `[1,2,3]`, ""},
		{"star needs the member", `{"a":"*"}`, `{}`, `missing member "a"`},
		{"extra member fails", `{"a":1}`, `{"a":1,"b":2}`, `$: unexpected member "b"`},
		{"ellipsis allows extra members", `{"a":1,"...":true}`, `{"a":1,"b":2}`, ""},
		{"ellipsis still checks listed members", `{"a":1,"...":true}`, `{"a":2,"b":2}`, `$.a: want 1, got 2`},
		{"ellipsis is per object", `{"a":{"b":1},"...":true}`, `{"a":{"b":1,"c":2}}`, `$.a: unexpected member "c"`},
		{"nested ellipsis", `{"a":{"b":1,"...":true}}`, `{"a":{"b":1,"c":2}}`, ""},
		{"ellipsis false is a member", `{"...":false}`, `{}`, `missing member "..."`},
		{"missing nested member", `{"error":{"data":{"code":"X"}}}`, `{"error":{"data":{}}}`, `$.error.data: missing member "code"`},
		{"number text must match", `{"id":1}`, `{"id":1.0}`, `$.id: want 1, got 1.0`},
		{"big number text", `{"id":9007199254740993}`, `{"id":9007199254740993}`, ""},
		{"number vs string", `{"id":1}`, `{"id":"1"}`, `$.id: want 1, got "1"`},
		{"string vs number", `{"id":"1"}`, `{"id":1}`, `$.id: want "1", got 1`},
		{"null", `{"id":null}`, `{"id":null}`, ""},
		{"null vs value", `{"id":null}`, `{"id":0}`, `$.id: want null, got 0`},
		{"bool", `[true,false]`, `[true,false]`, ""},
		{"bool mismatch", `[true]`, `[false]`, `$[0]: want true`},
		{"array length", `[1,2]`, `[1]`, `want 2 elements, got 1`},
		{"array order", `[1,2]`, `[2,1]`, `$[0]: want 1, got 2`},
		{"array vs object", `[]`, `{}`, `want an array`},
		{"object vs array", `{}`, `[]`, `want an object`},
		{"star inside array", `[{"id":"*"},{"id":2}]`, `[{"id":"z"},{"id":2}]`, ""},
		{"literal star string is not special in got", `{"a":"b"}`, `{"a":"*"}`, `$.a: want "b", got "*"`},
		{"invalid expectation", `{`, `{}`, `expectation is not valid JSON`},
		{"invalid actual", `{}`, `{"a":}`, `actual value is not valid JSON`},
		{"two values are not one", `{}`, `{} {}`, `actual value is not valid JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Match(tt.want, tt.got)
			switch {
			case tt.errHas == "" && err != nil:
				t.Fatalf("Match(%s, %s) = %v, want a match", tt.want, tt.got, err)
			case tt.errHas != "" && err == nil:
				t.Fatalf("Match(%s, %s) matched, want an error containing %q", tt.want, tt.got, tt.errHas)
			case tt.errHas != "" && !strings.Contains(err.Error(), tt.errHas):
				t.Fatalf("Match(%s, %s) = %q, want it to contain %q", tt.want, tt.got, err, tt.errHas)
			}
		})
	}
}

func TestCheckProtocolLine(t *testing.T) {
	good := []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/message"}`,
		`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}]`,
	}
	bad := []string{
		``,
		`mcprt ready`,
		`{"level":"INFO","msg":"hello"}`,
		`{"jsonrpc":"1.0","id":1,"result":{}}`,
		`{"jsonrpc":2,"id":1,"result":{}}`,
		`[]`,
		`[{"jsonrpc":"2.0","id":1,"result":{}},1]`,
		`{"jsonrpc":"2.0","id":1,"result":{}} {"jsonrpc":"2.0","id":2,"result":{}}`,
		`"2.0"`,
	}
	for _, line := range good {
		if err := CheckProtocolLine(line); err != nil {
			t.Errorf("CheckProtocolLine(%s) = %v, want nil", line, err)
		}
	}
	for _, line := range bad {
		if err := CheckProtocolLine(line); err == nil {
			t.Errorf("CheckProtocolLine(%q) = nil, want an error", line)
		}
	}
}

func TestCheckLogLine(t *testing.T) {
	if _, err := CheckLogLine(`{"time":"2026-01-01T00:00:00Z","level":"INFO","msg":"ok","k":1}`); err != nil {
		t.Errorf("a good log line: %v", err)
	}
	for _, line := range []string{
		`plain text`,
		`[1]`,
		`{"level":"INFO","msg":"no time"}`,
		`{"time":"t","msg":"no level"}`,
		`{"time":"t","level":"INFO"}`,
		`{"time":"t","level":"INFO","msg":3}`,
	} {
		if _, err := CheckLogLine(line); err == nil {
			t.Errorf("CheckLogLine(%s) = nil, want an error", line)
		}
	}
}

func TestScriptEnv(t *testing.T) {
	script := "# header\nenv MCPRT_SERVER_NAME=demo\n  env MCPRT_LOGGING_LEVEL=debug \n> {}\n"
	got := ScriptEnv(script)
	want := []string{"MCPRT_SERVER_NAME=demo", "MCPRT_LOGGING_LEVEL=debug"}
	if !slices.Equal(got, want) {
		t.Fatalf("ScriptEnv = %q, want %q", got, want)
	}
}

func TestCleanEnvDropsParentVariables(t *testing.T) {
	t.Setenv("MCPRT_SERVER_NAME", "leaked")
	t.Setenv("MCPRT_SERVER_STARTUP_TIMEOUT_MS", "1")
	env := CleanEnv("A=1")
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name != "PATH" && name != "HOME" && name != "A" && kv != StartupTimeoutEnv {
			t.Errorf("CleanEnv passed %q", kv)
		}
	}
	if !slices.Contains(env, StartupTimeoutEnv) {
		t.Errorf("CleanEnv = %q, want %s among them", env, StartupTimeoutEnv)
	}
	if env[len(env)-1] != "A=1" {
		t.Errorf("CleanEnv = %q, want the extra entry last", env)
	}
}

// TestRunAgainstTheBinary plays a transcript through the real binary: the
// helper, the matcher and the directives end to end.
func TestRunAgainstTheBinary(t *testing.T) {
	p := Start(t, Build(t), Options{Env: []string{"MCPRT_SERVER_NAME=wiretest-demo"}})
	Run(t, p, `
# before initialize: ping works, the rest is gated
> {"jsonrpc":"2.0","id":1,"method":"ping"}
< {"jsonrpc":"2.0","id":1,"result":{}}
> {"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}
< {"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"wiretest-demo","version":"*"},"...":true}}
> {"jsonrpc":"2.0","method":"notifications/initialized"}
silence 50ms
close
exit 0
`)
	if lines := p.StderrLines(); len(lines) == 0 {
		t.Fatal("no log lines on stderr")
	}
}

// TestRunReportsMismatch checks that a transcript that does not match fails
// the test, by running it against a recording testing.TB.
func TestRunReportsMismatch(t *testing.T) {
	p := Start(t, Build(t), Options{})
	rec := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(rec, p, "> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n< {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n")
	}()
	<-done
	if !strings.Contains(rec.msg, "script line 2") || !strings.Contains(rec.msg, "$.id: want 2, got 1") {
		t.Fatalf("Run reported %q, want a mismatch on script line 2", rec.msg)
	}
}

// recorder is a testing.TB whose Fatalf records the message and ends the
// goroutine, so that a failing Run can be observed.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestCheckResultAndError(t *testing.T) {
	const cid = `"data":{"correlationId":"c"}`
	results := []struct {
		line, id string
		ok       bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, `1`, true},
		{`{"jsonrpc":"2.0","id":1.0,"result":{"a":1}}`, `1.0`, true},
		{`{"jsonrpc":"2.0","id":1.0,"result":{}}`, `1`, false}, // ids compare as text
		{`{"jsonrpc":"2.0","id":"1","result":{}}`, `1`, false},
		{`{"jsonrpc":"2.0","id":1,"result":[]}`, `1`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{},"extra":1}`, `1`, false},
		{`{"jsonrpc":"2.0","result":{}}`, `1`, false},
	}
	for _, r := range results {
		if _, err := CheckResult(r.line, r.id); (err == nil) != r.ok {
			t.Errorf("CheckResult(%s, %s) = %v, want ok=%v", r.line, r.id, err, r.ok)
		}
	}
	errs := []struct {
		line, id string
		code     int
		ok       bool
	}{
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m",` + cid + `}}`, `null`, -32700, true},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m",` + cid + `}}`, `null`, -32600, false},
		{`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"m",` + cid + `}}`, `null`, -32601, false},
		{`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"",` + cid + `}}`, `2`, -32601, false},
		{`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"m"}}`, `2`, -32601, false},
		{`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"m","data":"c"}}`, `2`, -32601, false},
		{`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"m","data":{"correlationId":""}}}`, `2`, -32601, false},
		{`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"m",` + cid + `},"result":{}}`, `2`, -32601, false},
	}
	for _, e := range errs {
		if _, err := CheckError(e.line, e.id, e.code); (err == nil) != e.ok {
			t.Errorf("CheckError(%s, %s, %d) = %v, want ok=%v", e.line, e.id, e.code, err, e.ok)
		}
	}
}
