package mcp

import (
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
// once run one after another on the timer's goroutine, earliest first;
// under a core.ManualClock, a move runs them before it returns, each with
// Now reading its own deadline (the timer is re-armed for the next one).
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
	due       func(*toolCall) // runs a call's deadline: (*toolCall).deadline

	mu    sync.Mutex
	heap  []*toolCall // by (state.at, state.seq); each call's state.index is its position + 1
	seq   uint64      // arming order, the tie-breaker
	timer core.Timer  // armed for armed; nil when none
	armed time.Time
	gen   uint64 // the armed timer's generation: a stale callback does nothing
}

// newDeadlines returns an empty deadline queue on clock.
func newDeadlines(clock core.Clock) *deadlines {
	_, counts := clock.(interface{ Timers() int })
	return &deadlines{clock: clock, keepArmed: !counts, due: (*toolCall).deadline}
}

// add queues c, whose state.at is its deadline; now is the clock's time
// when that deadline was computed.
func (d *deadlines) add(c *toolCall, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c.state.seq = d.seq
	d.seq++
	d.heap = append(d.heap, c)
	c.state.index = len(d.heap)
	d.up(len(d.heap) - 1)
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
	d.removeAt(i)
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
		due = append(due, d.heap[0])
		d.removeAt(0)
	}
	if len(d.heap) > 0 {
		d.arm(d.heap[0].state.at, now)
	}
	d.mu.Unlock()
	for _, c := range due {
		d.due(c)
	}
}

// less orders the heap: earlier deadline first, then arming order.
func (d *deadlines) less(i, j int) bool {
	a, b := &d.heap[i].state, &d.heap[j].state
	if a.at.Equal(b.at) {
		return a.seq < b.seq
	}
	return a.at.Before(b.at)
}

func (d *deadlines) swap(i, j int) {
	d.heap[i], d.heap[j] = d.heap[j], d.heap[i]
	d.heap[i].state.index = i + 1
	d.heap[j].state.index = j + 1
}

func (d *deadlines) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !d.less(i, p) {
			return
		}
		d.swap(i, p)
		i = p
	}
}

func (d *deadlines) down(i int) {
	n := len(d.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && d.less(r, l) {
			m = r
		}
		if !d.less(m, i) {
			return
		}
		d.swap(i, m)
		i = m
	}
}

// removeAt takes the call at position i out of the heap.
func (d *deadlines) removeAt(i int) {
	last := len(d.heap) - 1
	c := d.heap[i]
	if i != last {
		d.swap(i, last)
	}
	d.heap[last] = nil
	d.heap = d.heap[:last]
	c.state.index = 0
	if i != last {
		d.down(i)
		d.up(i)
	}
}
