package core

import "time"

// HealthStatus is the status the health tool reports: how close the server
// is to refusing work.
type HealthStatus string

// The health status values.
const (
	// StatusHealthy: none of the degraded or unhealthy conditions hold.
	StatusHealthy HealthStatus = "healthy"
	// StatusDegraded: more than 80% of the concurrency slots are taken, or
	// the scheduler latency p99 is over 100 ms.
	StatusDegraded HealthStatus = "degraded"
	// StatusUnhealthy: every concurrency slot is taken, or the scheduler
	// latency p99 is over 500 ms, or the last 3 or more tools/call were
	// rejected with RESOURCE_EXHAUSTED.
	StatusUnhealthy HealthStatus = "unhealthy"
)

// The thresholds of Health: scheduler latency p99 (Go's counterpart of an
// event loop delay) and consecutive RESOURCE_EXHAUSTED rejections.
const (
	degradedSchedLatency    = 100 * time.Millisecond
	unhealthySchedLatency   = 500 * time.Millisecond
	unhealthyExhaustedCalls = 3
)

// HealthInputs are the figures Health judges.
type HealthInputs struct {
	// ConcurrentExecutions is the number of concurrency slots held
	// (observer tools such as health take none).
	ConcurrentExecutions int
	// MaxConcurrentExecutions is resources.maxConcurrentExecutions.
	MaxConcurrentExecutions int
	// SchedLatencyP99 is RuntimeStats.SchedLatencyP99.
	SchedLatencyP99 time.Duration
	// ConsecutiveExhausted is ExhaustionCounter.Value.
	ConsecutiveExhausted int
}

// Health judges the inputs: unhealthy when every slot is
// taken (concurrent >= max), or p99 > 500 ms, or ConsecutiveExhausted >= 3;
// else degraded when concurrent > 80% of max (integer math:
// concurrent*10 > max*8, so exactly 80% is not degraded), or p99 > 100 ms;
// else healthy.
func Health(in HealthInputs) HealthStatus {
	switch {
	case in.ConcurrentExecutions >= in.MaxConcurrentExecutions,
		in.SchedLatencyP99 > unhealthySchedLatency,
		in.ConsecutiveExhausted >= unhealthyExhaustedCalls:
		return StatusUnhealthy
	case in.ConcurrentExecutions*10 > in.MaxConcurrentExecutions*8,
		in.SchedLatencyP99 > degradedSchedLatency:
		return StatusDegraded
	}
	return StatusHealthy
}
