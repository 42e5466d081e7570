package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/bench/harness"
)

// BenchmarkStdioNoop launches the real mcprt binary (built once per test
// binary) in TEST mode with logging at info to /dev/null, does the
// handshake and measures noop calls over stdio with bench/harness (32
// concurrency slots, so that no pipelined call is refused), after
// 1,000 warm-up calls: one at a time (sequential) and with 32 in flight
// (pipelined32). Besides ns/op it reports the latency percentiles and the
// server's CPU time per call. make bench-e2e runs the same measurement at a
// fixed size and prints more figures.
func BenchmarkStdioNoop(b *testing.B) {
	bin := mcprtBinary(b)
	for _, mode := range []struct {
		name     string
		inFlight int
	}{{"sequential", 1}, {"pipelined32", 32}} {
		b.Run(mode.name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			// The server's data directory (.mcprt, relative) goes to a
			// temporary directory, not into the source tree.
			p, err := harness.Start(ctx, harness.Command{Name: "mcprt", Path: bin, Dir: b.TempDir(),
				Env: []string{"MCPRT_SERVER_MODE=TEST", "MCPRT_LOGGING_LEVEL=info",
					"MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=32"}})
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := p.Close(5 * time.Second); err != nil {
					b.Errorf("mcprt exit: %v", err)
				}
			}()
			if err := p.Handshake("", "noop", ""); err != nil {
				b.Fatal(err)
			}
			if _, err := p.Pipelined(1000, mode.inFlight); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			var ph harness.Phase
			if mode.inFlight == 1 {
				ph, err = p.Sequential(b.N)
			} else {
				ph, err = p.Pipelined(b.N, mode.inFlight)
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

var build struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// mcprtBinary builds ./cmd/mcprt once per test binary.
func mcprtBinary(tb testing.TB) string {
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "mcprt-bench-")
		if build.err != nil {
			return
		}
		build.path = filepath.Join(build.dir, "mcprt")
		cmd := exec.Command("go", "build", "-o", build.path, "./cmd/mcprt")
		cmd.Dir = ".." // go test runs in the package directory, bench/
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = &buildError{err: err, out: string(out)}
		}
	})
	if build.err != nil {
		tb.Fatal(build.err)
	}
	return build.path
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build ./cmd/mcprt: " + e.err.Error() + "\n" + e.out }

// TestMain removes the binary that BenchmarkStdioNoop built.
func TestMain(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	os.Exit(code)
}
