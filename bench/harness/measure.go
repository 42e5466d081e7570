package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"sync/atomic"
	"time"
)

// Phase is what one measured run of calls gave.
type Phase struct {
	// Calls is the number of calls measured.
	Calls int
	// InFlight is the number of requests kept in flight (1 for
	// sequential calls).
	InFlight int
	// Elapsed is the time from the first request written to the last
	// answer read.
	Elapsed time.Duration
	// CPU is the server's CPU time (user+system, all threads) over the
	// phase, from Process.CPUTime.
	CPU time.Duration
	// StatCPU is the same from utime+stime in /proc/<pid>/stat
	// (Process.StatCPUTime), within one ClockTick at each end.
	StatCPU time.Duration
	// Latencies holds each call's latency, in call order: from writing
	// the request (sequential) or queueing it for writing (pipelined) to
	// reading its answer.
	Latencies []time.Duration
	// P50, P95, P99, Mean and Max summarize Latencies (nearest-rank
	// percentiles).
	P50, P95, P99, Mean, Max time.Duration
}

// CallsPerSecond returns Calls / Elapsed.
func (ph Phase) CallsPerSecond() float64 {
	if ph.Elapsed <= 0 {
		return 0
	}
	return float64(ph.Calls) / ph.Elapsed.Seconds()
}

// CPUPerCall returns the server's CPU time divided by the calls.
func (ph Phase) CPUPerCall() time.Duration {
	if ph.Calls == 0 {
		return 0
	}
	return ph.CPU / time.Duration(ph.Calls)
}

// StatCPUPerCall returns StatCPU divided by the calls.
func (ph Phase) StatCPUPerCall() time.Duration {
	if ph.Calls == 0 {
		return 0
	}
	return ph.StatCPU / time.Duration(ph.Calls)
}

// cpuSample is the server's CPU time by both measures.
type cpuSample struct{ run, stat time.Duration }

func (p *Process) sampleCPU() (cpuSample, error) {
	stat, err := p.StatCPUTime()
	if err != nil {
		return cpuSample{}, err
	}
	run, err := p.CPUTime()
	if err != nil {
		return cpuSample{}, err
	}
	return cpuSample{run, stat}, nil
}

// setCPU records the CPU time between two samples.
func (ph *Phase) setCPU(before, after cpuSample) {
	ph.CPU = after.run - before.run
	ph.StatCPU = after.stat - before.stat
}

// summarize fills the statistics from Latencies.
func (ph *Phase) summarize() {
	n := len(ph.Latencies)
	if n == 0 {
		return
	}
	sorted := slices.Clone(ph.Latencies)
	slices.Sort(sorted)
	var sum time.Duration
	for _, d := range sorted {
		sum += d
	}
	ph.P50 = Percentile(sorted, 0.50)
	ph.P95 = Percentile(sorted, 0.95)
	ph.P99 = Percentile(sorted, 0.99)
	ph.Mean = sum / time.Duration(n)
	ph.Max = sorted[n-1]
}

// Percentile returns the nearest-rank q-quantile (0 < q <= 1) of sorted,
// which must be in ascending order.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(q*float64(len(sorted))+0.999999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// Sequential makes n calls one after the other, each sent when the answer
// to the previous one has arrived. Call Handshake first.
func (p *Process) Sequential(n int) (Phase, error) {
	if p.reqHead == nil {
		return Phase{}, fmt.Errorf("harness: %s: Sequential before Handshake", p.name)
	}
	ph := Phase{Calls: n, InFlight: 1, Latencies: make([]time.Duration, n)}
	buf := make([]byte, 0, 256)
	cpu0, err := p.sampleCPU()
	if err != nil {
		return Phase{}, err
	}
	start := time.Now()
	for i := range n {
		id := p.nextID
		p.nextID++
		buf = p.callLine(buf[:0], id)
		t0 := time.Now()
		if _, err := p.stdin.Write(buf); err != nil {
			return Phase{}, fmt.Errorf("harness: %s: writing a request: %w", p.name, err)
		}
		if err := p.await(id); err != nil {
			return Phase{}, err
		}
		ph.Latencies[i] = time.Since(t0)
		p.calls++
	}
	ph.Elapsed = time.Since(start)
	cpu1, err := p.sampleCPU()
	if err != nil {
		return Phase{}, err
	}
	ph.setCPU(cpu0, cpu1)
	ph.summarize()
	return ph, nil
}

// await reads messages until the answer to id arrives.
func (p *Process) await(id int64) error {
	for {
		msg, err := p.readMessage()
		if err != nil {
			return fmt.Errorf("harness: %s: waiting for the answer to id %d: %w", p.name, id, err)
		}
		got, ok, isErr, isCall := scanEnvelope(msg)
		if !ok || isCall || got != id {
			continue
		}
		if isErr || isToolError(msg) {
			return fmt.Errorf("harness: %s: id %d was answered with an error: %s", p.name, id, clip(msg))
		}
		return nil
	}
}

// Pipelined makes n calls keeping inFlight requests in flight: a writer
// goroutine sends a request whenever an answer frees a slot, batching the
// requests that are ready into one write; this goroutine reads the
// answers. Call Handshake first.
func (p *Process) Pipelined(n, inFlight int) (Phase, error) {
	if p.reqHead == nil {
		return Phase{}, fmt.Errorf("harness: %s: Pipelined before Handshake", p.name)
	}
	if inFlight < 1 {
		inFlight = 1
	}
	ph := Phase{Calls: n, InFlight: inFlight, Latencies: make([]time.Duration, n)}
	base := p.nextID
	p.nextID += int64(n)
	sent := make([]atomic.Int64, n) // ns since start when each request was queued
	tokens := make(chan struct{}, inFlight)
	stop := make(chan struct{})
	defer close(stop)
	werr := make(chan error, 1)

	cpu0, err := p.sampleCPU()
	if err != nil {
		return Phase{}, err
	}
	start := time.Now()
	go func() {
		bw := bufio.NewWriterSize(p.stdin, 32<<10)
		buf := make([]byte, 0, 256)
		for i := range n {
			select {
			case tokens <- struct{}{}:
			default:
				// Every slot is taken: send what is queued, then wait.
				if err := bw.Flush(); err != nil {
					werr <- err
					return
				}
				select {
				case tokens <- struct{}{}:
				case <-stop:
					werr <- nil
					return
				}
			}
			buf = p.callLine(buf[:0], base+int64(i))
			sent[i].Store(int64(time.Since(start)))
			_, _ = bw.Write(buf) // an error sticks; Flush reports it
		}
		werr <- bw.Flush()
	}()
	for got := 0; got < n; {
		msg, err := p.readMessage()
		if err != nil {
			return Phase{}, fmt.Errorf("harness: %s: reading answers (%d of %d read): %w", p.name, got, n, err)
		}
		id, ok, isErr, isCall := scanEnvelope(msg)
		if !ok || isCall || id < base || id >= base+int64(n) {
			continue
		}
		if isErr || isToolError(msg) {
			return Phase{}, fmt.Errorf("harness: %s: id %d was answered with an error: %s", p.name, id, clip(msg))
		}
		i := id - base
		ph.Latencies[i] = time.Since(start) - time.Duration(sent[i].Load())
		<-tokens
		got++
		p.calls++
	}
	ph.Elapsed = time.Since(start)
	cpu1, err := p.sampleCPU()
	if err != nil {
		return Phase{}, err
	}
	if err := <-werr; err != nil {
		return Phase{}, fmt.Errorf("harness: %s: writing requests: %w", p.name, err)
	}
	ph.setCPU(cpu0, cpu1)
	ph.summarize()
	return ph, nil
}

var toolErrorFlag = []byte(`"isError":true`)

// isToolError reports whether an answer is a tool error: a result with
// isError true (a rejected or failed call, which costs a server less than
// a successful one and must not pass for one).
func isToolError(msg []byte) bool { return bytes.Contains(msg, toolErrorFlag) }
