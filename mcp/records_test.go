package mcp

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// TestCompletionRecordsExact compares the completion records of one
// session, field by field, with deterministic ids (core.SequenceGenerator)
// and time (core.ManualClock): the call's deadline is the clock's timer,
// so the test moves the clock instead of waiting.
func TestCompletionRecordsExact(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		clock := core.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		f := newFixture()
		c := newTestClient(t, tr, testConfig(), Options{IDs: &core.SequenceGenerator{}, Clock: clock}, f.setup(t), Version20251125)
		seq := func(n int) string {
			g := &core.SequenceGenerator{}
			var s string
			for range n {
				s = g.NewID()
			}
			return s
		}
		waitN := func(n int) []map[string]any {
			t.Helper()
			return c.logBuf.waitLog(t, itoa(n)+" records", func(recs []map[string]any) bool { return len(recs) >= n })
		}

		// Success, then a tool error. A record is written once the answer
		// is out: wait for each, so that the log's order is the calls'.
		if res := c.call("1", "noop", ""); res["isError"] != false {
			t.Fatalf("noop: %v", res)
		}
		waitN(1)
		if e := toolError(t, c.call("2", "oops", `{"a":1}`)); e == nil || e["runId"] != seq(4) || e["correlationId"] != seq(5) {
			t.Fatalf("oops: %v", e)
		}
		waitN(2)
		// A timeout: the deadline fires when the clock reaches it.
		c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"stubborn","_meta":{"correlationId":"late"}}}`)
		recv(t, f.started, "stubborn started")
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		if err := clock.WaitForTimers(ctx, 1); err != nil {
			t.Fatalf("the deadline was never armed: %v", err)
		}
		clock.Advance(49 * time.Millisecond)
		c.quiet() // not yet
		clock.Advance(time.Millisecond)
		if e := toolError(t, c.expect()["result"].(map[string]any)); e == nil || e["code"] != "TIMEOUT" {
			t.Fatalf("stubborn: %v", e)
		}
		waitN(3)
		clock.Advance(25 * time.Millisecond)
		close(f.gate)
		waitN(4)
		// A cancelled call (honest's deadline is never reached: the
		// clock stands still).
		c.send(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"honest"}}`)
		recv(t, f.started, "honest started")
		c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b"}}`)
		waitN(5)
		// A protocol error: no runId, the connection's correlation id.
		rpcError(t, c.request("5", MethodToolsCall, `{"name":"noop","arguments":[]}`))
		recs := waitN(6)

		conn := seq(1)
		want := []map[string]any{
			{"level": "INFO", "outcome": "success", "tool": "noop", "runId": seq(2), "correlationId": seq(3), "durationMs": 0.0, "payloadBytes": 2.0},
			{"level": "INFO", "outcome": "tool_error", "errorCode": "INTERNAL", "tool": "oops", "runId": seq(4), "correlationId": seq(5), "durationMs": 0.0, "payloadBytes": 7.0},
			{"level": "WARN", "outcome": "timeout", "errorCode": "TIMEOUT", "tool": "stubborn", "runId": seq(6), "correlationId": "late", "durationMs": 50.0, "payloadBytes": 2.0},
			{"level": "WARN", "outcome": "late_completed", "tool": "stubborn", "runId": seq(6), "correlationId": "late", "durationMs": 75.0, "payloadBytes": 2.0},
			{"level": "WARN", "outcome": "aborted", "tool": "honest", "runId": seq(7), "correlationId": seq(8), "durationMs": 0.0, "payloadBytes": 2.0},
			{"level": "INFO", "outcome": "protocol_error", "tool": "noop", "correlationId": conn, "durationMs": 0.0, "payloadBytes": 0.0},
		}
		if len(recs) != len(want) {
			t.Fatalf("%d records, want %d:\n%s", len(recs), len(want), c.logBuf.String())
		}
		for i, r := range recs {
			delete(r, "time")
			delete(r, "msg")
			if r["connectionCorrelationId"] != conn {
				t.Errorf("record %d: connectionCorrelationId %v, want %s", i, r["connectionCorrelationId"], conn)
			}
			delete(r, "connectionCorrelationId")
			got, _ := json.Marshal(r)
			exp, _ := json.Marshal(want[i])
			if string(got) != string(exp) {
				t.Errorf("record %d:\n got %s\nwant %s", i, got, exp)
			}
		}
	})
}
