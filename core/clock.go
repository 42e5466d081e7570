package core

import (
	"container/heap"
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Clock tells the time and runs deadlines. Every component that reads the
// time or arms a deadline takes a Clock, so that tests can drive time by
// hand (ManualClock) instead of sleeping. Implementations must be safe for
// concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc arms a timer that calls f once, d after now (at once when
	// d <= 0, but never from inside AfterFunc itself), unless it is
	// stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a deadline armed by Clock.AfterFunc.
type Timer interface {
	// Stop prevents the callback from running. It returns true when it did
	// so, false when the callback has already been started or the timer
	// was already stopped. Stop does not wait for a running callback.
	Stop() bool
}

// SystemClock is the real clock: Now is time.Now and AfterFunc is
// time.AfterFunc (the callback runs on its own goroutine).
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc returns time.AfterFunc(d, f); a *time.Timer is a Timer.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer {
	return time.AfterFunc(d, f)
}

// ManualClock is a Clock for tests: it stands still until Set or Advance
// moves it, and those run the callbacks of the timers that fall due,
// earliest deadline first (ties in the order the timers were armed), on
// the calling goroutine, before they return. While a callback runs, Now
// reads that timer's deadline, so a callback that re-arms itself fires
// once per period covered by the move.
//
// A ManualClock is safe for concurrent use; its zero value reads the zero
// time. Moves (Set, Advance) are serialized: one waits for another to
// finish its callbacks. A callback must therefore not call Set or Advance
// on its own clock (it would wait for itself); it may call Now, AfterFunc
// and Stop freely.
type ManualClock struct {
	move sync.Mutex // serializes Set and Advance

	mu      sync.Mutex
	now     time.Time     // guarded by mu
	timers  timerHeap     // armed timers, earliest first; guarded by mu
	seq     uint64        // arming order, the tie-breaker; guarded by mu
	changed chan struct{} // closed and replaced when a timer is armed; guarded by mu
}

// NewManualClock returns a ManualClock reading t.
func NewManualClock(t time.Time) *ManualClock {
	return &ManualClock{now: t}
}

// Now returns the clock's current time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arms a timer that calls f when a move of the clock reaches
// Now()+d. A timer with d <= 0 fires on the next Set or Advance (Advance(0)
// suffices), never inside AfterFunc.
func (c *ManualClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{clock: c, when: c.now.Add(d), seq: c.seq, f: f}
	c.seq++
	heap.Push(&c.timers, t)
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
	return t
}

// Timers returns the number of timers armed and not yet fired or stopped.
func (c *ManualClock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// WaitForTimers blocks until at least n timers are armed (see Timers), or
// until ctx is done, and returns ctx.Err() in that case. A test calls it
// to know that the code under test has armed its deadline before the test
// moves the clock.
func (c *ManualClock) WaitForTimers(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		if len(c.timers) >= n {
			c.mu.Unlock()
			return nil
		}
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Set moves the clock to t, forward or backward, running the callbacks of
// every timer whose deadline is at or before t.
func (c *ManualClock) Set(t time.Time) {
	c.move.Lock()
	defer c.move.Unlock()
	c.runUntil(t)
}

// Advance moves the clock by d (backward when d is negative), runs the
// callbacks that fall due as Set does, and returns the new time.
func (c *ManualClock) Advance(d time.Duration) time.Time {
	c.move.Lock()
	defer c.move.Unlock()
	c.mu.Lock()
	target := c.now.Add(d)
	c.mu.Unlock()
	c.runUntil(target)
	return target
}

// runUntil fires the timers due at target in deadline order, then sets the
// clock to target. The caller holds c.move.
func (c *ManualClock) runUntil(target time.Time) {
	c.mu.Lock()
	for len(c.timers) > 0 && !c.timers[0].when.After(target) {
		t := heap.Pop(&c.timers).(*manualTimer)
		if t.when.After(c.now) {
			c.now = t.when
		}
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	c.now = target
	c.mu.Unlock()
}

// manualTimer is a timer of a ManualClock.
type manualTimer struct {
	clock *ManualClock
	when  time.Time
	seq   uint64
	f     func()
	index int // position in clock.timers, -1 once fired or stopped; guarded by clock.mu
}

// Stop removes the timer if it has neither fired nor been stopped.
func (t *manualTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&c.timers, t.index)
	return true
}

// timerHeap orders timers by deadline, then by arming order.
type timerHeap []*manualTimer

func (h timerHeap) Len() int { return len(h) }

func (h timerHeap) Less(i, j int) bool {
	if !h[i].when.Equal(h[j].when) {
		return h[i].when.Before(h[j].when)
	}
	return h[i].seq < h[j].seq
}

func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *timerHeap) Push(x any) {
	t := x.(*manualTimer)
	t.index = len(*h)
	*h = append(*h, t)
}

func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}

// OffsetClock is a Clock that reads another clock (the system clock when
// Base is nil) shifted by an offset that Advance moves forward. The
// binary uses it in mode TEST so that black-box tests can make hours pass
// (TTL expiry, stale agents, ack timeouts) without waiting: timers keep
// running on real durations, and whatever compares stored times with Now
// sees the shifted time. Safe for concurrent use.
type OffsetClock struct {
	Base   Clock
	offset atomic.Int64 // nanoseconds
}

// Now returns the base clock's time plus the offset.
func (c *OffsetClock) Now() time.Time {
	return c.base().Now().Add(time.Duration(c.offset.Load()))
}

// AfterFunc arms a timer on the base clock.
func (c *OffsetClock) AfterFunc(d time.Duration, f func()) Timer {
	return c.base().AfterFunc(d, f)
}

// Advance moves the clock forward by d (d <= 0 leaves it) and returns the
// new time.
func (c *OffsetClock) Advance(d time.Duration) time.Time {
	if d > 0 {
		c.offset.Add(int64(d))
	}
	return c.Now()
}

func (c *OffsetClock) base() Clock {
	if c.Base == nil {
		return SystemClock{}
	}
	return c.Base
}
