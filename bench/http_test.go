package bench

import (
	"context"
	"testing"
	"time"

	"github.com/mcprt/mcprt/bench/harness"
)

// BenchmarkHTTPNoop launches the real mcprt binary (built once per test
// binary, as for BenchmarkStdioNoop) with --http on a free loopback port,
// in TEST mode with logging at info to /dev/null and 32 concurrency slots,
// and measures noop calls over Streamable HTTP with bench/harness's
// net/http client (keep-alive, loopback only), after 500 warm-up calls:
// one at a time on one session (sequential), and from 32 concurrent
// clients, each on a session and a connection of its own and making one
// call at a time (concurrent32). Besides ns/op it reports the latency
// percentiles and the server's CPU time per call. bench/cmd/e2ehttp runs
// the same measurement at a fixed size and prints more figures.
func BenchmarkHTTPNoop(b *testing.B) {
	bin := mcprtBinary(b)
	for _, mode := range []struct {
		name    string
		clients int
	}{{"sequential", 1}, {"concurrent32", 32}} {
		b.Run(mode.name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			s, err := harness.StartHTTP(ctx, harness.HTTPCommand{Command: harness.Command{Name: "mcprt", Path: bin, Dir: b.TempDir(),
				Args: []string{"--http"},
				Env: []string{"MCPRT_SERVER_MODE=TEST", "MCPRT_LOGGING_LEVEL=info",
					"MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=32",
					"MCPRT_TRANSPORT_HTTP_ADDR=" + harness.AddrPlaceholder}}})
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := s.Close(5 * time.Second); err != nil {
					b.Errorf("mcprt exit: %v", err)
				}
			}()
			if err := s.Handshake("", "noop", "", mode.clients); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Concurrent(500, mode.clients); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			var ph harness.Phase
			if mode.clients == 1 {
				ph, err = s.Sequential(b.N)
			} else {
				ph, err = s.Concurrent(b.N, mode.clients)
			}
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			us := func(d time.Duration) float64 { return float64(d) / 1e3 }
			b.ReportMetric(us(ph.P50), "p50-us")
			b.ReportMetric(us(ph.P95), "p95-us")
			b.ReportMetric(us(ph.P99), "p99-us")
			b.ReportMetric(us(ph.CPUPerCall()), "server-cpu-us/call")
		})
	}
}
