package core

import (
	"fmt"
	"sync/atomic"
)

// Slots is a counting semaphore with a non-blocking acquire: the
// concurrency slots a tool call takes before its handler runs (none free
// means the call is refused at once, not queued). It is lock-free (atomic
// compare-and-swap) and safe for concurrent use.
type Slots struct {
	max   int64
	inUse atomic.Int64
}

// NewSlots returns a Slots with max slots, all free. max < 1 is a
// programmer error and panics.
func NewSlots(max int) *Slots {
	if max < 1 {
		panic(fmt.Sprintf("core.NewSlots: max must be at least 1, got %d", max))
	}
	return &Slots{max: int64(max)}
}

// TryAcquire takes a slot if one is free and reports whether it did. It
// never waits.
func (s *Slots) TryAcquire() bool {
	for {
		n := s.inUse.Load()
		if n >= s.max {
			return false
		}
		if s.inUse.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release gives back a slot taken by TryAcquire. Releasing when no slot is
// held is a programmer error and panics.
func (s *Slots) Release() {
	for {
		n := s.inUse.Load()
		if n <= 0 {
			panic("core.Slots.Release: no slot is held")
		}
		if s.inUse.CompareAndSwap(n, n-1) {
			return
		}
	}
}

// InUse returns how many slots are held.
func (s *Slots) InUse() int { return int(s.inUse.Load()) }

// Max returns the number of slots.
func (s *Slots) Max() int { return int(s.max) }

// ExhaustionCounter counts consecutive tools/call rejections with
// RESOURCE_EXHAUSTED, one input of Health: a call refused for an
// oversized payload or for want of a concurrency slot raises it, any other
// completed tools/call resets it. It belongs to a server instance,
// not to the process. Its zero value is ready to use; it is safe for
// concurrent use.
type ExhaustionCounter struct {
	n atomic.Int64
}

// Inc adds one rejection and returns the new count.
func (c *ExhaustionCounter) Inc() int { return int(c.n.Add(1)) }

// Reset sets the count to zero.
func (c *ExhaustionCounter) Reset() { c.n.Store(0) }

// Value returns the current count.
func (c *ExhaustionCounter) Value() int { return int(c.n.Load()) }
