// Command e2e is the end-to-end stdio benchmark of mcprt (make bench-e2e):
// it builds the real mcprt binary, starts it in TEST mode with logging at
// info, does the MCP handshake and measures the noop tool with
// bench/harness, then prints one line per figure:
//
//	mcprt seq_p50_us 38.2
//	mcprt pipelined_calls_per_s 51234
//	mcprt server_cpu_us_per_call_seq 14.1
//	mcprt peak_rss_mb 9.8
//
// Usage:
//
//	go run ./bench/cmd/e2e [flags]
//
// The server gets as many concurrency slots (resources.maxConcurrentExecutions)
// as requests are kept in flight, 32 by default: with the default of 10 some
// pipelined calls are refused RESOURCE_EXHAUSTED, and the harness fails a
// run that gets any error answer. The defaults take about a minute on a
// 2-core machine. -rss-after lists
// the total call counts after which the resident set is sampled (the no-leak
// check); an empty list skips that phase. -bin measures an existing binary
// instead of building one. Progress goes to standard error, figures to
// standard output.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcprt/mcprt/bench/harness"
)

func main() {
	os.Exit(run())
}

func run() int {
	var (
		root      = flag.String("root", "", "the mcprt repository to build (default: found from the working directory)")
		bin       = flag.String("bin", "", "measure this mcprt binary instead of building one")
		warmup    = flag.Int("warmup", 5000, "sequential warm-up calls")
		seq       = flag.Int("seq", 30000, "measured sequential calls")
		pwarmup   = flag.Int("pipelined-warmup", 20000, "pipelined warm-up calls")
		pipelined = flag.Int("pipelined", 200000, "measured pipelined calls")
		inflight  = flag.Int("inflight", 32, "requests in flight in the pipelined phases")
		rssAfter  = flag.String("rss-after", "100000,1000000", "comma-separated total call counts after which RSS is sampled (empty: skip)")
		level     = flag.String("log-level", "info", "MCPRT_LOGGING_LEVEL of the server")
		slots     = flag.Int("max-concurrent", 0, "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS of the server (0: the -inflight count)")
		proto     = flag.String("protocol-version", harness.DefaultProtocolVersion, "protocol revision asked for in initialize")
	)
	flag.Parse()
	checkpoints, err := harness.ParseCounts(*rssAfter)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 2
	}
	if *slots <= 0 {
		*slots = max(*inflight, 10)
	}
	path := *bin
	if path == "" {
		dir, err := os.MkdirTemp("", "mcprt-e2e-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		if path, err = build(*root, dir); err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
	}
	load := harness.LoadAverage()
	start := time.Now()
	work, err := os.MkdirTemp("", "mcprt-e2e-run-") // the server's data directory stays out of the caller's tree
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(work)
	res, err := harness.Run(context.Background(), harness.Command{
		Name: "mcprt",
		Path: path,
		Dir:  work,
		Env: []string{"MCPRT_SERVER_MODE=TEST", "MCPRT_LOGGING_LEVEL=" + *level,
			"MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=" + strconv.Itoa(*slots)},
	}, harness.Options{
		ProtocolVersion: *proto,
		Warmup:          *warmup,
		Sequential:      *seq,
		PipelinedWarmup: *pwarmup,
		Pipelined:       *pipelined,
		InFlight:        *inflight,
		RSSAfter:        checkpoints,
		Timeout:         30 * time.Minute,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "# measured in %.1f s: %d sequential calls (after %d warm-up), %d pipelined calls with %d in flight "+
		"(after %d warm-up); mcprt in TEST mode, logging at %s to /dev/null, %d concurrency slots\n",
		time.Since(start).Seconds(), *seq, *warmup, *pipelined, *inflight, *pwarmup, *level, *slots)
	fmt.Fprintf(os.Stderr, "# load average before: %s, after: %s (other work on the machine skews the figures)\n",
		load, harness.LoadAverage())
	for _, f := range res.Figures() {
		fmt.Printf("%s %s %s\n", res.Name, f.Name, f.Format())
	}
	if res.ExitErr != nil {
		fmt.Fprintln(os.Stderr, "e2e: mcprt did not exit cleanly when its input closed:", res.ExitErr)
		return 1
	}
	return 0
}

// build compiles ./cmd/mcprt of the repository at root into dir.
func build(root, dir string) (string, error) {
	if root == "" {
		var err error
		if root, err = findRoot(); err != nil {
			return "", err
		}
	}
	out := filepath.Join(dir, "mcprt")
	start := time.Now()
	cmd := exec.Command("go", "build", "-o", out, "./cmd/mcprt")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as make build makes it
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/mcprt in %s: %w", root, err)
	}
	fmt.Fprintf(os.Stderr, "# built %s in %.1f s\n", root, time.Since(start).Seconds())
	return out, nil
}

// findRoot walks up from the working directory to the directory whose
// go.mod declares module github.com/mcprt/mcprt.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && modulePath(string(b)) == "github.com/mcprt/mcprt" {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module github.com/mcprt/mcprt above the working directory; pass -root")
		}
		dir = parent
	}
}

func modulePath(gomod string) string {
	for line := range strings.SplitSeq(gomod, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}
