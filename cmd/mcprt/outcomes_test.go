package main

// Every completion outcome of a tools/call and its records.

import (
	"fmt"
	"reflect"
	"syscall"
	"testing"
	"time"
)

// ---------------------------------------------------------------------------
// every completion outcome.

func TestOutcomeSuccess(t *testing.T) {
	t.Parallel()
	const secret = "ghp_SECRETMARKER0042"
	c := newToolClient(t, testMode)
	id := c.sendCID("echo", `{ "message" : "`+secret+`" }`, "success-cid")
	v := c.success(id)
	if !reflect.DeepEqual(v, map[string]any{"message": secret}) {
		t.Fatalf("echo returned %v", v)
	}
	rec := c.record("success for echo", func(m map[string]any) bool { return m["tool"] == "echo" })
	if rec["outcome"] != "success" {
		t.Fatalf("record %v, want outcome success", rec)
	}
	c.checkRecordOf(rec, "echo", "success-cid", "", len(`{"message":"`+secret+`"}`))
	// Absent arguments count as {}.
	c.ok("noop", "")
	rec = c.record("success for noop", func(m map[string]any) bool { return m["tool"] == "noop" })
	if fmt.Sprint(rec["payloadBytes"]) != "2" {
		t.Errorf("noop record payloadBytes %v, want 2 for absent arguments", rec["payloadBytes"])
	}
	c.close()
	c.noSecret(secret)
}

func TestOutcomeTimeoutThenLateCompleted(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode, "MCPRT_TOOLS_DEFAULT_TIMEOUT_MS=100")
	for _, ignoreCancel := range []bool{false, true} {
		sent := time.Now()
		id := c.send("sleep", sleepArgs(400, ignoreCancel))
		e := c.toolError(id, "TIMEOUT")
		if elapsed := time.Since(sent); elapsed < 100*time.Millisecond {
			t.Errorf("TIMEOUT after %v, before the 100 ms deadline", elapsed)
		}
		late := c.recordOf(e.RunID, "late_completed")
		lines := c.p.StderrLines()
		timeoutAt, lateAt := -1, -1
		count := 0
		for i, m := range lines {
			if m["msg"] != "tool call completed" || m["runId"] != e.RunID {
				continue
			}
			count++
			switch m["outcome"] {
			case "timeout":
				timeoutAt = i
			case "late_completed":
				lateAt = i
			}
		}
		if count != 2 || timeoutAt < 0 || timeoutAt > lateAt {
			t.Errorf("ignoreCancel=%v: records of run %s: timeout at %d, late_completed at %d, %d in all; want timeout then late_completed, two records",
				ignoreCancel, e.RunID, timeoutAt, lateAt, count)
		}
		if late["correlationId"] != e.CorrelationID {
			t.Errorf("late_completed correlationId %v, want %s", late["correlationId"], e.CorrelationID)
		}
		if ignoreCancel && time.Since(sent) < 400*time.Millisecond {
			t.Errorf("late_completed logged before the 400 ms sleep could have ended")
		}
	}
	c.ping()
	c.close()
}

func TestOutcomeDisconnectedCompleted(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode)
	sent := time.Now()
	id := c.send("sleep", sleepArgs(600, true))
	c.ping() // the sleep was dispatched before the ping was read
	c.neverAnswered(id)
	c.close() // exit code 0
	if elapsed := time.Since(sent); elapsed < 600*time.Millisecond {
		t.Errorf("the process exited %v after the call, before the 600 ms handler could return", elapsed)
	}
	rec := c.record("disconnected_completed for the sleep", func(m map[string]any) bool { return m["tool"] == "sleep" })
	if rec["outcome"] != "disconnected_completed" {
		t.Fatalf("record %v, want outcome disconnected_completed", rec)
	}
	if n := len(c.records()); n != 1 {
		t.Errorf("%d completion records, want 1", n)
	}
}

func TestOutcomeAbortedAtShutdown(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode, "MCPRT_SERVER_SHUTDOWN_TIMEOUT_MS=300")
	// The handler ignores its cancellation for 10 minutes: a server that
	// waited for it past the 300 ms shutdown timeout would outlast Wait's
	// bound, so no wall-clock threshold judges how fast it exits.
	id := c.sendCID("sleep", sleepArgs(600000, true), "shutdown-cid")
	c.waitHealth(1)
	c.neverAnswered(id)
	signalled := time.Now()
	c.p.Signal(syscall.SIGTERM)
	if code := c.p.Wait(t); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0\nstderr:\n%s", code, c.p.Stderr())
	}
	t.Logf("exit %v after SIGTERM; server.shutdownTimeoutMs is 300", time.Since(signalled).Round(time.Millisecond))
	c.done()
	rec := c.record("aborted for the sleep", func(m map[string]any) bool { return m["tool"] == "sleep" })
	if rec["outcome"] != "aborted" || rec["correlationId"] != "shutdown-cid" {
		t.Fatalf("record %v, want outcome aborted with correlationId shutdown-cid", rec)
	}
}

// TestTimedOutCallAbortedAtShutdown: a call that timed out and whose
// handler still runs when the shutdown time is up has two records, timeout
// then aborted.
func TestTimedOutCallAbortedAtShutdown(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode, "MCPRT_SERVER_SHUTDOWN_TIMEOUT_MS=300", "MCPRT_TOOLS_DEFAULT_TIMEOUT_MS=100")
	e := c.toolError(c.send("sleep", sleepArgs(10000, true)), "TIMEOUT")
	c.recordOf(e.RunID, "timeout")
	c.p.Signal(syscall.SIGTERM)
	if code := c.p.Wait(t); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}
	c.done() // checks: timeout, then one final record
	c.recordOf(e.RunID, "aborted")
}
