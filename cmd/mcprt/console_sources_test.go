package main

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/reservation"
	"github.com/mcprt/mcprt/store"
)

// TestConsoleSourcesConflicts: the reservations view names, for each
// lease, the other agents' leases in its way — overlapping, and one of
// the two exclusive — and no others. The store never grants such a pair
// (it refuses the second), so the test makes one by rewriting a granted
// lease's pattern in the database, as a build with other rules, or a
// holder that was gone, could leave it.
func TestConsoleSourcesConflicts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.New(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	now := time.Now()
	n := 0
	reserve := func(agent, pattern string, exclusive bool) string {
		t.Helper()
		pat, err := reservation.ParsePattern(pattern)
		if err != nil {
			t.Fatal(err)
		}
		n++
		id := "lease-" + strconv.Itoa(n)
		got, conflicts, err := db.Reservations().Reserve(ctx, reservation.ReserveOp{AgentID: agent, Patterns: []reservation.Pattern{pat},
			Exclusive: exclusive, Now: now, ExpiresAt: now.Add(time.Hour), MaxPerAgent: 10, NewID: func() string { return id }})
		if err != nil || len(conflicts) != 0 || len(got) != 1 {
			t.Fatalf("reserve %s for %s: %v %v %v", pattern, agent, got, conflicts, err)
		}
		return id
	}
	srcAll := reserve("alpha", "src/**", true)
	ownA := reserve("alpha", "src/a.go", false) // under alpha's own src/**: no conflict with it
	docs := reserve("beta", "docs/**", true)
	sharedMod := reserve("beta", "go.mod", false)
	sharedMod2 := reserve("gamma", "go.mod", false) // shared with shared: no conflict
	// Make beta's exclusive docs/** lease cover src/a.go: under alpha's
	// exclusive src/** and on alpha's shared src/a.go.
	raw, err := sql.Open("sqlite", db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, `UPDATE reservations SET pattern = 'src/a.go', prefix = 'src/a.go' WHERE id = ?`, docs); err != nil {
		t.Fatal(err)
	}

	src := consoleReservations{store: db.Reservations(), clock: core.SystemClock{}}
	got, err := src.Active(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{srcAll: {docs}, ownA: {docs}, docs: {srcAll, ownA}, sharedMod: nil, sharedMod2: nil}
	if len(got) != len(want) {
		t.Fatalf("Active returned %d leases, want %d: %+v", len(got), len(want), got)
	}
	for _, r := range got {
		w, ok := want[r.ID]
		if !ok || !slices.Equal(r.Conflicts, w) {
			t.Errorf("lease %s (%s of %s): conflicts %v, want %v", r.ID, r.Path, r.AgentID, r.Conflicts, w)
		}
	}
}
