package domaintools

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/trace"
	"github.com/mcprt/mcprt/store"
)

// TraceUsage describes the trace subcommand.
const TraceUsage = `Usage:
  mcprt trace show [--config FILE] TRACE_ID   print a trace's delegation tree with durations
  mcprt trace list [--config FILE] [-n N]     list recent traces

The store is the one the server uses (store.dir, or {aacp.dataDir}/store),
from the same environment and configuration file.
`

// Exit codes of TraceCommand.
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitConfig   = 78
	traceTimeout = 30 * time.Second
)

// TraceCommand runs "mcprt trace ARGS" and returns the exit code: 0, 1
// when the trace or the store does not exist or cannot be read, 2 for bad
// usage, 78 for an invalid configuration (logConfig reports it).
func TraceCommand(args []string, stdout, stderr io.Writer, environ []string, version string, logConfig func(error),
	extra ...func(*core.Loader) error) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, TraceUsage)
		return exitOK
	}
	verb := args[0]
	fs := flag.NewFlagSet("mcprt trace "+verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	configPath := fs.String("config", "", "path of a JSON configuration file")
	limit := fs.Int("n", 20, "number of traces to list")
	if err := fs.Parse(args[1:]); err != nil {
		fmt.Fprintf(stderr, "mcprt trace %s: %v\n%s", verb, err, TraceUsage)
		return exitUsage
	}
	switch {
	case verb == "show" && fs.NArg() != 1:
		fmt.Fprintf(stderr, "mcprt trace show: give exactly one trace id (mcprt trace list shows them)\n%s", TraceUsage)
		return exitUsage
	case verb == "list" && fs.NArg() != 0:
		fmt.Fprintf(stderr, "mcprt trace list: unexpected argument %q\n%s", fs.Arg(0), TraceUsage)
		return exitUsage
	case verb != "show" && verb != "list":
		fmt.Fprintf(stderr, "mcprt trace: unknown command %q; use show or list\n%s", verb, TraceUsage)
		return exitUsage
	}
	path := *configPath
	if path == "" {
		path = lookup(environ, "MCPRT_CONFIG")
	}
	base, cfg, err := LoadConfig(path, environ, version, extra...)
	if err != nil {
		logConfig(err)
		return exitConfig
	}
	dir := cfg.StoreDir(base.AACP.DataDir)
	if _, err := os.Stat(dir + string(os.PathSeparator) + store.FileName); err != nil {
		fmt.Fprintf(stderr, "mcprt trace: no store at %s (nothing was recorded there yet; set store.dir or MCPRT_STORE_DIR to the server's store)\n", dir)
		return exitFailure
	}
	db, err := store.New(store.Options{Dir: dir, BusyTimeout: time.Duration(cfg.Store.BusyTimeoutMs) * time.Millisecond})
	if err != nil {
		fmt.Fprintf(stderr, "mcprt trace: %v\n", err)
		return exitFailure
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), traceTimeout)
	defer cancel()
	svc := trace.NewService(db.Traces(), nil)
	if verb == "list" {
		return listTraces(ctx, svc, *limit, stdout, stderr)
	}
	id := fs.Arg(0)
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

func lookup(environ []string, name string) string {
	for _, kv := range environ {
		if len(kv) > len(name) && kv[:len(name)] == name && kv[len(name)] == '=' {
			return kv[len(name)+1:]
		}
	}
	return ""
}
