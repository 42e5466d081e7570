package core

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestTimeCacheMatchesAppendFormat: for times drawn from a seeded
// generator — runs of records within one second, whole seconds (no
// fraction), fractions with trailing zeros, zones east and west of UTC and
// with odd offsets, years outside 0000–9999 — appendTime writes exactly
// what t.Round(0).AppendFormat(RFC3339Nano) writes, whatever the cache
// held before.
func TestTimeCacheMatchesAppendFormat(t *testing.T) {
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("E", 5*3600+30*60),
		time.FixedZone("W", -8*3600), time.FixedZone("S", 3600+17), time.FixedZone("Z0", 0)}
	if ny, err := time.LoadLocation("America/New_York"); err == nil {
		zones = append(zones, ny)
	}
	r := rand.New(rand.NewPCG(17, 4))
	var c timeCache
	base := time.Date(2026, 3, 8, 6, 59, 58, 0, time.UTC) // near a DST change in New York
	for i := range 20000 {
		var at time.Time
		switch r.IntN(6) {
		case 0: // same second as before, another fraction
			at = base.Add(time.Duration(r.Int64N(int64(time.Second))))
		case 1: // a whole second
			at = base.Add(time.Duration(r.Int64N(10)) * time.Second)
		case 2: // a fraction with trailing zeros
			at = base.Add(time.Duration(r.Int64N(1000)) * time.Millisecond)
		case 3: // anywhere in 1970–2100
			at = time.Unix(r.Int64N(4102444800), r.Int64N(1e9))
		case 4: // years the cache does not split
			at = time.Date([]int{-1, 0, 9999, 10000, 12345}[r.IntN(5)], 12, 31, 23, 59, 59, r.IntN(1e9), time.UTC)
		default: // a monotonic reading, as time.Now has
			at = time.Now().Add(time.Duration(r.Int64N(int64(time.Hour))))
		}
		at = at.In(zones[r.IntN(len(zones))])
		if r.IntN(4) == 0 {
			base = at.Truncate(time.Second)
		}
		got := string(c.appendTime([]byte("x"), at))
		want := "x" + string(at.Round(0).AppendFormat(nil, time.RFC3339Nano))
		if got != want {
			t.Fatalf("case %d: appendTime(%v) = %q, want %q", i, at, got, want)
		}
	}
}
