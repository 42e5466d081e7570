// Command rssmap shows where an mcprt binary's resident set goes: it starts
// the binary over stdio in TEST mode (logging at info), once with tracing
// on and once with it off, does the MCP handshake, and prints the resident
// set split by what backs it (harness.MemoryMap: the executable's pages,
// other files, anonymous memory and its largest mapping, the Go heap
// arena) when idle and after the no-op load, with the peak (VmHWM):
//
//	go build -o /tmp/mcprt ./cmd/mcprt && go run ./bench/cmd/rssmap -bin /tmp/mcprt
//
// A heap profile tells what the Go heap holds; this tells how much of the
// resident set the Go heap is at all.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/mcprt/mcprt/bench/harness"
)

func main() { os.Exit(run()) }

func run() int {
	var (
		bin       = flag.String("bin", "", "the mcprt binary to measure (required)")
		seq       = flag.Int("seq", 20000, "sequential no-op calls")
		pipelined = flag.Int("pipelined", 50000, "pipelined no-op calls")
		inflight  = flag.Int("inflight", 32, "requests in flight in the pipelined phase")
	)
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "rssmap: -bin is required: the mcprt binary to measure (go build -o /tmp/mcprt ./cmd/mcprt)")
		return 2
	}
	for _, tracing := range []string{"true", "false"} {
		if err := measure(*bin, tracing, *seq, *pipelined, *inflight); err != nil {
			fmt.Fprintln(os.Stderr, "rssmap:", err)
			return 1
		}
	}
	return 0
}

func measure(bin, tracing string, seq, pipelined, inflight int) error {
	work, err := os.MkdirTemp("", "mcprt-rssmap-")
	if err != nil {
		return fmt.Errorf("making a data directory: %w", err)
	}
	defer os.RemoveAll(work)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	p, err := harness.Start(ctx, harness.Command{Name: "mcprt", Path: bin, Dir: work,
		Env: []string{"MCPRT_SERVER_MODE=TEST", "MCPRT_LOGGING_LEVEL=info", "MCPRT_TRACE_ENABLED=" + tracing,
			"MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=" + strconv.Itoa(max(inflight, 10))}})
	if err != nil {
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	defer p.Close(5 * time.Second)
	if err := p.Handshake(harness.DefaultProtocolVersion, "noop", ""); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	report := func(when string) error {
		m, err := harness.ProcMemoryMap(p.PID())
		if err != nil {
			return err
		}
		mem, err := p.Memory()
		if err != nil {
			return err
		}
		fmt.Printf("tracing=%s %-22s peak %.1f MB; %s\n", tracing, when, float64(mem.Peak)/(1<<20), m)
		return nil
	}
	if err := report("idle"); err != nil {
		return err
	}
	if _, err := p.Sequential(seq); err != nil {
		return fmt.Errorf("sequential calls: %w", err)
	}
	if _, err := p.Pipelined(pipelined, inflight); err != nil {
		return fmt.Errorf("pipelined calls: %w", err)
	}
	return report(fmt.Sprintf("after %d calls", seq+pipelined))
}
