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

// testCtx returns a context that ends with the test (or after a minute).
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
