package core

import (
	"encoding/binary"
	"math/rand/v2"
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
