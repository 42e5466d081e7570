package store

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/domain/trace"
)

// TestTraceIndexKeepsOrderAndLimit writes batches whose time spans
// overlap (as several processes' batches do) and checks that the indexed
// reads return the first events by start, ties in storage order, with
// the right "more", also after pruning rewrote some batches.
func TestTraceIndexKeepsOrderAndLimit(t *testing.T) {
	t.Parallel()
	db, _ := newDB(t)
	ctx := testCtx(t)
	tr := db.Traces()
	var all []trace.Event
	for b := range 12 {
		var batch []trace.Event
		for i := range 20 {
			// Batches interleave in time; every third event shares a start.
			at := t0.Add(time.Duration((b%4)*7+i/3*5) * time.Millisecond)
			e := trace.Event{RunID: fmt.Sprintf("r%d-%d", b, i), TraceID: fmt.Sprintf("t%d", i%5), Tool: "noop", Start: at,
				SessionID: fmt.Sprintf("s%d", (b+i)%3), Success: true}
			batch = append(batch, e)
		}
		if err := tr.Append(ctx, batch); err != nil {
			t.Fatal(err)
		}
		all = append(all, batch...)
	}
	check := func(what string, keep func(trace.Event) bool, get func(limit int) ([]trace.Event, bool, error)) {
		t.Helper()
		var want []trace.Event
		for _, e := range all {
			if keep(e) {
				want = append(want, e)
			}
		}
		slices.SortStableFunc(want, func(x, y trace.Event) int { return x.Start.Compare(y.Start) })
		for _, limit := range []int{1, 7, 30, len(want) - 1, len(want), len(want) + 5} {
			got, more, err := get(limit)
			if err != nil {
				t.Fatal(err)
			}
			n := min(limit, len(want))
			if more != (len(want) > limit) || len(got) != n {
				t.Fatalf("%s limit %d: %d events, more %v; want %d of %d", what, limit, len(got), more, n, len(want))
			}
			for i := range got {
				if got[i].RunID != want[i].RunID {
					t.Fatalf("%s limit %d: event %d is %s, want %s", what, limit, i, got[i].RunID, want[i].RunID)
				}
			}
		}
	}
	run := func() {
		t.Helper()
		check("trace t3", func(e trace.Event) bool { return e.TraceID == "t3" },
			func(limit int) ([]trace.Event, bool, error) { return tr.Events(ctx, "t3", limit) })
		check("session s1", func(e trace.Event) bool { return e.SessionID == "s1" },
			func(limit int) ([]trace.Event, bool, error) { return tr.BySession(ctx, "s1", limit) })
	}
	run()
	if evs, _, err := tr.Events(ctx, "nope", 10); err != nil || len(evs) != 0 {
		t.Fatalf("an unknown trace: %v, %v", evs, err)
	}
	// Keeping the newest 150 rewrites some batches and deletes others.
	if _, err := tr.Prune(ctx, t0.Add(-time.Hour), 150); err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(all, func(x, y trace.Event) int { return x.Start.Compare(y.Start) })
	all = all[len(all)-150:]
	run()
	h, _ := db.handle(ctx)
	var blooms, batches int
	if err := h.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM trace_blooms), (SELECT COUNT(*) FROM trace_batches)`).Scan(&blooms, &batches); err != nil {
		t.Fatal(err)
	}
	if blooms != batches {
		t.Fatalf("%d filters for %d batches", blooms, batches)
	}
}

// TestTraceKeyHashIsFNV1a: the filter hash stays hash/fnv's 64-bit FNV-1a
// of the kind byte and the id — the filters already stored depend on it —
// for ids drawn from a seeded generator and odd ones.
func TestTraceKeyHashIsFNV1a(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	ids := []string{"", "t", "9b2f7c1e-8a4d-4e5f-9c3b-1d2e3f4a5b6c", "a\nb", "é\x00\xff"}
	for range 2000 {
		b := make([]byte, r.IntN(80))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		ids = append(ids, string(b))
	}
	for _, id := range ids {
		for _, kind := range []byte{keyTrace, keySession} {
			h := fnv.New64a()
			h.Write([]byte{kind})
			h.Write([]byte(id))
			if got, want := traceKeyHash(kind, id), h.Sum64(); got != want {
				t.Fatalf("traceKeyHash(%c, %q) = %x, want %x", kind, id, got, want)
			}
		}
	}
}

// TestPackUUIDRoundTripsCanonicalOnly: packUUID takes exactly the
// canonical lower-case UUIDs, and unpackUUID gives each back; strings
// that differ from one in a single byte (an upper-case or non-hex digit,
// a dash moved) are refused.
func TestPackUUIDRoundTripsCanonicalOnly(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const hex = "0123456789abcdef"
	for range 3000 {
		b := []byte("00000000-0000-0000-0000-000000000000")
		for i := range b {
			if b[i] != '-' {
				b[i] = hex[r.IntN(16)]
			}
		}
		u, ok := packUUID(string(b))
		var back [36]byte
		unpackUUID(&back, u[:])
		if !ok || string(back[:]) != string(b) {
			t.Fatalf("packUUID(%s) = %v, back %s", b, ok, back[:])
		}
		i := r.IntN(len(b))
		bad := append([]byte(nil), b...)
		bad[i] = "AFgz-0 x"[r.IntN(8)]
		canonical := bad[i] == b[i] || (b[i] != '-' && strings.IndexByte(hex, bad[i]) >= 0)
		if _, ok := packUUID(string(bad)); ok != canonical {
			t.Fatalf("packUUID(%s) = %v, want %v", bad, ok, canonical)
		}
	}
}
