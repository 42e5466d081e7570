package mcp

import (
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// fired is what a test's deadline queue saw fall due: each call with the
// clock's time when its deadline ran.
type fired struct {
	mu    sync.Mutex
	calls []*toolCall
	at    []time.Time
}

func newTestDeadlines(clock core.Clock, f *fired) *deadlines {
	d := newDeadlines(clock)
	d.due = func(c *toolCall) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls = append(f.calls, c)
		f.at = append(f.at, clock.Now())
	}
	return d
}

// queueCall queues a call due after timeout on d.
func queueCall(d *deadlines, clock core.Clock, timeout time.Duration) *toolCall {
	c := &toolCall{}
	now := clock.Now()
	c.state.at = now.Add(timeout)
	d.add(c, now)
	return c
}

// TestDeadlinesAsOneTimerPerCall checks the deadline queue against the
// model it replaces, one timer per call, over seeded random runs: after
// every move of a ManualClock, exactly the calls whose deadline was
// reached and that were not removed have fallen due, each once, in the
// order of their deadlines (ties in arming order), each while Now read its
// own deadline; at most one timer is armed, one whenever a call is queued,
// and (when not kept armed) none when none is.
func TestDeadlinesAsOneTimerPerCall(t *testing.T) {
	for _, keepArmed := range []bool{false, true} {
		t.Run(map[bool]string{false: "stopped when empty", true: "kept armed"}[keepArmed], func(t *testing.T) {
			testDeadlinesModel(t, keepArmed)
		})
	}
}

// testDeadlinesModel is TestDeadlinesAsOneTimerPerCall with the timer kept
// armed, or not, when the queue empties (the system clock's way and the
// ManualClock's).
func testDeadlinesModel(t *testing.T, keepArmed bool) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 17))
		clock := core.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		var f fired
		d := newTestDeadlines(clock, &f)
		if d.keepArmed {
			t.Fatal("a ManualClock's queue keeps its timer armed when empty; want it stopped, so Timers counts deadlines")
		}
		d.keepArmed = keepArmed
		var live []*toolCall // queued in the model
		var want []*toolCall // what one timer per call would have fired, in order
		for step := range 200 {
			switch op := rng.IntN(10); {
			case op < 5: // a call arms its deadline
				live = append(live, queueCall(d, clock, time.Duration(rng.IntN(50))*time.Millisecond))
			case op < 7 && len(live) > 0: // a handler returns first
				i := rng.IntN(len(live))
				d.remove(live[i])
				d.remove(live[i]) // a second removal does nothing
				live = slices.Delete(live, i, i+1)
			default: // the clock moves
				now := clock.Advance(time.Duration(rng.IntN(30)) * time.Millisecond)
				var due []*toolCall
				live = slices.DeleteFunc(live, func(c *toolCall) bool {
					if c.state.at.After(now) {
						return false
					}
					due = append(due, c)
					return true
				})
				slices.SortStableFunc(due, func(a, b *toolCall) int {
					if c := a.state.at.Compare(b.state.at); c != 0 {
						return c
					}
					return int(a.state.seq) - int(b.state.seq)
				})
				want = append(want, due...)
			}
			f.mu.Lock()
			got := slices.Clone(f.calls)
			f.mu.Unlock()
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d step %d: %d calls fell due, want %d (or in another order)", seed, step, len(got), len(want))
			}
			for i, c := range got {
				if !f.at[i].Equal(c.state.at) {
					t.Fatalf("seed %d step %d: a deadline ran with Now %v, want its own %v", seed, step, f.at[i], c.state.at)
				}
			}
			if armed, queued := clock.Timers(), len(live); armed > 1 || queued > 0 && armed == 0 ||
				!keepArmed && queued == 0 && armed != 0 {
				t.Fatalf("seed %d step %d: %d timers armed with %d calls queued; want 1 while any is queued, else 0",
					seed, step, armed, queued)
			}
		}
	}
}

// TestDeadlinesRace runs calls that arm and leave the queue on the system
// clock, from many goroutines, while their short deadlines fall due: each
// call either left in time or fell due, never both, never twice (-race
// checks the queue's state and each call's place in it).
func TestDeadlinesRace(t *testing.T) {
	const workers, calls = 8, 200
	dueCh := make(chan *toolCall, workers*calls)
	d := newDeadlines(core.SystemClock{})
	d.due = func(c *toolCall) { dueCh <- c }
	var removed atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range calls {
				c := queueCall(d, core.SystemClock{}, time.Duration(i%3)*time.Millisecond)
				if i%2 == 0 && d.remove(c) {
					removed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	// Every call not removed falls due: wait for each, bounded.
	seen := map[*toolCall]bool{}
	limit := time.After(60 * time.Second) // ends only a hung test
	for range workers*calls - int(removed.Load()) {
		select {
		case c := <-dueCh:
			if seen[c] {
				t.Fatal("a call fell due twice")
			}
			if c.state.index != 0 {
				t.Fatal("a call fell due while still queued")
			}
			seen[c] = true
		case <-limit:
			t.Fatalf("%d calls fell due and %d were removed in time; want %d in all", len(seen), removed.Load(), workers*calls)
		}
	}
	select {
	case <-dueCh:
		t.Fatal("a removed call fell due")
	default:
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.heap) != 0 {
		t.Fatalf("%d calls still queued; want none", len(d.heap))
	}
}

// On the real clock, calls that fall due together do not wait for one
// another: a deadline blocked (its TIMEOUT answer stuck on a client's
// stalled stream) holds no other call's.
func TestDeadlinesBlockedDueHoldsNoOther(t *testing.T) {
	d := newDeadlines(core.SystemClock{})
	release := make(chan struct{})
	defer close(release)
	dueCh := make(chan *toolCall, 2)
	first, second := &toolCall{}, &toolCall{}
	d.due = func(c *toolCall) {
		if c == first {
			<-release
		}
		dueCh <- c
	}
	now := time.Now()
	at := now.Add(time.Millisecond)
	first.state.at, second.state.at = at, at
	d.add(first, now)
	d.add(second, now)
	select {
	case c := <-dueCh:
		if c != second {
			t.Fatal("the blocked call's deadline returned")
		}
	case <-time.After(60 * time.Second): // ends only a hung test
		t.Fatal("the second call's deadline waited for the first, blocked one")
	}
}
