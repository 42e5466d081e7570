package main

// Deadlines and cancellation of tools/call, and a panicking handler.

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// ---------------------------------------------------------------------------
// the slot stays held until a timed-out handler returns.

func TestSlotHeldAfterTimeout(t *testing.T) {
	t.Parallel()
	inBusyWindow(t, "the checks while the timed-out sleeper runs", func(ms int) (bool, time.Duration) {
		c := newToolClient(t, testMode, "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=1", "MCPRT_TOOLS_DEFAULT_TIMEOUT_MS=200")
		sent := time.Now()
		sleeper := c.send("sleep", sleepArgs(ms, true))
		res := c.result(sleeper)
		tookMs := time.Since(sent).Milliseconds()
		// The handler still runs and holds the only slot: a call is refused,
		// and health (an observer) answers without a slot.
		noop := c.send("noop", `{}`)
		noopRes := c.result(noop)
		h := c.health()
		// The sleeper started after sent, so before ms it cannot have
		// returned; past it, the answers above prove nothing.
		if ok, took := within(sent, ms); !ok {
			return false, took
		}
		e := c.toolErrorOf(sleeper, "TIMEOUT", res)
		if tookMs < 200 {
			t.Errorf("TIMEOUT after %d ms, want it at the 200 ms deadline, long before the handler returns", tookMs)
		}
		c.recordOf(e.RunID, "timeout")
		c.failsOf(noop, "noop", `{}`, "RESOURCE_EXHAUSTED", noopRes)
		if healthInt(t, h, "resources", "concurrentExecutions") != 1 || healthInt(t, h, "resources", "maxConcurrentExecutions") != 1 {
			t.Errorf("health resources %v, want concurrentExecutions 1 of 1", h["resources"])
		}
		checkStatus(t, h, "unhealthy")
		late := c.recordOf(e.RunID, "late_completed")
		if time.Since(sent) < time.Duration(ms)*time.Millisecond {
			t.Errorf("late_completed logged before the %d ms sleep could have ended: %v", ms, late)
		}
		c.ok("noop", `{}`)
		// Never a second response for the timed-out id (readOne fails on one);
		// close also checks that nothing is left on stdout.
		c.close()
		return true, 0
	})
}

// ---------------------------------------------------------------------------
// notifications/cancelled.

func TestCancellation(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode, "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=1")
	for _, rawID := range []string{`"cancel-me"`, `4242`} {
		cid := "cancel-cid-" + strings.Trim(rawID, `"`)
		c.p.Send(toolsCallLine(rawID, "sleep", sleepArgs(5000, false), `{"correlationId":"`+cid+`"}`))
		c.waitHealth(1) // in flight
		c.cancel(rawID)
		c.neverAnswered(rawID)
		rec := c.record("for the cancelled sleep "+rawID, func(m map[string]any) bool { return m["correlationId"] == cid })
		if rec["outcome"] != "aborted" || rec["tool"] != "sleep" {
			t.Errorf("record %v, want outcome aborted for the sleep", rec)
		}
		// The slot is free again: with one slot, a call succeeds.
		c.ok("noop", `{}`)
		c.ping()
	}
	// A handler that ignores the cancellation keeps its slot until it
	// returns; the request still gets no response.
	stubborn := 0
	inBusyWindow(t, "the checks while the stubborn sleeper runs", func(ms int) (bool, time.Duration) {
		stubborn++
		rawID, cid := fmt.Sprintf(`"stubborn-%d"`, stubborn), fmt.Sprintf("stubborn-cid-%d", stubborn)
		sent := time.Now()
		c.p.Send(toolsCallLine(rawID, "sleep", sleepArgs(ms, true), `{"correlationId":"`+cid+`"}`))
		c.waitHealth(1)
		c.cancel(rawID)
		c.neverAnswered(rawID)
		c.ping() // the cancellation was read before the ping
		noop := c.send("noop", `{}`)
		res := c.result(noop)
		// Past ms the sleeper may have returned: the answer proves nothing.
		if ok, took := within(sent, ms); !ok {
			c.waitHealth(0) // its slot is free again for the next try
			return false, took
		}
		c.failsOf(noop, "noop", `{}`, "RESOURCE_EXHAUSTED", res)
		rec := c.record("for the stubborn sleep", func(m map[string]any) bool { return m["correlationId"] == cid })
		if rec["outcome"] != "aborted" {
			t.Errorf("record %v, want outcome aborted", rec)
		}
		return true, 0
	})
	c.ok("noop", `{}`)
	// 1 and 1.0 are different ids: cancelling 1 leaves 1.0 running.
	c.p.Send(toolsCallLine(`1.0`, "sleep", sleepArgs(300, false), ""))
	c.cancel(`1`)
	if v := c.success(`1.0`); fmt.Sprint(v) != "map[sleptMs:300]" {
		t.Errorf("sleep 1.0 returned %v", v)
	}
	c.record("success for the sleep 1.0", func(m map[string]any) bool {
		return m["tool"] == "sleep" && m["outcome"] == "success"
	})
	aborted := 0
	for _, rec := range c.records() {
		if rec["outcome"] == "aborted" {
			aborted++
		}
	}
	if want := 2 + stubborn; aborted != want {
		t.Errorf("%d aborted records, want %d (two cancelled sleeps, %d stubborn one(s))", aborted, want, stubborn)
	}
	c.close()
}

// ---------------------------------------------------------------------------
// a panicking handler.

func TestPanicKeepsServing(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode)
	for range 3 {
		c.fails("panic", `{}`, "INTERNAL")
		c.ping()
		c.ok("noop", `{}`)
	}
	found := false
	for _, m := range c.p.StderrLines() {
		if strings.Contains(fmt.Sprint(m["msg"]), "panic") {
			found = true
		}
	}
	if !found {
		t.Errorf("no log line about the recovered panic")
	}
	c.close()
}
