package trace

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// batchStore records the size of every Append besides its events.
type batchStore struct {
	memStore
	sizes []int
}

func (b *batchStore) Append(ctx context.Context, evs []Event) error {
	b.mu.Lock()
	b.sizes = append(b.sizes, len(evs))
	b.mu.Unlock()
	return b.memStore.Append(ctx, evs)
}

// TestRecorderWritesEveryEventOnceInOrder: events recorded by several
// goroutines at once, with and without lingering, with small and large
// batches, are each written exactly once, each goroutine's in the order it
// recorded them, in batches of at most BatchSize; Flush returns only once
// everything recorded before it is stored.
func TestRecorderWritesEveryEventOnceInOrder(t *testing.T) {
	for _, tc := range []struct {
		name             string
		batch, queue     int
		linger           time.Duration
		writers, perEach int
	}{
		{name: "at once, small batches", batch: 3, queue: 1 << 12, writers: 4, perEach: 500},
		{name: "lingering, small batches", batch: 7, queue: 1 << 12, linger: time.Millisecond, writers: 4, perEach: 500},
		{name: "lingering, batch larger than the load", batch: 1 << 12, queue: 1 << 12, linger: time.Millisecond, writers: 3, perEach: 300},
		{name: "one writer", batch: 16, queue: 1 << 12, writers: 1, perEach: 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &batchStore{}
			r := NewRecorder(RecorderOptions{Store: st, BatchSize: tc.batch, QueueSize: tc.queue, Linger: tc.linger})
			var wg sync.WaitGroup
			for w := range tc.writers {
				wg.Go(func() {
					for i := range tc.perEach {
						for !r.Record(Event{RunID: fmt.Sprintf("%d/%d", w, i), TraceID: fmt.Sprint(w)}, nil) {
							// The queue is full: wait for the writer, as the
							// test must not lose events.
							if err := r.Flush(ctx(t)); err != nil {
								t.Error(err)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			if err := r.Flush(ctx(t)); err != nil {
				t.Fatal(err)
			}
			acc, _, failed := r.Counts()
			if n := st.len(); n != int(acc) || failed != 0 || n != tc.writers*tc.perEach {
				t.Fatalf("stored %d events, accepted %d, failed %d, recorded %d", n, acc, failed, tc.writers*tc.perEach)
			}
			next := make([]int, tc.writers)
			st.mu.Lock()
			for _, e := range st.events {
				var w, i int
				if _, err := fmt.Sscanf(e.RunID, "%d/%d", &w, &i); err != nil || i != next[w] {
					st.mu.Unlock()
					t.Fatalf("event %q out of order or repeated: want %d/%d", e.RunID, w, next[w])
				}
				next[w]++
			}
			for _, n := range st.sizes {
				if n < 1 || n > tc.batch {
					st.mu.Unlock()
					t.Fatalf("a batch of %d events, want 1..%d", n, tc.batch)
				}
			}
			st.mu.Unlock()
			if err := r.Close(ctx(t)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRecorderLingeringWritesWholeBatches: while lingering, a writer woken
// by a whole batch writes whole batches only; events that came while it
// woke wait for the next batch instead of costing a transaction of their
// own. Five batches' worth of events, recorded by several goroutines, are
// written as five batches of exactly BatchSize.
func TestRecorderLingeringWritesWholeBatches(t *testing.T) {
	const batch, batches = 64, 5
	st := &batchStore{}
	r := NewRecorder(RecorderOptions{Store: st, BatchSize: batch, QueueSize: 1 << 12, Linger: time.Minute})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range batch * batches / 4 {
				r.Record(Event{RunID: fmt.Sprintf("%d/%d", w, i)}, nil)
			}
		})
	}
	wg.Wait()
	if err := r.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	sizes := append([]int(nil), st.sizes...)
	st.mu.Unlock()
	if len(sizes) != batches {
		t.Fatalf("batches of %v events, want %d of %d", sizes, batches, batch)
	}
	for _, n := range sizes {
		if n != batch {
			t.Fatalf("batches of %v events, want %d of %d", sizes, batches, batch)
		}
	}
	if err := r.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
}
