package main

// Slow requests through the TEST fixture sleep: cancellation, stdin EOF and signals while they run.

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// --- slow requests (TEST fixtures, the contract) ---------------------------------

// sleepCall is a tools/call of the TEST fixture sleep.
func sleepCall(id string, ms int, ignoreCancel bool) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":%d,"ignoreCancel":%v}}}`,
		id, ms, ignoreCancel)
}

// requireSleepFixture fails the test unless the running server (started
// with MCPRT_SERVER_MODE=TEST) serves the sleep fixture: a broken fixture
// is a failure, never a reason to skip.
func requireSleepFixture(t *testing.T, p *wiretest.Proc) {
	t.Helper()
	p.Send(sleepCall(`"probe"`, 1, false))
	line := p.Expect(t)
	res, err := wiretest.CheckResult(line, `"probe"`)
	if err != nil || res["isError"] == true {
		t.Fatalf("the TEST fixture sleep is not available in mode TEST: %s", clip(line))
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
	// the abandoned handler gets its completion record, outcome
	// aborted, before the process exits.
	p.ExpectLog(t, "with outcome aborted for the sleep", func(m map[string]any) bool {
		return m["msg"] == "tool call completed" && m["tool"] == "sleep" && m["outcome"] == "aborted"
	})
	checkLogs(t, p)
}
