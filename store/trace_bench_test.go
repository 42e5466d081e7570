package store

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/domain/trace"
)

// BenchmarkTraceAppend256 writes trace events in batches of 256, as the
// recorder does under load; ns/op is per event, and cpu-ns/event the
// process's CPU time (user and system, SQLite's I/O included) per event.
func BenchmarkTraceAppend256(b *testing.B) {
	db, err := New(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tr := db.Traces()
	ctx := context.Background()
	batch := make([]trace.Event, 256)
	t0 := time.Now()
	var ru0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(batch) {
		for j := range batch {
			id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i+j)
			batch[j] = trace.Event{RunID: id, TraceID: id, CorrelationID: id, Tool: "noop", Start: t0, Duration: time.Microsecond,
				Outcome: "success", Success: true, ServerID: "bench"}
		}
		if err := tr.Append(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/event")
}

// BenchmarkTraceRead100k reads a store of 100,000 events (the default
// retention) the way the trace tools do.
func BenchmarkTraceRead100k(b *testing.B) {
	db, err := New(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tr := db.Traces()
	ctx := context.Background()
	t0 := time.Now()
	batch := make([]trace.Event, 256)
	for i := 0; i < 100000; i += len(batch) {
		for j := range batch {
			id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i+j)
			batch[j] = trace.Event{RunID: id, TraceID: id, CorrelationID: id, Tool: "noop", Start: t0.Add(time.Duration(i+j) * time.Microsecond),
				Duration: time.Microsecond, Outcome: "success", Success: true, ServerID: "bench", SessionID: fmt.Sprintf("s%d", (i+j)%100)}
		}
		if err := tr.Append(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("List", func(b *testing.B) {
		for range b.N {
			if _, _, err := tr.List(ctx, trace.ListQuery{Limit: 10}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Events", func(b *testing.B) {
		for range b.N {
			if evs, _, err := tr.Events(ctx, "00000000-0000-4000-8000-000000050000", 1000); err != nil || len(evs) != 1 {
				b.Fatal(len(evs), err)
			}
		}
	})
	b.Run("BySession", func(b *testing.B) {
		for range b.N {
			if _, _, err := tr.BySession(ctx, "s7", 100); err != nil {
				b.Fatal(err)
			}
		}
	})
}
