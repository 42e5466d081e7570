package natsjournal_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/natsjournal"
	"github.com/mcprt/mcprt/natsengine/natstest"
)

// Concurrent appends to one channel from two stores (two processes, each
// group-committing its appends in atomic batches, whose compare-and-swap
// makes them take turns), with repeats of stored transmissions mixed in
// (a batch holding a repeat is refused and written one at a time): seqs
// stay dense, every transmission is stored once, and a repeat returns
// the seq it was stored with.
func TestConcurrentBatchesFromTwoStoresWithRepeats(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stores []*natsjournal.Store
	for range 2 {
		conn := natstest.Connect(t, srv.ClientURL())
		s, err := natsjournal.Open(ctx, natsjournal.Options{JS: conn.JS})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	const goroutines, each = 8, 25
	var mu sync.Mutex
	seqOf := map[string]uint64{}
	var wg sync.WaitGroup
	for g := range goroutines {
		s := stores[g%2]
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("g%d-%d", g, i)
				seq, err := s.Append(ctx, env("a", "b", id))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seqOf[id] = seq
				mu.Unlock()
				if i%5 == 4 { // a repeat of an earlier transmission of this goroutine
					old := fmt.Sprintf("g%d-%d", g, i-2)
					again, err := s.Append(ctx, env("a", "b", old))
					mu.Lock()
					want := seqOf[old]
					mu.Unlock()
					if err != nil || again != want {
						t.Errorf("repeat of %s: seq %d, %v; want %d", old, again, err, want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	in, err := stores[0].Inbox("b")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	got := readAll(t, in)
	if len(got) != goroutines*each {
		t.Fatalf("the channel holds %d transmissions, want %d (each once)", len(got), goroutines*each)
	}
	seen := map[string]bool{}
	for i, e := range got {
		if e.Seq != uint64(i+1) || seen[e.MessageID] || seqOf[e.MessageID] != e.Seq {
			t.Fatalf("transmission %d: %s seq %d (Append returned %d): a gap, a repeat stored twice, or a wrong seq", i, e.MessageID, e.Seq, seqOf[e.MessageID])
		}
		seen[e.MessageID] = true
	}
}
