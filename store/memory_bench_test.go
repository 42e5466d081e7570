//go:build unix

package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/domain/memory"
)

// fillMemory100k stores n entries with keys "proj-<p>/notes/item-<i>" (50
// projects), one second apart, through PutAll in batches of 1,000.
func fillMemory100k(b *testing.B, m *Memory, n int) {
	b.Helper()
	ctx := context.Background()
	batch := make([]memory.Entry, 0, 1000)
	for i := range n {
		v, _ := json.Marshal(map[string]any{"text": fmt.Sprintf("note %d about topic w%dx", i, i*7919%100003), "n": i})
		batch = append(batch, memory.Entry{Namespace: fmt.Sprintf("ns%d", i%4), Key: fmt.Sprintf("proj-%d/notes/item-%06d", i%50, i),
			Value: v, StoredAt: t0.Add(time.Duration(i) * time.Second)})
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := m.PutAll(ctx, batch, false); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// fixtureSize is n, or n/100 under -short: make test runs every benchmark
// once with -short to check that it works, not to measure it.
func fixtureSize(n int) int {
	if testing.Short() {
		return n / 100
	}
	return n
}

// BenchmarkMemorySearch100k fills the SQLite memory with 100,000 entries
// and searches it by key substring (a rare one, matching 1 to 10 entries;
// a common one, matching thousands; a one- or two-character one; one that
// matches nothing) and by full text; it reports p50 and p95 per search in
// milliseconds, and the process's CPU time per search (steadier than
// wall time on a busy machine).
func BenchmarkMemorySearch100k(b *testing.B) {
	db, err := New(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	m := db.Memory()
	n := fixtureSize(100_000)
	fillMemory100k(b, m, n)
	ctx := context.Background()
	cases := []struct {
		name  string
		query func(i int) memory.SearchQuery
		// scan runs the query as every key search ran before the
		// trigram index (the plain scan), for a before/after in one run.
		scan bool
	}{
		{"key-rare", func(i int) memory.SearchQuery {
			return memory.SearchQuery{Query: fmt.Sprintf("item-%05d", (i*7919)%(n/10)), Limit: 10}
		}, false},
		{"key-rare-ns", func(i int) memory.SearchQuery {
			return memory.SearchQuery{Query: fmt.Sprintf("item-%06d", (i*7919)%n), Namespace: fmt.Sprintf("ns%d", i%4), Limit: 10}
		}, false},
		{"key-common", func(i int) memory.SearchQuery {
			return memory.SearchQuery{Query: fmt.Sprintf("proj-%d/", i%50), Limit: 10}
		}, false},
		{"key-short", func(i int) memory.SearchQuery {
			return memory.SearchQuery{Query: fmt.Sprintf("%d", i%10), Limit: 10}
		}, false},
		{"key-none", func(i int) memory.SearchQuery {
			return memory.SearchQuery{Query: fmt.Sprintf("absent-%d", i), Limit: 10}
		}, false},
		{"fulltext", func(i int) memory.SearchQuery {
			return memory.SearchQuery{Query: fmt.Sprintf("w%dx", (i*7919%n)*7919%100003), Limit: 10, FullText: true}
		}, false},
	}
	for _, c := range cases[:5] {
		c.name += "-scan"
		c.scan = true
		cases = append(cases, c)
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var lat []time.Duration
			i := 0
			cpu0 := processCPU()
			for b.Loop() {
				start := time.Now()
				search := m.Search
				if c.scan {
					search = func(ctx context.Context, q memory.SearchQuery) ([]memory.Entry, error) {
						return m.plainScan(ctx, q)
					}
				}
				if _, err := search(ctx, c.query(i)); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				i++
			}
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/1000/float64(len(lat)), "cpu-ms/op")
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}

// processCPU is the CPU time the process has used (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkMemoryPutAll measures an import of 500 new entries in one
// transaction, with the key index and (for a before/after in one run)
// with its triggers dropped.
func BenchmarkMemoryPutAll(b *testing.B) {
	for _, indexed := range []bool{true, false} {
		name := "indexed"
		if !indexed {
			name = "unindexed"
		}
		b.Run(name, func(b *testing.B) {
			db, _ := newDB(b)
			ctx := testCtx(b)
			if !indexed {
				h, err := db.handle(ctx)
				if err != nil {
					b.Fatal(err)
				}
				for _, tr := range []string{"memory_keys_inserted", "memory_keys_deleted", "memory_keys_rekeyed"} {
					if _, err := h.ExecContext(ctx, `DROP TRIGGER `+tr); err != nil {
						b.Fatal(err)
					}
				}
			}
			m := db.Memory()
			n := 0
			for b.Loop() {
				batch := make([]memory.Entry, 500)
				for i := range batch {
					batch[i] = memory.Entry{Namespace: "bulk", Key: fmt.Sprintf("proj-%d/notes/item-%07d", n%50, n), Value: []byte(`{"a":1}`), StoredAt: t0}
					n++
				}
				if _, err := m.PutAll(ctx, batch, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
