package mcp

import (
	"math/rand/v2"
)

// propRand is the property tests' random source: a math/rand/v2 PCG
// generator from a fixed seed, so every run generates the same cases.
type propRand struct{ *rand.Rand }

// newPropRand returns a generator seeded with seed.
func newPropRand(seed int64) *propRand {
	return &propRand{rand.New(rand.NewPCG(uint64(seed), uint64(seed)^0x9e3779b97f4a7c15))}
}

// Intn returns a number in [0, n).
func (r *propRand) Intn(n int) int { return r.IntN(n) }

// RandBool returns true or false with equal chance.
func (r *propRand) RandBool() bool { return r.IntN(2) == 0 }

// propRanges are the code point ranges RandString draws from: ASCII,
// Latin-1, Greek, CJK and a plane-1 range (so strings need surrogate
// pairs once escaped as JSON).
var propRanges = [][2]rune{{' ', '~'}, {0xa0, 0xff}, {0x391, 0x3c9}, {0x4e00, 0x4fff}, {0x1f600, 0x1f64f}}

// RandString returns a valid UTF-8 string of 0 to 19 code points.
func (r *propRand) RandString() string {
	n := r.IntN(20)
	rs := make([]rune, n)
	for i := range rs {
		g := propRanges[r.IntN(len(propRanges))]
		rs[i] = g[0] + rune(r.IntN(int(g[1]-g[0]+1)))
	}
	return string(rs)
}
