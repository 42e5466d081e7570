package sharedstate

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/domain/memory"
	"github.com/mcprt/mcprt/natsengine/natstest"
	"github.com/mcprt/mcprt/store"
)

// TestClusterNodeLossAndReturn: on a three-node cluster with R3, the
// shared state keeps working with one node down; the mcprt node whose
// server was down reads its local copy meanwhile and catches up when the
// server returns.
func TestClusterNodeLossAndReturn(t *testing.T) {
	t.Parallel()
	c := natstest.StartCluster(t)
	ctx := testCtx(t)
	var counts [3]atomic.Int64
	nodes := make([]*node, 3)
	for i := range nodes {
		db, err := store.New(store.Options{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		// Each mcprt node talks to its own server only.
		conn := natstest.Connect(t, "nats://"+c.Nodes[i].Listen)
		r, err := Open(ctx, Options{JS: conn.JS, DB: db, Replicas: 3, WaitTimeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		counting(&counts[i])(r)
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		nodes[i] = &node{r: r, db: db}
	}
	put := func(n *node, key string) {
		t.Helper()
		if err := n.r.Do(ctx, "test", "test.count", key, nil); err != nil {
			t.Fatalf("write %s: %v", key, err)
		}
	}
	put(nodes[0], "before")
	c.Stop(2)
	for i := range 5 {
		put(nodes[i%2], fmt.Sprint("during", i))
	}
	// The node without its server still reads what it had.
	if _, found, err := nodes[2].db.Memory().Get(ctx, "t", "before"); err != nil || !found {
		t.Fatalf("node 2's local read while its server is down: found %v err %v", found, err)
	}
	c.Restart(2)
	if err := nodes[2].r.WaitApplied(ctx, nodes[0].r.Applied()); err != nil {
		t.Fatal(err)
	}
	page, err := nodes[2].db.Memory().List(ctx, memory.ListQuery{Namespace: "t", Limit: 100})
	if err != nil || page.Total != 6 {
		t.Fatalf("node 2 after catching up: %d entries (%v), want 6", page.Total, err)
	}
	put(nodes[2], "after")
	if counts[2].Load() != 7 {
		t.Fatalf("node 2 applied %d events, want 7", counts[2].Load())
	}
}
