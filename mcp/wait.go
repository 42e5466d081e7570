package mcp

import (
	"context"
)

// WaitWithoutSlot runs wait, a blocking wait of the tool call whose
// handler context ctx is (a long poll: aacp_receive with waitMs), without
// the call's execution slot (resources.maxConcurrentExecutions). The slot
// is given back before wait runs and taken again when it returns, so any
// number of waiting calls, from one client or many, never keep other calls
// from running: they are bounded by the in-flight bound of their
// connection (transport.maxInFlight), not by the execution slots.
//
// When no slot is free as the wait ends, the call finishes without one:
// what follows a wait must be short (hand over what arrived and return).
// Outside a tool call (or an InvokeTool run), or for a call that holds no
// slot (an observer), it
// just runs wait. It returns wait's error.
func WaitWithoutSlot(ctx context.Context, wait func(context.Context) error) error {
	ci := callInfoFrom(ctx)
	if ci == nil || ci.slot == nil || !ci.slot.held.CompareAndSwap(true, false) {
		return wait(ctx)
	}
	ci.slot.slots.Release()
	defer ci.slot.take()
	return wait(ctx)
}
