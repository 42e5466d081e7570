package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcprt/mcprt/domain/trace"
)

// BenchmarkTraceAppend256 writes trace events in batches of 256, as the
// recorder does under load; ns/op is per event.
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
}
