package main

// Busy windows: tests whose checks must run while the server is still
// busy (a sleeping handler holding a slot, an agent holding its queue)
// hold it busy for a span of wall time, since those handlers sleep on the
// real clock. On a loaded machine (CI runs every package at once under
// -race on two cores) the checks can outlast the span; such a try proves
// nothing either way, so it is neither passed nor failed: the test tries
// again in a longer span. Only an overrun of the longest span fails.

import (
	"testing"
	"time"
)

// busyWindows are the spans tried, in milliseconds, shortest first.
var busyWindows = []int{1500, 6000, 24000}

// inBusyWindow runs try with each span of busyWindows until one try
// reports that its checks ran within its span (inTime), and fails the
// test when even the longest span was overrun. A try that overran must
// not assert anything that the end of the span could have falsified; it
// leaves its server to its cleanup.
func inBusyWindow(t *testing.T, what string, try func(ms int) (inTime bool, took time.Duration)) {
	t.Helper()
	for i, ms := range busyWindows {
		inTime, took := try(ms)
		if inTime {
			return
		}
		if i == len(busyWindows)-1 {
			t.Fatalf("%s took %v, past the %d ms span in every span tried %v: the server answers far too slowly, or never while busy",
				what, took.Round(time.Millisecond), ms, busyWindows)
		}
		t.Logf("%s took %v, past the %d ms span (a loaded machine): trying again in a longer one", what, took.Round(time.Millisecond), ms)
	}
}

// within reports whether less than ms milliseconds have passed since start,
// and how long has passed.
func within(start time.Time, ms int) (bool, time.Duration) {
	took := time.Since(start)
	return took < time.Duration(ms)*time.Millisecond, took
}

// failsOf checks that the response res to a call of name with args (sent
// with id, no client correlation id) is the tool error code, as fails
// does, and returns it.
func (c *toolClient) failsOf(id, name, args, code string, res map[string]any) toolErr {
	c.t.Helper()
	e := c.toolErrorOf(id, code, res)
	if !uuidV4.MatchString(e.CorrelationID) {
		c.t.Fatalf("%s: generated correlationId %q is not a UUID v4", name, e.CorrelationID)
	}
	rec := c.recordOf(e.RunID, "tool_error")
	c.checkRecordOf(rec, name, e.CorrelationID, code, compactLen(c.t, args))
	return e
}
