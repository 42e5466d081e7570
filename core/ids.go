package core

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// IDGenerator makes identifiers: connection correlation ids, request
// correlation ids and run ids (SPEC §5). Implementations must be safe for
// concurrent use.
type IDGenerator interface {
	// NewID returns a new identifier.
	NewID() string
}

// UUIDGenerator makes random RFC 4122 (RFC 9562) version 4 UUIDs: 36
// lowercase characters, 122 random bits. Its zero value is ready to use and
// it is safe for concurrent use.
//
// The bits come from math/rand/v2's top-level generator: the runtime's
// per-thread ChaCha8 stream, seeded from the operating system's entropy.
// Identifiers must be unique and hard to guess, not secret; this gives both
// without a lock or a system call per id.
type UUIDGenerator struct{}

// NewID returns a new random version 4 UUID, e.g.
// "f47ac10b-58cc-4372-a567-0e02b2c3d479".
func (g *UUIDGenerator) NewID() string {
	var u [16]byte
	binary.LittleEndian.PutUint64(u[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(u[8:], rand.Uint64())
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // variant 10xx
	return formatUUID(&u)
}

// formatUUID writes u in the 8-4-4-4-12 lowercase hex form.
func formatUUID(u *[16]byte) string {
	const hexDigits = "0123456789abcdef"
	var out [36]byte
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j] = hexDigits[c>>4]
		out[j+1] = hexDigits[c&0xf]
		j += 2
	}
	return string(out[:])
}

// SequenceGenerator makes deterministic UUID-shaped ids for tests:
// "00000000-0000-4000-8000-000000000001", then ...002, and so on (the last
// group is the sequence number in lowercase hex). Its zero value is ready to
// use and it is safe for concurrent use.
type SequenceGenerator struct {
	n atomic.Uint64
}

// NewID returns the next id of the sequence.
func (g *SequenceGenerator) NewID() string {
	n := g.n.Add(1)
	var u [16]byte
	u[6] = 0x40
	u[8] = 0x80
	for i := 15; i >= 10; i-- {
		u[i] = byte(n)
		n >>= 8
	}
	return formatUUID(&u)
}

// Clock tells the time (SPEC §5: time comes from an injectable clock).
type Clock interface {
	// Now returns the current time.
	Now() time.Time
}

// SystemClock is the real clock: Now is time.Now.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// ManualClock is a Clock for tests: it stands still until Set or Advance
// moves it. It is safe for concurrent use; its zero value reads the zero
// time.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
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

// Set moves the clock to t.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// Advance moves the clock forward by d (backward when d is negative) and
// returns the new time.
func (c *ManualClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}
