package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/reservation"
	"github.com/mcprt/mcprt/internal/diskerr"
)

// A store opened with Options.ReadOnly reads what a writer left, never
// creates a directory or file, and refuses writes.
func TestReadOnlyStore(t *testing.T) {
	ctx := testCtx(t)
	missing := filepath.Join(t.TempDir(), "none")
	ro, err := New(Options{Dir: missing, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ro.Reservations().List(ctx, "a", t0, 10); err == nil {
		t.Error("a read-only store without a database file: List succeeded, want an error")
	}
	ro.Close()
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("a read-only store created its directory (stat: %v)", err)
	}

	db, _ := newDB(t)
	pat, err := reservation.ParsePattern("src/**")
	if err != nil {
		t.Fatal(err)
	}
	op := reservation.ReserveOp{AgentID: "a", Patterns: []reservation.Pattern{pat}, Exclusive: true, Now: t0,
		ExpiresAt: t0.Add(time.Hour), MaxPerAgent: 10, NewID: func() string { return "lease-1" }}
	if _, _, err := db.Reservations().Reserve(ctx, op); err != nil {
		t.Fatal(err)
	}
	ro, err = New(Options{Dir: filepath.Dir(db.Path()), ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if v, err := ro.Version(ctx); err != nil || v != SchemaVersion() {
		t.Errorf("Version = %d, %v; want %d", v, err, SchemaVersion())
	}
	leases, total, err := ro.Reservations().List(ctx, "a", t0, 10)
	if err != nil || total != 1 || len(leases) != 1 || leases[0].Pattern != "src/**" {
		t.Errorf("List = %+v, %d, %v; want the lease of src/**", leases, total, err)
	}
	op.NewID = func() string { return "lease-2" }
	op.AgentID = "b"
	if _, _, err := ro.Reservations().Reserve(ctx, op); err == nil || core.AsError(err).Code != diskerr.CodeReadOnly {
		t.Errorf("a write through a read-only store: %v, want %s", err, diskerr.CodeReadOnly)
	}
}
