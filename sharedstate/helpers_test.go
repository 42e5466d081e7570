package sharedstate

import (
	"context"
	"testing"
	"time"

	"github.com/mcprt/mcprt/natsengine/natstest"
	"github.com/mcprt/mcprt/store"
)

// node is one machine in a test: its own connection and local store.
type node struct {
	r  *Replicator
	db *store.DB
}

// newNode opens a store in dir (a fresh one when "") and a Replicator on
// its own connection to url; register adds handlers before Start.
func newNode(t *testing.T, url, dir string, register func(*Replicator)) *node {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	db, err := store.New(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn := natstest.Connect(t, url)
	ctx := testCtx(t)
	r, err := Open(ctx, Options{JS: conn.JS, DB: db, WaitTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if register != nil {
		register(r)
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return &node{r: r, db: db}
}

// testCtx ends with the test, or at the test binary's deadline (-timeout).
func testCtx(t *testing.T) context.Context {
	deadline, ok := t.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Minute)
	}
	ctx, cancel := context.WithDeadline(t.Context(), deadline)
	t.Cleanup(cancel)
	return ctx
}
