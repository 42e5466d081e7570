package main

import (
	"testing"
)

// slotsInUse is health's resources.concurrentExecutions (health is an
// observer: it takes no slot).
func (a *aproc) slotsInUse(t *testing.T) int {
	t.Helper()
	res, _ := a.ok(t, "health", `{}`)["resources"].(map[string]any)
	return int(anum(res, "concurrentExecutions"))
}

// awaitNoSlotInUse asks health until no execution slot is held (bounded
// by a number of round trips, never by sleeping).
func (a *aproc) awaitNoSlotInUse(t *testing.T, what string) {
	t.Helper()
	for range 2000 {
		if a.slotsInUse(t) == 0 {
			return
		}
	}
	t.Fatalf("%s: execution slots are still held after 2000 health calls", what)
}

// TestHostileSlotsLongPollsHoldNoSlot: more long-poll aacp_receive calls
// than there are execution slots, from one client, hold no slot while
// they wait, so its other calls (and anyone's) still run. The waits still
// end with what arrives.
func TestHostileSlotsLongPollsHoldNoSlot(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir(), "waiter_001", "AdHoc", "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=4")
	a.ok(t, "aacp_receive", `{}`) // the journal is open
	var waits []string
	for range 6 {
		waits = append(waits, a.send("aacp_receive", `{"waitMs":30000}`))
		a.awaitNoSlotInUse(t, "a long poll waiting")
	}
	// Six waits on four slots: other calls still run.
	for range 3 {
		a.ok(t, "memory_store", `{"namespace":"ns","key":"k","value":1}`)
	}
	// Six messages to itself end the six waits.
	for range 6 {
		a.ok(t, "aacp_send", sendArgsTo("waiter_001", "CUSTOM_PING", `{"query":"alive?"}`))
	}
	got := 0
	for _, id := range waits {
		r, e := a.await(t, id)
		if e != nil {
			t.Fatalf("a waiting aacp_receive failed: %+v", e)
		}
		got += len(r["messages"].([]any))
	}
	if got != 6 {
		t.Fatalf("the waits received %d messages, want 6", got)
	}
}
