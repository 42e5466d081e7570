// Command compare measures mcprt beside other MCP servers over stdio (make
// bench-compare). It builds four servers — mcprt (./cmd/mcprt of the
// repository, run in TEST mode with logging at info and as many concurrency
// slots as requests in flight, so that no pipelined call is refused
// RESOURCE_EXHAUSTED), the official Go SDK
// and mcp-go servers of bench/compare/servers, and the bare loop floor —
// and calls two tools on them over stdio (-tools): noop, on every server,
// and lookup20 (internal/lookup20: a realistic 20-property input schema the
// server validates), on mcprt and the two SDKs. It measures each with
// bench/harness in the same run, interleaved: every
// round starts each server afresh and measures them one after the other,
// the order rotating by one each round (A B C D, B C D A, ...) so that no
// server always goes first. Each figure is the median over the rounds.
//
// It prints, on standard output, one line per server and figure
// ("mcprt seq_p50_us 38.2"), one line per figure with mcprt's ratio to each
// other server ("ratio seq_p50_us mcprt/go-sdk 0.31 ..."; below 1 means
// mcprt's figure is smaller), and finally a Markdown table for the README
// with the machine and the date. Progress and per-round figures go to
// standard error.
//
// Over HTTP (-transports http) it measures mcprt --http beside the
// official Go SDK's handler (event-stream and JSON answers), mcp-go's
// StreamableHTTPServer and a bare net/http floor. -baseline names a second
// mcprt source tree (a detached copy of main, say), measured in the same
// rounds as mcprt-http-base, so that a change's before and after are
// compared within one interleaved run.
//
// Usage, from bench/compare:
//
//	go run ./cmd/compare [-rounds 5] [-seq 10000] [-pipelined 50000] ...
package main

import (
	"bufio"
	"bytes"
	"context"
	"debug/buildinfo"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcprt/mcprt/bench/compare/internal/lookup20"
	"github.com/mcprt/mcprt/bench/harness"
)

// server is one contestant: a server and the tool called on it.
type server struct {
	name  string // label in figures
	title string // label in the Markdown table
	pkg   string // what to build, in dir
	dir   string // where to build it
	args  []string
	env   []string
	mod   string // the library module whose version the title shows
	http  bool   // measured over Streamable HTTP, not stdio
	tool  string // the tool called ("": noop)
	targs string // its arguments ("": {})
	path  string // the built binary
	ver   string // the version of mod in the binary
}

// label is the server's row label in the Markdown table.
func (s *server) label() string {
	l := s.title
	if s.ver != "" {
		l += " " + s.ver
	}
	if s.tool != "" {
		l += " — " + s.tool
	}
	return l
}

// group is the servers measured over one transport with one tool,
// compared with its first (mcprt).
type group struct {
	transport string
	tool      string
	servers   []*server
}

// withTool returns the stdio contestants that call tool (with arguments)
// instead of noop, each named name-tool.
func withTool(servers []*server, tool, arguments string) []*server {
	out := make([]*server, 0, len(servers))
	for _, s := range servers {
		c := *s
		c.name += "-" + tool
		c.tool, c.targs = tool, arguments
		out = append(out, &c)
	}
	return out
}

func main() {
	os.Exit(run())
}

func run() int {
	var (
		rounds     = flag.Int("rounds", 5, "rounds; each measures every server once")
		transports = flag.String("transports", "stdio,http", "comma-separated transports to compare: stdio, http")
		tools      = flag.String("tools", "noop,lookup20", "comma-separated tools called over stdio: noop (every server), lookup20 (the SDKs and mcprt)")
		warmup     = flag.Int("warmup", 2000, "sequential warm-up calls per stdio measurement")
		seq        = flag.Int("seq", 20000, "measured sequential calls per stdio measurement")
		pwarmup    = flag.Int("pipelined-warmup", 5000, "pipelined warm-up calls per stdio measurement")
		pipelined  = flag.Int("pipelined", 50000, "measured pipelined calls per stdio measurement")
		inflight   = flag.Int("inflight", 32, "requests in flight in the stdio pipelined phases, and concurrent HTTP clients")
		hwarmup    = flag.Int("http-warmup", 1000, "sequential warm-up calls per HTTP measurement")
		hseq       = flag.Int("http-seq", 10000, "measured sequential calls per HTTP measurement")
		hcwarmup   = flag.Int("http-concurrent-warmup", 2000, "concurrent warm-up calls per HTTP measurement")
		hconc      = flag.Int("http-concurrent", 20000, "measured concurrent calls per HTTP measurement")
		hsessions  = flag.Int("http-sessions", 0, "sessions the concurrent HTTP clients share (0: one per client; 1: one for all)")
		rssAfter   = flag.String("rss-after", "", "comma-separated total call counts after which RSS is sampled over stdio (empty: skip)")
		root       = flag.String("root", "", "the mcprt repository (default: where go.mod's replace points)")
		baseline   = flag.String("baseline", "", "another mcprt source tree (e.g. an export of main) measured beside -root, as mcprt-base over stdio and mcprt-http-base over HTTP, for before → after ratios in one interleaved run")
		noSDKs     = flag.Bool("no-sdks", false, "leave out the Go SDK and mcp-go (mcprt, -baseline and the bare loop only)")
	)
	flag.Parse()
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "compare:", err)
		return 1
	}
	checkpoints, err := harness.ParseCounts(*rssAfter)
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		return 2
	}
	var doStdio, doHTTP bool
	for t := range strings.SplitSeq(*transports, ",") {
		switch strings.TrimSpace(t) {
		case "stdio":
			doStdio = true
		case "http":
			doHTTP = true
		case "":
		default:
			fmt.Fprintf(os.Stderr, "compare: -transports wants stdio and/or http, got %q\n", *transports)
			return 2
		}
	}
	var doNoop, doLookup bool
	for t := range strings.SplitSeq(*tools, ",") {
		switch strings.TrimSpace(t) {
		case "noop":
			doNoop = true
		case lookup20.Name:
			doLookup = true
		case "":
		default:
			fmt.Fprintf(os.Stderr, "compare: -tools wants noop and/or lookup20, got %q\n", *tools)
			return 2
		}
	}
	if doStdio && !doNoop && !doLookup {
		fmt.Fprintln(os.Stderr, "compare: -tools names no tool")
		return 2
	}
	if !doStdio && !doHTTP {
		fmt.Fprintln(os.Stderr, "compare: -transports names no transport")
		return 2
	}
	here, err := goOutput("", "env", "GOMOD")
	if err != nil || !strings.HasSuffix(here, "go.mod") || filepath.Base(filepath.Dir(here)) != "compare" {
		return fail(fmt.Errorf("run me from the bench/compare module (go env GOMOD = %q)", here))
	}
	here = filepath.Dir(here)
	if *root == "" {
		if *root, err = goOutput(here, "list", "-m", "-f", "{{.Dir}}", "github.com/mcprt/mcprt"); err != nil {
			return fail(err)
		}
	}
	// mcprt keeps its store (traces, memory) in a data directory of this
	// run's own, removed at the end: nothing is left in the source tree.
	dataDir, err := os.MkdirTemp("", "mcprt-compare-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dataDir)
	mcprtEnv := []string{"MCPRT_SERVER_MODE=TEST", "MCPRT_LOGGING_LEVEL=info", "MCPRT_AACP_DATA_DIR=" + dataDir,
		"MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=" + strconv.Itoa(max(*inflight, 10))}
	var groups []group
	if doStdio {
		peers := []*server{
			{name: "mcprt", title: "mcprt (TEST mode, logging at info)", pkg: "./cmd/mcprt", dir: *root, env: mcprtEnv},
		}
		if *baseline != "" {
			peers = append(peers, &server{name: "mcprt-base", title: "mcprt built from " + *baseline + " (TEST mode, logging at info)",
				pkg: "./cmd/mcprt", dir: *baseline, env: mcprtEnv})
		}
		if !*noSDKs {
			peers = append(peers,
				&server{name: "go-sdk", title: "official Go SDK", pkg: "./servers/gosdk", dir: here,
					mod: "github.com/modelcontextprotocol/go-sdk"},
				&server{name: "mcp-go", title: "mcp-go (input validation on)", pkg: "./servers/mcpgo", dir: here, mod: "github.com/mark3labs/mcp-go"})
		}
		if doNoop {
			bare := &server{name: "bare", title: "bare loop: bufio lines + encoding/json decode + canned reply", pkg: "./servers/bare", dir: here}
			groups = append(groups, group{"stdio", "noop", append(slices.Clone(peers), bare)})
		}
		if doLookup {
			// The realistic call: the bare loop has no schema to check, so
			// it sits this one out.
			groups = append(groups, group{"stdio", lookup20.Name, withTool(peers, lookup20.Name, lookup20.Arguments)})
		}
	}
	if doHTTP {
		groups = append(groups, group{"http", "noop", []*server{
			{name: "mcprt-http", title: "mcprt --http (TEST mode, logging at info)", pkg: "./cmd/mcprt", dir: *root, http: true,
				args: []string{"--http"}, env: append(slices.Clone(mcprtEnv), "MCPRT_TRANSPORT_HTTP_ADDR="+harness.AddrPlaceholder)},
			{name: "go-sdk-http", title: "official Go SDK, NewStreamableHTTPHandler (default options: event-stream answers)",
				pkg: "./servers/gosdkhttp", dir: here, http: true, args: []string{"-addr", harness.AddrPlaceholder},
				mod: "github.com/modelcontextprotocol/go-sdk"},
			{name: "go-sdk-http-json", title: "official Go SDK, NewStreamableHTTPHandler with JSONResponse",
				pkg: "./servers/gosdkhttp", dir: here, http: true, args: []string{"-addr", harness.AddrPlaceholder, "-json"},
				mod: "github.com/modelcontextprotocol/go-sdk"},
			{name: "mcp-go-http", title: "mcp-go, NewStreamableHTTPServer (input validation on)", pkg: "./servers/mcpgohttp",
				dir: here, http: true, args: []string{"-addr", harness.AddrPlaceholder}, mod: "github.com/mark3labs/mcp-go"},
			{name: "bare-http", title: "bare net/http handler: encoding/json decode + canned reply", pkg: "./servers/barehttp",
				dir: here, http: true, args: []string{"-addr", harness.AddrPlaceholder}},
		}})
		if *baseline != "" {
			g := &groups[len(groups)-1]
			g.servers = append(g.servers, &server{name: "mcprt-http-base", title: "mcprt --http, baseline tree " + *baseline,
				pkg: "./cmd/mcprt", dir: *baseline, http: true, args: g.servers[0].args, env: g.servers[0].env})
		}
	}
	var servers []*server
	for _, g := range groups {
		servers = append(servers, g.servers...)
	}
	// Each mcprt server gets a data directory of its own: a baseline tree
	// with an older store schema must not open (and refuse) the store the
	// other one migrated, and no server may measure another's traces.
	for _, s := range servers {
		for i, kv := range s.env {
			if strings.HasPrefix(kv, "MCPRT_AACP_DATA_DIR=") {
				s.env = slices.Clone(s.env)
				s.env[i] = "MCPRT_AACP_DATA_DIR=" + filepath.Join(dataDir, s.name)
			}
		}
	}
	bin, err := os.MkdirTemp("", "mcprt-compare-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(bin)
	built := map[string]*server{} // by dir and package: each is built once
	for _, s := range servers {
		if b, ok := built[s.dir+"\x00"+s.pkg]; ok {
			s.path, s.ver = b.path, b.ver
			continue
		}
		if err := s.build(bin); err != nil {
			return fail(err)
		}
		built[s.dir+"\x00"+s.pkg] = s
	}

	opts := harness.Options{Warmup: *warmup, Sequential: *seq, PipelinedWarmup: *pwarmup,
		Pipelined: *pipelined, InFlight: *inflight, RSSAfter: checkpoints, Timeout: 20 * time.Minute}
	hopts := harness.HTTPOptions{Warmup: *hwarmup, Sequential: *hseq, ConcurrentWarmup: *hcwarmup,
		Concurrent: *hconc, Clients: *inflight, Sessions: *hsessions, Timeout: 20 * time.Minute}
	// values[server][figure] holds one value per round; order[transport]
	// keeps the figures in the harness's order.
	values := map[string]map[string][]float64{}
	order := map[string][]string{}
	load := harness.LoadAverage()
	start := time.Now()
	for r := range *rounds {
		for k := range servers {
			s := servers[(r+k)%len(servers)]
			figures, err := s.measure(opts, hopts)
			if err != nil {
				return fail(fmt.Errorf("round %d: %w", r+1, err))
			}
			transport := "stdio/" + s.tool
			if s.http {
				transport = "http"
			}
			var line strings.Builder
			fmt.Fprintf(&line, "# round %d/%d %-7s", r+1, *rounds, s.name)
			for _, f := range figures {
				if values[s.name] == nil {
					values[s.name] = map[string][]float64{}
				}
				if !slices.Contains(order[transport], f.Name) {
					order[transport] = append(order[transport], f.Name)
				}
				values[s.name][f.Name] = append(values[s.name][f.Name], f.Value)
				fmt.Fprintf(&line, " %s=%s", f.Name, f.Format())
			}
			fmt.Fprintln(os.Stderr, line.String())
		}
	}
	fmt.Fprintf(os.Stderr, "# %d rounds in %.0f s; load average before: %s, after: %s\n",
		*rounds, time.Since(start).Seconds(), load, harness.LoadAverage())

	med := func(server, figure string) float64 { return median(values[server][figure]) }
	groupKey := func(g group) string {
		if g.transport == "http" {
			return "http"
		}
		if g.tool == "noop" {
			return "stdio/"
		}
		return "stdio/" + g.tool
	}
	for _, g := range groups {
		first := g.servers[0].name
		for _, fig := range order[groupKey(g)] {
			for _, s := range g.servers {
				fmt.Printf("%s %s %s\n", s.name, fig, harness.Figure{Name: fig, Value: med(s.name, fig)}.Format())
			}
			var line strings.Builder
			fmt.Fprintf(&line, "ratio %s", fig)
			for _, s := range g.servers[1:] {
				fmt.Fprintf(&line, " %s/%s %s", first, s.name, ratio(med(first, fig), med(s.name, fig)))
			}
			fmt.Println(line.String())
		}
	}
	if doStdio && doNoop && doLookup {
		// The goal of the realistic call: lookup20 costs mcprt at most 2.5x
		// its own no-op and at most half of what it costs mcp-go.
		for _, fig := range []string{"server_cpu_us_per_call_seq", "server_cpu_us_per_call_pipelined"} {
			own := med("mcprt-lookup20", fig) / med("mcprt", fig)
			peer := med("mcprt-lookup20", fig) / med("mcp-go-lookup20", fig)
			fmt.Printf("goal lookup20 %s mcprt-lookup20/mcprt %s %s (at most 2.5) mcprt-lookup20/mcp-go-lookup20 %s %s (at most 0.5)\n",
				fig, ratio(med("mcprt-lookup20", fig), med("mcprt", fig)), verdict(own <= 2.5),
				ratio(med("mcprt-lookup20", fig), med("mcp-go-lookup20", fig)), verdict(peer <= 0.5))
		}
	}
	if doHTTP {
		// The goals of the HTTP transport: a no-op call costs mcprt at most
		// half the CPU it costs the official Go SDK's handler, and at most
		// 0.7x what it costs mcp-go's.
		for _, fig := range []string{"server_cpu_us_per_call_seq", "server_cpu_us_per_call_concurrent"} {
			r := med("mcprt-http", fig) / med("mcp-go-http", fig)
			fmt.Printf("goal %s mcprt-http/mcp-go-http %s %s (at most 0.7)\n", fig,
				ratio(med("mcprt-http", fig), med("mcp-go-http", fig)), verdict(r <= 0.7))
			var line strings.Builder
			fmt.Fprintf(&line, "goal %s (mcprt at most 0.5x the official Go SDK's)", fig)
			for _, other := range []string{"go-sdk-http", "go-sdk-http-json"} {
				r := med("mcprt-http", fig) / med(other, fig)
				verdict := "met"
				if !(r <= 0.5) {
					verdict = "missed"
				}
				fmt.Fprintf(&line, " mcprt-http/%s %s %s", other, ratio(med("mcprt-http", fig), med(other, fig)), verdict)
			}
			fmt.Println(line.String())
		}
	}

	goVersion, _ := goOutput(here, "env", "GOVERSION")
	machine := fmt.Sprintf("Measured %s on %d cores (nproc) of %s, %s %s/%s; bench/harness, medians of %d interleaved rounds",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), cpuModel(), goVersion, runtime.GOOS, runtime.GOARCH, *rounds)
	for _, g := range groups {
		fmt.Println()
		if g.transport == "stdio" {
			fmt.Println("| server | sequential p50 / p95 | pipelined (32 in flight) calls/s (p95) | server CPU per call (sequential / pipelined) | peak RSS |")
			fmt.Println("|---|---|---|---|---|")
			for _, s := range g.servers {
				fmt.Printf("| %s | %s / %s µs | %s (%s µs) | %s / %s µs | %s MB |\n", s.label(),
					short(med(s.name, "seq_p50_us")), short(med(s.name, "seq_p95_us")),
					kilo(med(s.name, "pipelined_calls_per_s")), short(med(s.name, "pipelined_p95_us")),
					short(med(s.name, "server_cpu_us_per_call_seq")), short(med(s.name, "server_cpu_us_per_call_pipelined")),
					short(med(s.name, "peak_rss_mb")))
			}
			fmt.Println()
			fmt.Printf("%s, each round %d sequential calls after %d warm-up and %d pipelined calls (%d in flight) after %d warm-up "+
				"per server, over stdio.\n", machine, *seq, *warmup, *pipelined, *inflight, *pwarmup)
			continue
		}
		sessions := "each on a session of its own"
		if *hsessions > 0 && *hsessions < *inflight {
			sessions = fmt.Sprintf("sharing %d session(s)", *hsessions)
		}
		fmt.Printf("| server (Streamable HTTP) | sequential p50 / p95 | %d concurrent clients: calls/s (p95) | server CPU per call (sequential / concurrent) | peak RSS |\n", *inflight)
		fmt.Println("|---|---|---|---|---|")
		for _, s := range g.servers {
			fmt.Printf("| %s | %s / %s µs | %s (%s µs) | %s / %s µs | %s MB |\n", s.label(),
				short(med(s.name, "seq_p50_us")), short(med(s.name, "seq_p95_us")),
				kilo(med(s.name, "concurrent_calls_per_s")), short(med(s.name, "concurrent_p95_us")),
				short(med(s.name, "server_cpu_us_per_call_seq")), short(med(s.name, "server_cpu_us_per_call_concurrent")),
				short(med(s.name, "peak_rss_mb")))
		}
		fmt.Println()
		fmt.Printf("%s, each round %d sequential calls on one session after %d warm-up and %d concurrent calls from %d "+
			"net/http keep-alive clients (%s) after %d warm-up per server, over loopback HTTP/1.1.\n",
			machine, *hseq, *hwarmup, *hconc, *inflight, sessions, *hcwarmup)
	}
	return 0
}

// measure runs the server once over its transport and returns its
// figures. A server that does not exit cleanly is reported on standard
// error; its figures count.
func (s *server) measure(opts harness.Options, hopts harness.HTTPOptions) ([]harness.Figure, error) {
	cmd := harness.Command{Name: s.name, Path: s.path, Args: s.args, Env: s.env}
	opts.Tool, opts.Arguments = s.tool, s.targs
	if s.http {
		res, err := harness.RunHTTP(context.Background(), harness.HTTPCommand{Command: cmd}, hopts)
		if err != nil {
			return nil, err
		}
		if res.ExitErr != nil {
			fmt.Fprintf(os.Stderr, "# %s did not exit cleanly on SIGTERM: %v\n", s.name, res.ExitErr)
		}
		return res.Figures(), nil
	}
	res, err := harness.Run(context.Background(), cmd, opts)
	if err != nil {
		return nil, err
	}
	return res.Figures(), nil
}

// build compiles the server into bin and names its library version in its
// title.
func (s *server) build(bin string) error {
	s.path = filepath.Join(bin, s.name)
	start := time.Now()
	cmd := exec.Command("go", "build", "-o", s.path, s.pkg)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // every server static, built alike
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s in %s: %v\n%s", s.pkg, s.dir, err, out)
	}
	if s.mod != "" {
		info, err := buildinfo.ReadFile(s.path)
		if err != nil {
			return err
		}
		for _, d := range info.Deps {
			if d.Path == s.mod {
				s.ver = d.Version
			}
		}
	}
	fmt.Fprintf(os.Stderr, "# built %s (%s) in %.1f s\n", s.name, s.label(), time.Since(start).Seconds())
	return nil
}

// goOutput runs the go command in dir and returns its trimmed output.
func goOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// verdict names whether a goal was met.
func verdict(met bool) string {
	if met {
		return "met"
	}
	return "missed"
}

// median returns the median of v (the mean of the middle two for an even
// count), or 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// ratio formats a/b with three significant digits.
func ratio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return strconv.FormatFloat(a/b, 'g', 3, 64)
}

// short formats a figure for the table: one decimal below 100.
func short(v float64) string {
	if v < 100 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// kilo formats calls per second as "51.2 k".
func kilo(v float64) string {
	return strconv.FormatFloat(v/1000, 'f', 1, 64) + " k"
}

// cpuModel returns the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
