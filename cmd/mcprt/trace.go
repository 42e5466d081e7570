package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/trace"
	"github.com/mcprt/mcprt/store"
)

// traceUsage describes the trace subcommand.
const traceUsage = `mcprt trace — print the traces the server recorded.

Usage:
  mcprt trace [flags] show TRACE_ID   print a trace's delegation tree with durations
  mcprt trace [flags] list [-n N]     list recent traces

Flags (before or after the command):
  --data-dir DIR   the data directory (default: aacp.dataDir from --config,
                   MCPRT_CONFIG or MCPRT_AACP_DATA_DIR, else .mcprt); the
                   store is DIR/store unless store.dir says otherwise
  --config FILE    the configuration file to read from
  -n N             how many traces list shows (default 20)

A trace another process is writing becomes readable within about
trace.flushIntervalMs of its calls. Exit codes: 0 done, 1 no such trace or
store, 2 bad usage, 78 invalid configuration.
`

// Exit code and bound of traceCommand (the others are main's).
const (
	exitFailure  = 1
	traceTimeout = 30 * time.Second
)

// traceCommand runs "mcprt trace ARGS" and returns the exit code: 0, 1
// when the trace or the store does not exist or cannot be read, 2 for bad
// usage (no command included: the usage goes to stderr), 78 for an
// invalid configuration (logConfig reports it). Flags may come before,
// between and after the command's words.
func traceCommand(args []string, stdout, stderr io.Writer, environ []string, version string, logConfig func(error)) int {
	fs := flag.NewFlagSet("mcprt trace", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	configPath := fs.String("config", "", "path of a JSON configuration file")
	dataDir := fs.String("data-dir", "", "the data directory")
	limit := fs.Int("n", 20, "number of traces to list")
	help := fs.Bool("help", false, "print help")
	var pos []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, traceUsage)
				return exitOK
			}
			fmt.Fprintf(stderr, "mcprt trace: %v\n%s", err, traceUsage)
			return exitUsage
		}
		if rest = fs.Args(); len(rest) == 0 {
			break
		}
		pos, rest = append(pos, rest[0]), rest[1:]
	}
	if *help || len(pos) == 1 && pos[0] == "help" {
		fmt.Fprint(stdout, traceUsage)
		return exitOK
	}
	if len(pos) == 0 {
		fmt.Fprintf(stderr, "mcprt trace: no command given; use show or list\n%s", traceUsage)
		return exitUsage
	}
	verb := pos[0]
	switch {
	case verb == "show" && len(pos) != 2:
		fmt.Fprintf(stderr, "mcprt trace show: give exactly one trace id (mcprt trace list shows them)\n%s", traceUsage)
		return exitUsage
	case verb == "list" && len(pos) != 1:
		fmt.Fprintf(stderr, "mcprt trace list: unexpected argument %q\n%s", pos[1], traceUsage)
		return exitUsage
	case verb != "show" && verb != "list":
		fmt.Fprintf(stderr, "mcprt trace: unknown command %q; use show or list\n%s", verb, traceUsage)
		return exitUsage
	}
	path := *configPath
	if path == "" {
		path = lookupEnv(environ, "MCPRT_CONFIG")
	}
	all, err := config.Load(path, environ, version)
	base, cfg := all.Base, all.Domain
	if err != nil {
		logConfig(err)
		return exitConfig
	}
	if *dataDir != "" {
		base.AACP.DataDir = *dataDir
	}
	dir := cfg.StoreDir(base.AACP.DataDir)
	if _, err := os.Stat(dir + string(os.PathSeparator) + store.FileName); err != nil {
		fmt.Fprintf(stderr, "mcprt trace: no store at %s (nothing was recorded there yet; pass --data-dir DIR, the server's aacp.dataDir, or set store.dir / MCPRT_STORE_DIR to its store)\n", dir)
		return exitFailure
	}
	db, err := store.New(store.Options{Dir: dir, BusyTimeout: cfg.Store.BusyTimeout})
	if err != nil {
		fmt.Fprintf(stderr, "mcprt trace: %v\n", err)
		return exitFailure
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), traceTimeout)
	defer cancel()
	svc := trace.NewService(db.Traces(), nil).WithLinger(cfg.Trace.FlushInterval)
	if verb == "list" {
		return listTraces(ctx, svc, *limit, stdout, stderr)
	}
	id := pos[1]
	evs, truncated, err := svc.Get(ctx, id)
	if err != nil {
		fmt.Fprintf(stderr, "mcprt trace show: %s\n", message(err))
		return exitFailure
	}
	fmt.Fprint(stdout, trace.Render(trace.Tree(id, evs)))
	if truncated {
		fmt.Fprintf(stdout, "(only the first %d steps are shown)\n", trace.MaxTraceEvents)
	}
	return exitOK
}

func listTraces(ctx context.Context, svc *trace.Service, limit int, stdout, stderr io.Writer) int {
	sums, total, err := svc.List(ctx, trace.ListQuery{Limit: limit})
	if err != nil {
		fmt.Fprintf(stderr, "mcprt trace list: %s\n", message(err))
		return exitFailure
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TRACE\tSTARTED\tSTEPS\tFAILED\tDURATION\tFIRST TOOL")
	for _, s := range sums {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f ms\t%s\n", s.TraceID, s.Start.Local().Format(time.DateTime), s.Events, s.Failures,
			float64(s.End.Sub(s.Start).Microseconds())/1000, s.RootTool)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "%d of %d traces\n", len(sums), total)
	return exitOK
}

func message(err error) string {
	var ce *core.Error
	if errors.As(err, &ce) {
		return ce.Message
	}
	return err.Error()
}
