package sharedstate

import (
	"testing"

	"github.com/mcprt/mcprt/domain/memory"
	"github.com/mcprt/mcprt/natsengine/natstest"
)

// TestMemoryImportShared: an import is one event applied in one
// transaction on every node, with the writer's counts; search is local
// and finds what another node imported.
func TestMemoryImportShared(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	var ma, mb *Memory
	a := newNode(t, srv.ClientURL(), "", func(r *Replicator) { ma = NewMemory(r, r.db.Memory()) })
	b := newNode(t, srv.ClientURL(), "", func(r *Replicator) { mb = NewMemory(r, r.db.Memory()) })
	ctx := testCtx(t)
	if _, err := mb.Put(ctx, memory.Entry{Namespace: "n", Key: "k1", Value: []byte(`"old"`), StoredAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := a.r.WaitApplied(ctx, b.r.Applied()); err != nil {
		t.Fatal(err)
	}
	entries := []memory.Entry{
		{Namespace: "n", Key: "k1", Value: []byte(`"new"`), StoredAt: t0},
		{Namespace: "n", Key: "k2", Value: []byte(`{"text":"zebra crossing"}`), StoredAt: t0},
	}
	for _, tc := range []struct {
		skip bool
		want memory.ImportCounts
		k1   string
	}{
		{true, memory.ImportCounts{Created: 1, Skipped: 1}, `"old"`},
		{false, memory.ImportCounts{Replaced: 2}, `"new"`},
	} {
		c, err := ma.PutAll(ctx, entries, tc.skip)
		if err != nil || c != tc.want {
			t.Fatalf("PutAll(skip=%v) = %+v, %v; want %+v", tc.skip, c, err, tc.want)
		}
		if err := b.r.WaitApplied(ctx, a.r.Applied()); err != nil {
			t.Fatal(err)
		}
		for name, m := range map[string]*Memory{"a": ma, "b": mb} {
			if e, _, err := m.Get(ctx, "n", "k1"); err != nil || string(e.Value) != tc.k1 {
				t.Fatalf("skip=%v: %s reads k1 = %s (%v), want %s", tc.skip, name, e.Value, err, tc.k1)
			}
		}
	}
	hits, err := mb.Search(ctx, memory.SearchQuery{Query: "zebra", FullText: true, Limit: 10})
	if err != nil || len(hits) != 1 || hits[0].Key != "k2" {
		t.Fatalf("b's full-text search: %v %v, want k2", hits, err)
	}
}
