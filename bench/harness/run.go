package harness

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Options sizes a Run. A zero field means its default; a negative count
// skips that phase.
type Options struct {
	// ProtocolVersion is the revision asked for in initialize
	// (DefaultProtocolVersion).
	ProtocolVersion string
	// Tool is the tool measured ("noop").
	Tool string
	// Arguments is the JSON object sent as the call's arguments ("{}").
	Arguments string
	// Warmup is the number of sequential calls made, and not measured,
	// before the sequential phase (2,000).
	Warmup int
	// Sequential is the number of measured sequential calls (20,000).
	Sequential int
	// PipelinedWarmup is the number of pipelined calls made, and not
	// measured, before the pipelined phase (10,000).
	PipelinedWarmup int
	// Pipelined is the number of measured pipelined calls (100,000).
	Pipelined int
	// InFlight is the number of requests kept in flight in the pipelined
	// phases (32).
	InFlight int
	// RSSAfter lists call counts, ascending, at which the server's
	// resident set is sampled: after the measured phases the harness starts
	// the server afresh and makes pipelined calls until it has answered
	// that many calls (the handshake's checked call included). Empty means
	// none.
	RSSAfter []int64
	// Timeout bounds the whole run; the server is killed when it passes
	// (10 minutes).
	Timeout time.Duration
	// CloseGrace is how long the server may take to exit once its input is
	// closed (5 seconds).
	CloseGrace time.Duration
}

func (o *Options) defaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Warmup, 2000)
	def(&o.Sequential, 20000)
	def(&o.PipelinedWarmup, 10000)
	def(&o.Pipelined, 100000)
	def(&o.InFlight, 32)
	if o.Tool == "" {
		o.Tool = "noop"
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.CloseGrace <= 0 {
		o.CloseGrace = 5 * time.Second
	}
}

// Result is what Run measured on one server.
type Result struct {
	// Name is the server's label (Command.Name).
	Name string
	// Sequential is the sequential phase (zero when skipped).
	Sequential Phase
	// Pipelined is the pipelined phase (zero when skipped).
	Pipelined Phase
	// PeakRSS is the server's peak resident set (VmHWM) after the
	// sequential and pipelined phases, in bytes.
	PeakRSS int64
	// RSSAfter holds the samples asked for by Options.RSSAfter, taken on a
	// second process.
	RSSAfter []RSSSample
	// ExitErr is the server's exit error once its input was closed (nil
	// for exit status 0). It does not fail the run.
	ExitErr error
}

// RSSSample is the server's memory after a number of calls.
type RSSSample struct {
	// Calls is the number of calls the server had answered.
	Calls int64
	// Memory is its resident set then.
	Memory
}

// Run launches cmd, does the handshake and measures opts.Tool: sequential
// calls after a warm-up, pipelined calls after a warm-up, and the peak
// resident set; it then closes the server's input and waits for it to
// exit. When opts.RSSAfter is set, it then launches the server again and
// makes pipelined calls on the fresh process, sampling its resident set
// when it has answered each of those numbers of calls.
func Run(ctx context.Context, cmd Command, opts Options) (*Result, error) {
	opts.defaults()
	if cmd.Name == "" {
		cmd.Name = cmd.Path
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	res := &Result{Name: cmd.Name}
	err := session(ctx, cmd, opts, func(p *Process) error { return measure(p, opts, res) }, &res.ExitErr)
	if err == nil && len(opts.RSSAfter) > 0 {
		var exitErr error
		err = session(ctx, cmd, opts, func(p *Process) error { return sampleRSS(p, opts, res) }, &exitErr)
		if res.ExitErr == nil {
			res.ExitErr = exitErr
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (the run's timeout of %v passed)", err, opts.Timeout)
		}
		return nil, err
	}
	return res, nil
}

// session starts the server, shakes hands, runs f, and closes it, storing
// its exit error in exitErr.
func session(ctx context.Context, cmd Command, opts Options, f func(*Process) error, exitErr *error) error {
	p, err := Start(ctx, cmd)
	if err != nil {
		return err
	}
	err = p.Handshake(opts.ProtocolVersion, opts.Tool, opts.Arguments)
	if err == nil {
		err = f(p)
	}
	*exitErr = p.Close(opts.CloseGrace)
	return err
}

func measure(p *Process, opts Options, res *Result) error {
	var err error
	if opts.Sequential > 0 {
		if opts.Warmup > 0 {
			if _, err = p.Sequential(opts.Warmup); err != nil {
				return err
			}
		}
		if res.Sequential, err = p.Sequential(opts.Sequential); err != nil {
			return err
		}
	}
	if opts.Pipelined > 0 {
		if opts.PipelinedWarmup > 0 {
			if _, err = p.Pipelined(opts.PipelinedWarmup, opts.InFlight); err != nil {
				return err
			}
		}
		if res.Pipelined, err = p.Pipelined(opts.Pipelined, opts.InFlight); err != nil {
			return err
		}
	}
	mem, err := p.Memory()
	if err != nil {
		return err
	}
	res.PeakRSS = mem.Peak
	return nil
}

// sampleRSS makes pipelined calls until the server has answered each
// opts.RSSAfter count and samples its memory there.
func sampleRSS(p *Process, opts Options, res *Result) error {
	for _, target := range opts.RSSAfter {
		for p.Calls() < target {
			chunk := min(target-p.Calls(), 200000)
			if _, err := p.Pipelined(int(chunk), opts.InFlight); err != nil {
				return err
			}
		}
		mem, err := p.Memory()
		if err != nil {
			return err
		}
		res.RSSAfter = append(res.RSSAfter, RSSSample{Calls: p.Calls(), Memory: mem})
	}
	return nil
}

// Figure is one named number. The name ends in its unit (_us, _per_s,
// _mb); MB are 2^20 bytes.
type Figure struct {
	// Name is the figure's name, such as seq_p50_us.
	Name string
	// Value is the figure in the unit its name ends with.
	Value float64
}

// Format returns the value with one decimal, or none from 1,000 up.
func (f Figure) Format() string {
	if f.Value >= 1000 || f.Value <= -1000 {
		return strconv.FormatFloat(f.Value, 'f', 0, 64)
	}
	return strconv.FormatFloat(f.Value, 'f', 1, 64)
}

// Figures returns the result's figures in a fixed order, skipping the
// phases that did not run. The server_cpu figures come from
// Process.CPUTime (per-thread run time, nanosecond resolution); the _stat
// ones from utime+stime in /proc/<pid>/stat, whose 10 ms ticks make them
// coarse for short phases (a cross-check):
//
//	seq_p50_us seq_p95_us seq_p99_us seq_mean_us
//	pipelined_calls_per_s pipelined_p50_us pipelined_p95_us pipelined_p99_us
//	server_cpu_us_per_call_seq server_cpu_us_per_call_pipelined
//	server_cpu_us_per_call_seq_stat server_cpu_us_per_call_pipelined_stat
//	peak_rss_mb
//	rss_mb_after_<N>_calls peak_rss_mb_after_<N>_calls   (per RSSAfter sample)
//	rss_growth_mb_<first N>_to_<last N>                    (two samples or more)
func (r *Result) Figures() []Figure {
	var out []Figure
	add := func(name string, v float64) { out = append(out, Figure{name, v}) }
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	mb := func(b int64) float64 { return float64(b) / (1 << 20) }
	if s := r.Sequential; s.Calls > 0 {
		add("seq_p50_us", us(s.P50))
		add("seq_p95_us", us(s.P95))
		add("seq_p99_us", us(s.P99))
		add("seq_mean_us", us(s.Mean))
	}
	if pl := r.Pipelined; pl.Calls > 0 {
		add("pipelined_calls_per_s", pl.CallsPerSecond())
		add("pipelined_p50_us", us(pl.P50))
		add("pipelined_p95_us", us(pl.P95))
		add("pipelined_p99_us", us(pl.P99))
	}
	if s := r.Sequential; s.Calls > 0 {
		add("server_cpu_us_per_call_seq", us(s.CPUPerCall()))
	}
	if pl := r.Pipelined; pl.Calls > 0 {
		add("server_cpu_us_per_call_pipelined", us(pl.CPUPerCall()))
	}
	if s := r.Sequential; s.Calls > 0 {
		add("server_cpu_us_per_call_seq_stat", us(s.StatCPUPerCall()))
	}
	if pl := r.Pipelined; pl.Calls > 0 {
		add("server_cpu_us_per_call_pipelined_stat", us(pl.StatCPUPerCall()))
	}
	add("peak_rss_mb", mb(r.PeakRSS))
	for _, s := range r.RSSAfter {
		n := strconv.FormatInt(s.Calls, 10)
		add("rss_mb_after_"+n+"_calls", mb(s.RSS))
		add("peak_rss_mb_after_"+n+"_calls", mb(s.Peak))
	}
	if n := len(r.RSSAfter); n >= 2 {
		first, last := r.RSSAfter[0], r.RSSAfter[n-1]
		add("rss_growth_mb_"+strconv.FormatInt(first.Calls, 10)+"_to_"+strconv.FormatInt(last.Calls, 10),
			mb(last.RSS-first.RSS))
	}
	return out
}

// ParseCounts parses a comma-separated list of ascending positive call
// counts, such as "100000,1000000" (underscores allowed: "100_000"), as the
// -rss-after flags of the benchmark commands take it.
func ParseCounts(s string) ([]int64, error) {
	var out []int64
	for f := range strings.SplitSeq(s, ",") {
		f = strings.ReplaceAll(strings.TrimSpace(f), "_", "")
		if f == "" {
			continue
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n <= 0 || (len(out) > 0 && n <= out[len(out)-1]) {
			return nil, fmt.Errorf("-rss-after wants ascending positive counts, got %q", s)
		}
		out = append(out, n)
	}
	return out, nil
}
