package store

import (
	"sync"
	"testing"
)

func schemaRows(t *testing.T, db *DB) map[int]int {
	t.Helper()
	h, err := db.handle(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := h.QueryContext(testCtx(t), `SELECT version, COUNT(*) FROM schema_version GROUP BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[int]int{}
	for rows.Next() {
		var v, n int
		if err := rows.Scan(&v, &n); err != nil {
			t.Fatal(err)
		}
		got[v] = n
	}
	return got
}

func TestOpenIsLazyAndMigratesOnce(t *testing.T) {
	db, _ := newDB(t)
	if db.db != nil {
		t.Fatal("New opened the database; it must wait for the first use")
	}
	if err := db.Open(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := db.Open(testCtx(t)); err != nil { // reopen: nothing to apply
		t.Fatal(err)
	}
	got := schemaRows(t, db)
	for _, m := range migrations {
		if got[m.version] != 1 {
			t.Errorf("schema version %d recorded %d times, want once", m.version, got[m.version])
		}
	}
	h, _ := db.handle(testCtx(t))
	var mode string
	if err := h.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}

// Many handles opening one fresh directory at once: each step is applied
// exactly once and nobody fails with SQLITE_BUSY.
func TestConcurrentFirstOpen(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	dbs := make([]*DB, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range dbs {
		db, err := New(Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		dbs[i] = db
		t.Cleanup(func() { db.Close() })
		wg.Go(func() { errs[i] = db.Open(testCtx(t)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("opener %d: %v", i, err)
		}
	}
	got := schemaRows(t, dbs[0])
	if len(got) != len(migrations) {
		t.Errorf("schema_version has %d versions, want %d", len(got), len(migrations))
	}
	for v, c := range got {
		if c != 1 {
			t.Errorf("version %d recorded %d times", v, c)
		}
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	db, _ := newDB(t)
	h, err := db.handle(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Exec(`INSERT INTO schema_version VALUES (999, 'future', 'x')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	err = db.Open(testCtx(t))
	if err == nil {
		t.Fatal("opened a database from a newer mcprt")
	}
	t.Log(err)
}

func TestNewNeedsDir(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without a directory succeeded")
	}
}
