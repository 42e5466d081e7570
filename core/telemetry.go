package core

import (
	"context"
	"math"
	"runtime/metrics"
	"sync"
	"time"
)

// The runtime/metrics names Telemetry reads.
const (
	metricHeapLive     = "/gc/heap/live:bytes"
	metricSchedLatency = "/sched/latencies:seconds"
	// metricHeapObjects is the heap in use by objects now; it stands in for
	// the live heap until the first GC has measured that.
	metricHeapObjects = "/memory/classes/heap/objects:bytes"
)

const (
	// sampleInterval is how often Run samples.
	sampleInterval = time.Second
	// minSnapshotGap is the least time between two histogram snapshots kept
	// in the ring, whether Run or Snapshot took them; it keeps the ring
	// spanning more than latencyWindow.
	minSnapshotGap = 900 * time.Millisecond
	// latencyWindow is the rolling window of SchedLatencyP99.
	latencyWindow = 10 * time.Second
	// ringSize snapshots at least minSnapshotGap apart span more than
	// latencyWindow.
	ringSize = 16
)

// RuntimeStats are the runtime figures the health tool reports.
type RuntimeStats struct {
	// HeapLiveBytes is the live heap after the last GC
	// (runtime/metrics "/gc/heap/live:bytes"); before the first GC, the
	// heap's objects now ("/memory/classes/heap/objects:bytes").
	HeapLiveBytes uint64
	// SchedLatencyP99 is the 99th percentile of the scheduler latency
	// ("/sched/latencies:seconds") over the last ~10 s, 0 when nothing was
	// scheduled in that window. It is the upper bound of the histogram
	// bucket that holds the 99th percentile, so it is coarse: the runtime's
	// buckets are spaced roughly in powers of two.
	SchedLatencyP99 time.Duration
}

// Telemetry samples runtime/metrics: the live heap and the scheduler
// latency histogram, whose p99 it reports over a rolling 10 s window (Go's
// counterpart of an event loop delay: how long runnable goroutines wait
// for a thread).
//
// It keeps cumulative histogram snapshots taken about once a second in a
// small ring. The p99 comes from the difference between a fresh sample and
// the newest snapshot at least 10 s old (before 10 s have passed, the
// oldest snapshot). Snapshot times come from the Clock; Run's ticker uses
// real time. A Telemetry is safe for concurrent use; make it with
// NewTelemetry.
type Telemetry struct {
	clock Clock

	mu      sync.Mutex
	samples [3]metrics.Sample // heap live, sched latencies, heap objects; storage reused by metrics.Read
	ring    histRing
}

// NewTelemetry returns a Telemetry reading time from clock (nil means
// SystemClock). It takes a first sample at once, so the p99 window starts
// now.
func NewTelemetry(clock Clock) *Telemetry {
	if clock == nil {
		clock = SystemClock{}
	}
	t := &Telemetry{clock: clock}
	t.samples[0].Name = metricHeapLive
	t.samples[1].Name = metricSchedLatency
	t.samples[2].Name = metricHeapObjects
	t.mu.Lock()
	t.sampleLocked()
	t.mu.Unlock()
	return t
}

// Run samples every second until ctx is done. Callers run it in its own
// goroutine; without it, the window only advances when Snapshot is called.
func (t *Telemetry) Run(ctx context.Context) {
	tick := time.NewTicker(sampleInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			t.mu.Lock()
			t.sampleLocked()
			t.mu.Unlock()
		}
	}
}

// Snapshot takes a fresh sample (cheap: one metrics.Read, no allocation
// once warm) and returns the current figures.
func (t *Telemetry) Snapshot() RuntimeStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sampleLocked()
}

// sampleLocked reads the metrics, computes the figures against the ring,
// and keeps the histogram in the ring when the last snapshot there is at
// least minSnapshotGap old. t.mu is held.
func (t *Telemetry) sampleLocked() RuntimeStats {
	metrics.Read(t.samples[:])
	now := t.clock.Now()
	var st RuntimeStats
	if v := t.samples[0].Value; v.Kind() == metrics.KindUint64 {
		st.HeapLiveBytes = v.Uint64()
	}
	if v := t.samples[2].Value; st.HeapLiveBytes == 0 && v.Kind() == metrics.KindUint64 {
		st.HeapLiveBytes = v.Uint64() // no GC has run yet
	}
	if v := t.samples[1].Value; v.Kind() == metrics.KindFloat64Histogram {
		h := v.Float64Histogram()
		st.SchedLatencyP99 = histogramP99(h.Buckets, h.Counts, t.ring.baseline(now))
		if t.ring.due(now) {
			t.ring.push(now, h.Counts)
		}
	}
	return st
}

// histogramP99 returns the 99th percentile of the observations a cumulative
// histogram gained between the snapshot older and the snapshot newer:
// counts[i] counts the values in [buckets[i], buckets[i+1]), in seconds
// (the runtime/metrics Float64Histogram layout). It reports the upper bound
// of the bucket holding the 99th percentile (its lower bound when the upper
// one is +Inf), and 0 when the window holds no observation or buckets does
// not fit counts. A nil older, or one of another length, counts as all
// zeros; a bucket whose count went down counts as 0.
func histogramP99(buckets []float64, newer, older []uint64) time.Duration {
	if len(buckets) != len(newer)+1 {
		return 0
	}
	if len(older) != len(newer) {
		older = nil
	}
	delta := func(i int) uint64 {
		if older == nil {
			return newer[i]
		}
		if newer[i] < older[i] {
			return 0
		}
		return newer[i] - older[i]
	}
	var total uint64
	for i := range newer {
		total += delta(i)
	}
	if total == 0 {
		return 0
	}
	// rank = ceil(0.99 * total) without overflow or floating point.
	rank := total - total/100
	var cum uint64
	for i := range newer {
		cum += delta(i)
		if cum < rank {
			continue
		}
		bound := buckets[i+1]
		if math.IsInf(bound, 1) {
			bound = buckets[i]
		}
		return secondsToDuration(bound)
	}
	return 0 // unreachable: cum reaches total >= rank
}

// secondsToDuration converts seconds to a Duration, clamping to [0, max].
func secondsToDuration(s float64) time.Duration {
	switch {
	case math.IsNaN(s) || s <= 0:
		return 0
	case s >= float64(math.MaxInt64)/float64(time.Second):
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(s * float64(time.Second))
}

// histSnap is one cumulative histogram snapshot.
type histSnap struct {
	at     time.Time
	counts []uint64
}

// histRing keeps the last ringSize snapshots; their count slices are reused.
type histRing struct {
	snaps [ringSize]histSnap
	next  int // where the next push goes
	n     int // how many snapshots are held
}

// push keeps a copy of counts taken at time at, replacing the oldest
// snapshot when the ring is full.
func (r *histRing) push(at time.Time, counts []uint64) {
	s := &r.snaps[r.next]
	s.at = at
	s.counts = append(s.counts[:0], counts...)
	r.next = (r.next + 1) % ringSize
	if r.n < ringSize {
		r.n++
	}
}

// get returns the i-th newest snapshot (0 is the newest); i < r.n.
func (r *histRing) get(i int) *histSnap {
	return &r.snaps[(r.next-1-i+ringSize)%ringSize]
}

// due reports whether a snapshot taken at now should be kept: the ring is
// empty or its newest snapshot is at least minSnapshotGap older.
func (r *histRing) due(now time.Time) bool {
	return r.n == 0 || now.Sub(r.get(0).at) >= minSnapshotGap
}

// baseline returns the counts of the newest snapshot at least latencyWindow
// older than now, else those of the oldest snapshot, else nil.
func (r *histRing) baseline(now time.Time) []uint64 {
	if r.n == 0 {
		return nil
	}
	for i := 0; i < r.n; i++ {
		if s := r.get(i); now.Sub(s.at) >= latencyWindow {
			return s.counts
		}
	}
	return r.get(r.n - 1).counts
}
