package core

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
)

// IDGenerator makes identifiers: connection correlation ids, request
// correlation ids and run ids. Implementations must be safe for
// concurrent use.
type IDGenerator interface {
	// NewID returns a new identifier.
	NewID() string
}

// UUIDGenerator makes random RFC 4122 (RFC 9562) version 4 UUIDs: 36
// lowercase characters, 122 random bits. Its zero value is ready to use and
// it is safe for concurrent use; do not copy one after first use.
//
// The bits come from math/rand/v2's top-level generator: the runtime's
// per-thread ChaCha8 stream, seeded from the operating system's entropy.
// Identifiers must be unique and hard to guess, not secret; this gives both
// without a system call per id. The ids are made uuidBlock at a time into
// one string, and handed out as its substrings: one allocation for
// several ids (a call takes two).
type UUIDGenerator struct {
	mu    sync.Mutex
	ahead string // ids made and not yet handed out, 36 bytes each; guarded by mu
}

// uuidBlock is how many ids UUIDGenerator makes at a time.
const uuidBlock = 8

// NewID returns a new random version 4 UUID, e.g.
// "f47ac10b-58cc-4372-a567-0e02b2c3d479".
func (g *UUIDGenerator) NewID() string {
	g.mu.Lock()
	if g.ahead == "" {
		g.ahead = randomUUIDs(uuidBlock)
	}
	id := g.ahead[:36]
	g.ahead = g.ahead[36:]
	g.mu.Unlock()
	return id
}

// randomUUIDs returns n random version 4 UUIDs, one after another.
func randomUUIDs(n int) string {
	var b strings.Builder
	b.Grow(36 * n)
	for range n {
		var u [16]byte
		binary.LittleEndian.PutUint64(u[:8], rand.Uint64())
		binary.LittleEndian.PutUint64(u[8:], rand.Uint64())
		u[6] = u[6]&0x0f | 0x40 // version 4
		u[8] = u[8]&0x3f | 0x80 // variant 10xx
		var out [36]byte
		appendUUID(&out, &u)
		b.Write(out[:])
	}
	return b.String()
}

// formatUUID returns u in the 8-4-4-4-12 lowercase hex form.
func formatUUID(u *[16]byte) string {
	var out [36]byte
	appendUUID(&out, u)
	return string(out[:])
}

// appendUUID writes u in the 8-4-4-4-12 lowercase hex form into out.
func appendUUID(out *[36]byte, u *[16]byte) {
	const hexDigits = "0123456789abcdef"
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
