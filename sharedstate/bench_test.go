package sharedstate

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/domain/memory"
	"github.com/mcprt/mcprt/domain/reservation"
	"github.com/mcprt/mcprt/natsengine/natstest"
	"github.com/mcprt/mcprt/store"
)

// BenchmarkWrite compares a write on the local SQLite store alone
// (aacp.stateBackend=files) with the same write shared through an
// embedded hub (sync_always): publish, apply locally, read the outcome.
//
//	go test -run XXX -bench Write -benchtime 300x -count 5 ./sharedstate/
func BenchmarkWrite(b *testing.B) {
	type stores struct {
		mem memory.Store
		res reservation.Store
	}
	backends := []struct {
		name string
		open func(b *testing.B) stores
	}{
		{"files", func(b *testing.B) stores {
			db, err := store.New(store.Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			return stores{mem: db.Memory(), res: db.Reservations()}
		}},
		{"nats", func(b *testing.B) stores {
			var s stores
			srv := natstest.Server(b)
			db, err := store.New(store.Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			conn := natstest.Connect(b, srv.ClientURL())
			r, err := Open(b.Context(), Options{JS: conn.JS, DB: db})
			if err != nil {
				b.Fatal(err)
			}
			s.mem, s.res = NewMemory(r, db.Memory()), NewReservations(r, db.Reservations())
			if err := r.Start(b.Context()); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(r.Close)
			return s
		}},
	}
	for _, be := range backends {
		b.Run("memory_put/"+be.name, func(b *testing.B) {
			s := be.open(b)
			var lat []time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				st := time.Now()
				if _, err := s.mem.Put(b.Context(), memory.Entry{Namespace: "b", Key: fmt.Sprint("k", i%100), Value: []byte(`{"text":"a value to index"}`), StoredAt: time.Now()}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(st))
			}
			reportP50(b, lat)
		})
		b.Run("reserve/"+be.name, func(b *testing.B) {
			s := be.open(b)
			var ids atomic.Int64
			now := time.Now().UTC()
			var lat []time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				st := time.Now()
				p, _ := reservation.ParsePattern(fmt.Sprintf("dir%d/**", i))
				g, _, err := s.res.Reserve(b.Context(), reservation.ReserveOp{AgentID: "a", Patterns: []reservation.Pattern{p}, Exclusive: true,
					Now: now, ExpiresAt: now.Add(time.Hour), MaxPerAgent: 1 << 30, NewID: func() string { return fmt.Sprint(ids.Add(1)) }})
				if err != nil || len(g) != 1 {
					b.Fatalf("reserve: %v %v", g, err)
				}
				lat = append(lat, time.Since(st))
			}
			reportP50(b, lat)
		})
	}
}

// reportP50 reports the median latency in milliseconds.
func reportP50(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}
