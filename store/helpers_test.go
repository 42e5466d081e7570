package store

import (
	"context"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// t0 is the manual clock's start in every test.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newDB returns a DB in a fresh temporary directory, closed at cleanup.
func newDB(t testing.TB) (*DB, *core.ManualClock) {
	t.Helper()
	clock := core.NewManualClock(t0)
	db, err := New(Options{Dir: t.TempDir(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, clock
}

// testCtx returns a context that ends with the test, or at the test
// binary's deadline (-timeout; 10 minutes without one): it only ends a
// hung test. (A minute was exceeded by TestKeySearchMatchesScan on a
// loaded 2-core machine, whose store calls then failed with TIMEOUT.)
func testCtx(t testing.TB) context.Context {
	deadline := time.Now().Add(10 * time.Minute)
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if at, set := d.Deadline(); set {
			deadline = at
		}
	}
	ctx, cancel := context.WithDeadline(t.Context(), deadline)
	t.Cleanup(cancel)
	return ctx
}
