package mcp

import (
	"container/heap"
	"sync"
	"time"

	"github.com/mcprt/mcprt/core"
)

// deadlines runs the deadlines of a server's tools/calls: a min-heap of
// the running calls by deadline (ties in the order they were armed) and
// one clock timer armed for the earliest. A call costs a heap push and a
// removal under one mutex, not a timer and a callback of its own.
//
// The timeouts are those of one timer per call: when the clock reaches a
// call's deadline, its deadline method runs (TIMEOUT, the timeout record)
// unless the call left the heap first (its handler returned, or the call
// became a task with no deadline of its own). The calls that fall due at
// once run earliest first: on the real clock each but the last on a
// goroutine of its own (a TIMEOUT answer blocked on one client's stalled
// stream must not hold another client's), on a clock that counts its
// timers one after another on the timer's goroutine, so that a
// core.ManualClock move runs them before it returns, each with Now
// reading its own deadline (the timer is re-armed for the next one).
//
// The timer is armed lazily: removing the earliest call leaves it armed
// for the old time (it then finds nothing due and re-arms for the new
// earliest, or stays unarmed when none is queued), so calls one after
// another arm it about once per timeout, not once per call. On a clock
// that counts its timers (core.ManualClock's Timers, which tests wait
// on), the timer is stopped as soon as no call is queued, so that a timer
// is armed exactly while a call's deadline is.
type deadlines struct {
	clock     core.Clock
	keepArmed bool            // leave the timer armed when the queue empties
	apart     bool            // run calls that fall due together on goroutines of their own
	due       func(*toolCall) // runs a call's deadline: (*toolCall).deadline

	mu    sync.Mutex
	heap  callHeap   // by (state.at, state.seq)
	seq   uint64     // arming order, the tie-breaker
	timer core.Timer // armed for armed; nil when none
	armed time.Time
	gen   uint64 // the armed timer's generation: a stale callback does nothing
}

// newDeadlines returns an empty deadline queue on clock.
func newDeadlines(clock core.Clock) *deadlines {
	_, counts := clock.(interface{ Timers() int })
	return &deadlines{clock: clock, keepArmed: !counts, apart: !counts, due: (*toolCall).deadline}
}

// add queues c, whose state.at is its deadline; now is the clock's time
// when that deadline was computed.
func (d *deadlines) add(c *toolCall, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c.state.seq = d.seq
	d.seq++
	heap.Push(&d.heap, c)
	if d.timer == nil || c.state.at.Before(d.armed) {
		d.arm(c.state.at, now)
	}
}

// remove takes c out of the queue, if it is still there: its deadline will
// not run. It reports whether c was queued.
func (d *deadlines) remove(c *toolCall) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := c.state.index - 1
	if i < 0 {
		return false
	}
	heap.Remove(&d.heap, i)
	if len(d.heap) == 0 && d.timer != nil && !d.keepArmed {
		d.timer.Stop()
		d.timer = nil
		d.gen++
	}
	return true
}

// arm (re)arms the timer for at; d.mu is held.
func (d *deadlines) arm(at, now time.Time) {
	if d.timer != nil {
		d.timer.Stop()
	}
	d.gen++
	gen := d.gen
	d.armed = at
	d.timer = d.clock.AfterFunc(at.Sub(now), func() { d.fire(gen) })
}

// fire runs on the timer: it takes every call whose deadline passed out
// of the queue, re-arms the timer for the next one, and runs the due
// calls' deadlines, earliest first.
func (d *deadlines) fire(gen uint64) {
	d.mu.Lock()
	if gen != d.gen { // stopped or re-armed meanwhile
		d.mu.Unlock()
		return
	}
	d.timer = nil
	now := d.clock.Now()
	var due []*toolCall
	for len(d.heap) > 0 && !d.heap[0].state.at.After(now) {
		due = append(due, heap.Pop(&d.heap).(*toolCall))
	}
	if len(d.heap) > 0 {
		d.arm(d.heap[0].state.at, now)
	}
	d.mu.Unlock()
	for i, c := range due {
		if d.apart && i < len(due)-1 {
			go d.due(c)
			continue
		}
		d.due(c)
	}
}

// callHeap is container/heap's view of the queue: earlier deadline
// first, then arming order; each call's state.index is its position + 1
// (0: not queued).
type callHeap []*toolCall

func (h callHeap) Len() int { return len(h) }

func (h callHeap) Less(i, j int) bool {
	a, b := &h[i].state, &h[j].state
	if a.at.Equal(b.at) {
		return a.seq < b.seq
	}
	return a.at.Before(b.at)
}

func (h callHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].state.index = i + 1
	h[j].state.index = j + 1
}

func (h *callHeap) Push(x any) {
	c := x.(*toolCall)
	*h = append(*h, c)
	c.state.index = len(*h)
}

func (h *callHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	c.state.index = 0
	return c
}
