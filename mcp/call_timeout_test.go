package mcp

import (
	"errors"
	"testing"

	"github.com/mcprt/mcprt/jsonrpc"
)

// Timeouts, cancellation, the session's end, the exclusive lock and the
// audit sink.

func TestSlotHeldAfterTimeout(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		cfg := testConfig()
		cfg.Limits.MaxConcurrentExecutions = 1
		f := newFixture()
		c := newTestClient(t, tr, cfg, Options{}, f.setup(t), Version20251125)
		res := c.call("1", "stubborn", "")
		if e := toolError(t, res); e == nil || e["code"] != "TIMEOUT" || e["retryable"] != true {
			t.Fatalf("want TIMEOUT, got %v", res)
		}
		recv(t, f.started, "stubborn started")
		c.waitRecord(OutcomeTimeout)
		// The stubborn handler still runs: the slot is held.
		if e := toolError(t, c.call("2", "noop", "")); e == nil || e["code"] != "RESOURCE_EXHAUSTED" || e["retryable"] != true {
			t.Fatalf("want RESOURCE_EXHAUSTED, retryable, while the late handler holds the slot, got %v", e)
		}
		// Observers answer while saturated.
		if res := c.call("3", "watch", ""); res["isError"] != false {
			t.Fatalf("observer: %v", res)
		}
		if got := c.srv.Stats().ConsecutiveExhausted; got != 1 {
			t.Errorf("ConsecutiveExhausted = %d, want 1 (observers neither raise nor reset it)", got)
		}
		close(f.gate)
		c.waitRecord(OutcomeLateCompleted)
		c.quiet() // no second response
		if res := c.call("4", "noop", ""); res["isError"] != false {
			t.Fatalf("noop after release: %v", res)
		}
		if got := c.srv.Stats().ConsecutiveExhausted; got != 0 {
			t.Errorf("ConsecutiveExhausted = %d after a completed call, want 0", got)
		}
	})
}

func TestCancelAndDisconnect(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		f := newFixture()
		c := newTestClient(t, tr, testConfig(), Options{}, f.setup(t), Version20251125)
		c.send(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"block"}}`)
		recv(t, f.started, "block started")
		if n := c.srv.Stats().ConcurrentExecutions; n != 1 {
			t.Fatalf("%d slots in use while block runs", n)
		}
		c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"user"}}`)
		if cause := recv(t, f.causes, "cause of the cancellation"); !errors.Is(cause, ErrCancelled) {
			t.Errorf("context.Cause after notifications/cancelled = %v, want ErrCancelled", cause)
		}
		rec := c.waitRecord(OutcomeAborted)
		if _, has := rec["errorCode"]; has {
			t.Errorf("aborted record with an errorCode (the client got no answer): %v", rec)
		}
		c.quiet() // no answer to the cancelled call
		// The record is written after the slot is released.
		if n := c.srv.Stats().ConcurrentExecutions; n != 0 {
			t.Fatalf("%d slots in use after the aborted record", n)
		}

		c.send(`{"jsonrpc":"2.0","id":"c2","method":"tools/call","params":{"name":"block"}}`)
		recv(t, f.started, "block started")
		c.sess.Close()
		if cause := recv(t, f.causes, "cause of the close"); !errors.Is(cause, ErrSessionClosed) ||
			!errors.Is(cause, jsonrpc.ErrClosed) {
			t.Errorf("context.Cause after the session closed = %v, want ErrSessionClosed", cause)
		}
		c.waitRecord(OutcomeDisconnectedCompleted)
		if st := c.sess.State(); st != StateClosed {
			t.Errorf("state %v after Close", st)
		}
	})
}

// TestTimeoutCause: at the deadline the handler's context says ErrTimeout,
// the client gets TIMEOUT at once, and the records are timeout then
// late_completed.
func TestTimeoutCause(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		f := newFixture()
		c := newTestClient(t, tr, testConfig(), Options{}, f.setup(t), Version20251125)
		e := toolError(t, c.call("1", "honest", ""))
		if e == nil || e["code"] != "TIMEOUT" {
			t.Fatalf("want TIMEOUT, got %v", e)
		}
		if cause := recv(t, f.causes, "cause of the deadline"); !errors.Is(cause, ErrTimeout) {
			t.Errorf("context.Cause at the deadline = %v, want ErrTimeout", cause)
		}
		c.logBuf.waitLog(t, "timeout, late_completed", func(recs []map[string]any) bool {
			return recordsOf(recs, e["runId"]) == "timeout,late_completed"
		})
		c.quiet()
	})
}

func TestExclusiveAndAudit(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		f := newFixture()
		sink := &recordingSink{}
		c := newTestClient(t, tr, testConfig(), Options{Audit: sink}, f.setup(t), Version20251125)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"excl"}}`)
		recv(t, f.started, "excl started")
		if n, _ := sink.counts(); n != 1 {
			t.Fatalf("%d audit enters before the handler ran, want 1", n)
		}
		// A second exclusive call waits for the lock and times out waiting.
		// Both calls time out (call 1 holds the lock past its deadline); pick
		// each answer by id.
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"excl"}}`)
		errs := map[float64]map[string]any{}
		for range 2 { // the answers to calls 1 and 2, in either order
			m := c.expect()
			errs[m["id"].(float64)] = toolError(t, m["result"].(map[string]any))
		}
		e1, e2 := errs[1], errs[2]
		if e1["code"] != "TIMEOUT" || e2["code"] != "TIMEOUT" {
			t.Fatalf("want TIMEOUT for both calls, got %v and %v", e1, e2)
		}
		if n, _ := sink.counts(); n != 1 {
			t.Fatalf("audit enter ran for a call that never got the lock")
		}
		// The lock wait that timed out still gets both records of a
		// timed-out call: timeout, then late_completed.
		c.logBuf.waitLog(t, "call 2's records", func(recs []map[string]any) bool {
			return recordsOf(recs, e2["runId"]) == "timeout,late_completed"
		})
		close(f.gate)
		// Call 1's late_completed record comes after its audit exit.
		c.logBuf.waitLog(t, "call 1's records", func(recs []map[string]any) bool {
			return recordsOf(recs, e1["runId"]) == "timeout,late_completed"
		})
		if n, x := sink.counts(); n != 1 || x != 1 {
			t.Fatalf("audit enter/exit %d/%d after the handler returned, want 1/1", n, x)
		}

		sink.refuse.Store(true)
		if e := toolError(t, c.call("3", "noop", "")); e == nil || e["code"] != "AUDIT_ENTER_FAILED" || e["retryable"] != true {
			t.Fatalf("want AUDIT_ENTER_FAILED, got %v", e)
		}
		if n, x := sink.counts(); n != x {
			t.Fatalf("enter/exit unpaired: %d/%d", n, x)
		}
		if c.srv.Stats().ConcurrentExecutions != 0 {
			t.Fatal("slot leaked after audit failure")
		}
	})
}
