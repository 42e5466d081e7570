package core

import (
	"context"
	"math"
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestHistogramP99(t *testing.T) {
	inf := math.Inf(1)
	// Buckets (seconds): [0,0.001) [0.001,0.01) [0.01,0.1) [0.1,1) [1,+Inf)
	b := []float64{0, 0.001, 0.01, 0.1, 1, inf}
	ms := time.Millisecond
	tests := []struct {
		name         string
		buckets      []float64
		newer, older []uint64
		want         time.Duration
	}{
		{"empty window", b, []uint64{5, 5, 0, 0, 0}, []uint64{5, 5, 0, 0, 0}, 0},
		{"all zero, no older", b, []uint64{0, 0, 0, 0, 0}, nil, 0},
		{"all in first bucket", b, []uint64{100, 0, 0, 0, 0}, nil, 1 * ms},
		{"99 fast 1 slow", b, []uint64{99, 0, 0, 1, 0}, nil, 1 * ms},
		{"98 fast 2 slow", b, []uint64{98, 0, 0, 2, 0}, nil, time.Second},
		{"single observation", b, []uint64{0, 0, 1, 0, 0}, nil, 100 * ms},
		{"difference used", b, []uint64{1000, 10, 0, 0, 0}, []uint64{1000, 0, 0, 0, 0}, 10 * ms},
		{"old slow ones excluded", b, []uint64{200, 0, 0, 50, 0}, []uint64{100, 0, 0, 50, 0}, 1 * ms},
		{"+Inf bucket reports lower bound", b, []uint64{0, 0, 0, 0, 3}, nil, time.Second},
		{"rank rounds up", b, []uint64{198, 0, 2, 0, 0}, nil, 1 * ms},
		{"rank rounds up, 1 of 150", b, []uint64{148, 0, 2, 0, 0}, nil, 100 * ms},
		{"count going down counts as 0", b, []uint64{10, 0, 0, 0, 0}, []uint64{0, 0, 0, 5, 0}, 1 * ms},
		{"older of other length ignored", b, []uint64{0, 4, 0, 0, 0}, []uint64{9}, 10 * ms},
		{"buckets do not fit", []float64{0, 1}, []uint64{1, 2}, nil, 0},
		{"-Inf lower, +Inf upper", []float64{math.Inf(-1), inf}, []uint64{5}, nil, 0},
		{"huge bound clamps", []float64{0, 1e12, inf}, []uint64{1, 0}, nil, time.Duration(math.MaxInt64)},
	}
	for _, tt := range tests {
		if got := histogramP99(tt.buckets, tt.newer, tt.older); got != tt.want {
			t.Errorf("%s: histogramP99 = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestHistRingBaseline(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var r histRing
	if r.baseline(t0) != nil || !r.due(t0) {
		t.Fatalf("empty ring: baseline %v, due %v", r.baseline(t0), r.due(t0))
	}
	counts := func(i int) []uint64 { return []uint64{uint64(i)} }
	r.push(t0, counts(0))
	if r.due(t0.Add(500 * time.Millisecond)) {
		t.Errorf("due 500ms after the last snapshot")
	}
	if !r.due(t0.Add(minSnapshotGap)) {
		t.Errorf("not due %v after the last snapshot", minSnapshotGap)
	}
	// One snapshot a second for 30 s, counts = seconds since t0.
	for i := 1; i <= 30; i++ {
		r.push(t0.Add(time.Duration(i)*time.Second), counts(i))
		now := t0.Add(time.Duration(i)*time.Second + 300*time.Millisecond)
		// now is i+0.3 s: the newest snapshot at least 10 s old is second
		// i-10; before that exists, the oldest one kept (second 0).
		want := uint64(max(0, i-10))
		if got := r.baseline(now)[0]; got != want {
			t.Errorf("after %d s: baseline from second %d, want %d", i, got, want)
		}
	}
	// The ring reuses its slices: pushing must copy counts.
	src := []uint64{99}
	r.push(t0.Add(time.Minute), src)
	src[0] = 0
	if r.get(0).counts[0] != 99 {
		t.Errorf("push kept the caller's slice")
	}
}

func TestTelemetrySnapshot(t *testing.T) {
	clock := NewManualClock(time.Now())
	tel := NewTelemetry(clock)
	runtime.GC()
	// Make the scheduler do some work so the latency histogram moves.
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() { runtime.Gosched() })
	}
	wg.Wait()
	st := tel.Snapshot()
	if st.HeapLiveBytes == 0 {
		t.Errorf("HeapLiveBytes = 0 after a GC")
	}
	if st.SchedLatencyP99 < 0 || st.SchedLatencyP99 > time.Minute {
		t.Errorf("SchedLatencyP99 = %v, implausible", st.SchedLatencyP99)
	}
	clock.Advance(time.Second)
	tel.Snapshot()
	tel.mu.Lock()
	n := tel.ring.n
	tel.mu.Unlock()
	if n != 2 {
		t.Errorf("ring holds %d snapshots after 1 s, want 2", n)
	}
	if NewTelemetry(nil).clock == nil {
		t.Errorf("NewTelemetry(nil) has no clock")
	}
}

func TestTelemetryRunAndConcurrentSnapshots(t *testing.T) {
	tel := NewTelemetry(SystemClock{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		tel.Run(ctx)
		close(done)
	}()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				_ = tel.Snapshot()
			}
		})
	}
	wg.Wait()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
}

func BenchmarkTelemetrySnapshot(b *testing.B) {
	tel := NewTelemetry(nil)
	b.ReportAllocs()
	for b.Loop() {
		_ = tel.Snapshot()
	}
}
