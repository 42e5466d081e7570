package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/domain/memory"
)

// BenchmarkMemory measures memory_store and memory_retrieve on the SQLite
// store with a 1 KiB value (each Put is one durable WAL transaction).
func BenchmarkMemory(b *testing.B) {
	value := json.RawMessage(`{"text":"` + strings.Repeat("a", 1000) + `"}`)
	for _, backend := range []string{"sqlite", "mem"} {
		var svc *memory.Service
		if backend == "sqlite" {
			db, clock := newDB(b)
			svc = memory.NewService(db.Memory(), clock)
		} else {
			svc = memory.NewService(memory.NewMemStore(), nil)
		}
		ctx := testCtx(b)
		for i := range 1000 {
			if _, _, err := svc.Put(ctx, "bench", fmt.Sprintf("key-%d", i), value); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(backend+"/store", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, _, err := svc.Put(ctx, "bench", fmt.Sprintf("key-%d", i%1000), value); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(backend+"/retrieve", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, found, err := svc.Get(ctx, "bench", fmt.Sprintf("key-%d", i%1000)); err != nil || !found {
					b.Fatal(found, err)
				}
				i++
			}
		})
	}
}
