package trace

import (
	"context"
	"testing"
	"time"
)

// discardStore keeps nothing: the benchmark measures the Recorder alone.
type discardStore struct{ memStore }

func (*discardStore) Append(context.Context, []Event) error { return nil }

// BenchmarkRecord is the trace recorder's queue under a stream of calls:
// events are recorded a batch (DefaultBatchSize) at a time, as a busy
// server's calls finish, and each batch is flushed to a store that keeps
// nothing. ns/op is the wall time per event, the writer's taking of the
// batch included.
func BenchmarkRecord(b *testing.B) {
	r := NewRecorder(RecorderOptions{Store: &discardStore{}, QueueSize: DefaultQueueSize,
		BatchSize: DefaultBatchSize, Linger: 200 * time.Millisecond})
	ev := Event{RunID: "f47ac10b-58cc-4372-a567-0e02b2c3d479", TraceID: "9b2f7c1e-8a4d-4e5f-9c3b-1d2e3f4a5b6c",
		CorrelationID: "9b2f7c1e-8a4d-4e5f-9c3b-1d2e3f4a5b6c", Tool: "noop", Start: time.Now(), Outcome: "success",
		Success: true, ServerID: "s"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		r.Record(ev, nil)
		if n++; n == DefaultBatchSize {
			n = 0
			if err := r.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := r.Close(ctx); err != nil {
		b.Fatal(err)
	}
	if _, dropped, _ := r.Counts(); dropped > 0 {
		b.Fatalf("%d events dropped", dropped)
	}
}
