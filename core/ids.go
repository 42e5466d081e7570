package core

import (
	"crypto/rand"
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

// uuidChunk is how many bytes of randomness a UUIDGenerator buffer holds:
// enough for 256 UUIDs per read from crypto/rand.
const uuidChunk = 16 * 256

// randBuf is a buffer of crypto/rand bytes; off is the first unused byte.
type randBuf struct {
	b   [uuidChunk]byte
	off int
}

// UUIDGenerator makes random RFC 4122 (RFC 9562) version 4 UUIDs: 36
// lowercase characters, 122 random bits from crypto/rand. Its zero value is
// ready to use; it must not be copied after first use.
//
// For speed it reads crypto/rand in chunks of 4 KiB (256 UUIDs) into buffers
// kept in a sync.Pool, so concurrent callers on different Ps neither share a
// lock nor make a system call per id. Each random byte is used once: a
// buffer is owned by one caller between Get and Put, and a buffer the pool
// drops is simply discarded.
type UUIDGenerator struct {
	pool sync.Pool // of *randBuf
}

// NewID returns a new random version 4 UUID, e.g.
// "f47ac10b-58cc-4372-a567-0e02b2c3d479".
func (g *UUIDGenerator) NewID() string {
	rb, _ := g.pool.Get().(*randBuf)
	if rb == nil {
		rb = &randBuf{off: uuidChunk}
	}
	if rb.off == uuidChunk {
		// crypto/rand.Read never fails (the runtime aborts if the OS
		// cannot supply randomness).
		_, _ = rand.Read(rb.b[:])
		rb.off = 0
	}
	var u [16]byte
	copy(u[:], rb.b[rb.off:rb.off+16])
	rb.off += 16
	g.pool.Put(rb)
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
