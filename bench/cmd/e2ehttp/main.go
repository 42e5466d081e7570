// Command e2ehttp is the end-to-end Streamable HTTP benchmark of mcprt
// (make bench-e2e-http): it builds the real mcprt binary, starts it with
// --http on a free loopback port, in TEST mode with logging at info to
// /dev/null, opens the sessions and measures the noop tool with
// bench/harness's HTTP client (net/http, keep-alive, loopback only), then
// prints one line per figure:
//
//	mcprt-http seq_p50_us 95.0
//	mcprt-http concurrent_calls_per_s 14000
//	mcprt-http server_cpu_us_per_call_concurrent 40.1
//	mcprt-http peak_rss_mb 14.2
//
// The sequential phase makes one call at a time on one session; the
// concurrent phase runs -clients clients (32), each making one call at a
// time over a keep-alive connection of its own, each on a session of its
// own by default (-sessions 1: all on one session, concurrent POSTs). The
// server gets as many concurrency slots as there are clients.
//
// Usage:
//
//	go run ./bench/cmd/e2ehttp [flags]
//
// With -cpuprofile FILE, the binary is built with a build overlay that
// adds a profiling hook to its main package (the repository's files are
// not touched): the server writes a CPU profile of the measured concurrent
// phase (or, with -profile-phase seq, the sequential one) to FILE, for go tool pprof -top BINARY FILE (the binary is kept
// beside FILE, as FILE.bin). -bin measures an existing binary instead of
// building one (no profile then). Progress goes to standard error,
// figures to standard output.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcprt/mcprt/bench/harness"
)

func main() {
	os.Exit(run())
}

func run() int {
	var (
		root     = flag.String("root", "", "the mcprt repository to build (default: found from the working directory)")
		bin      = flag.String("bin", "", "measure this mcprt binary instead of building one")
		warmup   = flag.Int("warmup", 2000, "sequential warm-up calls")
		seq      = flag.Int("seq", 20000, "measured sequential calls")
		cwarmup  = flag.Int("concurrent-warmup", 5000, "concurrent warm-up calls")
		conc     = flag.Int("concurrent", 50000, "measured concurrent calls")
		clients  = flag.Int("clients", 32, "concurrent clients, each making one call at a time")
		sessions = flag.Int("sessions", 0, "sessions the clients share (0: one per client; 1: one for all)")
		level    = flag.String("log-level", "info", "MCPRT_LOGGING_LEVEL of the server")
		slots    = flag.Int("max-concurrent", 0, "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS of the server (0: the -clients count)")
		proto    = flag.String("protocol-version", harness.DefaultProtocolVersion, "protocol revision asked for in initialize")
		profile  = flag.String("cpuprofile", "", "write a CPU profile of the server during a measured phase to this file")
		phase    = flag.String("profile-phase", "concurrent", "the phase -cpuprofile profiles: seq or concurrent")
	)
	flag.Parse()
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "e2ehttp:", err)
		return 1
	}
	if *slots <= 0 {
		*slots = max(*clients, 10)
	}
	if *phase != "seq" && *phase != "concurrent" {
		fmt.Fprintf(os.Stderr, "e2ehttp: -profile-phase is seq or concurrent, not %q\n", *phase)
		return 2
	}
	if *profile != "" && *bin != "" {
		fmt.Fprintln(os.Stderr, "e2ehttp: -cpuprofile builds its own binary; drop -bin")
		return 2
	}
	if *profile != "" {
		abs, err := filepath.Abs(*profile)
		if err != nil {
			return fail(err)
		}
		*profile = abs
	}
	path := *bin
	if path == "" {
		dir, err := os.MkdirTemp("", "mcprt-e2ehttp-")
		if err != nil {
			return fail(err)
		}
		defer os.RemoveAll(dir)
		if path, err = build(*root, dir, *profile != ""); err != nil {
			return fail(err)
		}
	}
	env := []string{"MCPRT_SERVER_MODE=TEST", "MCPRT_LOGGING_LEVEL=" + *level,
		"MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=" + strconv.Itoa(*slots),
		"MCPRT_TRANSPORT_HTTP_ADDR=" + harness.AddrPlaceholder}
	if *profile != "" {
		env = append(env, profileEnv+"="+*profile)
	}
	opts := harness.HTTPOptions{
		ProtocolVersion:  *proto,
		Warmup:           *warmup,
		Sequential:       *seq,
		ConcurrentWarmup: *cwarmup,
		Concurrent:       *conc,
		Clients:          *clients,
		Sessions:         *sessions,
		Timeout:          30 * time.Minute,
	}
	work, err := os.MkdirTemp("", "mcprt-e2ehttp-run-") // the server's data directory stays out of the caller's tree
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(work)
	cmd := harness.HTTPCommand{Command: harness.Command{Name: "mcprt-http", Path: path, Args: []string{"--http"}, Env: env, Dir: work}}
	load := harness.LoadAverage()
	start := time.Now()
	var res *harness.HTTPResult
	if *profile == "" {
		res, err = harness.RunHTTP(context.Background(), cmd, opts)
	} else {
		res, err = runProfiled(cmd, opts, *profile, *phase == "seq")
		if err == nil {
			kept := *profile + ".bin"
			if err = copyFile(path, kept); err == nil {
				fmt.Fprintf(os.Stderr, "# CPU profile of the measured %s phase in %s; read it with: go tool pprof -top %s %s\n",
					*phase, *profile, kept, *profile)
			}
		}
	}
	if err != nil {
		return fail(err)
	}
	sessionsUsed := "one per client"
	if res.Sessions < *clients {
		sessionsUsed = strconv.Itoa(res.Sessions) + " shared"
	}
	fmt.Fprintf(os.Stderr, "# measured in %.1f s: %d sequential calls on one session (after %d warm-up), %d concurrent calls "+
		"from %d clients, sessions: %s (after %d warm-up); mcprt --http in TEST mode, logging at %s to /dev/null, "+
		"%d concurrency slots\n",
		time.Since(start).Seconds(), *seq, *warmup, *conc, *clients, sessionsUsed, *cwarmup, *level, *slots)
	fmt.Fprintf(os.Stderr, "# load average before: %s, after: %s (other work on the machine skews the figures)\n",
		load, harness.LoadAverage())
	for _, f := range res.Figures() {
		fmt.Printf("%s %s %s\n", res.Name, f.Name, f.Format())
	}
	if res.ExitErr != nil {
		fmt.Fprintln(os.Stderr, "e2ehttp: mcprt did not exit cleanly on SIGTERM:", res.ExitErr)
		return 1
	}
	return 0
}

// runProfiled is harness.RunHTTP with the server's CPU profile started
// (SIGUSR1) just before the measured concurrent phase, or the sequential
// one when seq, and stopped (SIGUSR2) just after it.
func runProfiled(cmd harness.HTTPCommand, opts harness.HTTPOptions, profile string, seq bool) (*harness.HTTPResult, error) {
	os.Remove(profile)
	ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
	defer cancel()
	s, err := harness.StartHTTP(ctx, cmd)
	if err != nil {
		return nil, err
	}
	sessions := opts.Sessions
	if sessions <= 0 || sessions > opts.Clients {
		sessions = opts.Clients
	}
	res := &harness.HTTPResult{Name: s.Name(), Sessions: sessions}
	err = func() error {
		err := s.Handshake(opts.ProtocolVersion, "noop", "", sessions)
		if err != nil {
			return err
		}
		profiling := func(on bool, f func() error) error {
			if !on {
				return f()
			}
			if err := syscall.Kill(s.PID(), syscall.SIGUSR1); err != nil {
				return err
			}
			time.Sleep(50 * time.Millisecond) // let the hook start the profile
			if err := f(); err != nil {
				return err
			}
			return syscall.Kill(s.PID(), syscall.SIGUSR2)
		}
		if _, err = s.Sequential(opts.Warmup); err != nil {
			return err
		}
		err = profiling(seq, func() (err error) {
			res.Sequential, err = s.Sequential(opts.Sequential)
			return err
		})
		if err != nil {
			return err
		}
		if _, err = s.Concurrent(opts.ConcurrentWarmup, opts.Clients); err != nil {
			return err
		}
		err = profiling(!seq, func() (err error) {
			res.Concurrent, err = s.Concurrent(opts.Concurrent, opts.Clients)
			return err
		})
		if err != nil {
			return err
		}
		mem, err := harness.ProcMemory(s.PID())
		if err != nil {
			return err
		}
		res.PeakRSS = mem.Peak
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(profile); err == nil {
				return nil
			}
			if time.Now().After(deadline) {
				return errors.New("the server wrote no CPU profile within 10 s of SIGUSR2")
			}
		}
	}()
	res.ExitErr = s.Close(5 * time.Second)
	return res, err
}

// profileEnv names the file the profiling hook writes; it is not an
// MCPRT_ variable, which mcprt's configuration would reject as unknown.
const profileEnv = "BENCH_CPUPROFILE"

// profileHook is added to mcprt's main package by a build overlay when
// -cpuprofile is given: SIGUSR1 starts a CPU profile into
// $BENCH_CPUPROFILE.tmp, SIGUSR2 stops it and renames the file to
// $BENCH_CPUPROFILE.
const profileHook = `package main

import (
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func init() {
	path := os.Getenv("` + profileEnv + `")
	if path == "" {
		return
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		var f *os.File
		for sig := range sigs {
			switch {
			case sig == syscall.SIGUSR1 && f == nil:
				tmp, err := os.Create(path + ".tmp")
				if err != nil {
					continue
				}
				if pprof.StartCPUProfile(tmp) != nil {
					tmp.Close()
					continue
				}
				f = tmp
			case sig == syscall.SIGUSR2 && f != nil:
				pprof.StopCPUProfile()
				f.Close()
				f = nil
				os.Rename(path+".tmp", path)
			}
		}
	}()
}
`

// build compiles ./cmd/mcprt of the repository at root into dir, with the
// profiling hook when profiled.
func build(root, dir string, profiled bool) (string, error) {
	if root == "" {
		var err error
		if root, err = findRoot(); err != nil {
			return "", err
		}
	}
	out := filepath.Join(dir, "mcprt")
	args := []string{"build", "-o", out}
	if profiled {
		hook := filepath.Join(dir, "bench_profile_hook.go")
		if err := os.WriteFile(hook, []byte(profileHook), 0o644); err != nil {
			return "", err
		}
		overlay, err := json.Marshal(map[string]map[string]string{
			"Replace": {filepath.Join(root, "cmd", "mcprt", "zz_bench_profile_hook.go"): hook}})
		if err != nil {
			return "", err
		}
		ov := filepath.Join(dir, "overlay.json")
		if err := os.WriteFile(ov, overlay, 0o644); err != nil {
			return "", err
		}
		args = append(args, "-overlay", ov)
	}
	start := time.Now()
	cmd := exec.Command("go", append(args, "./cmd/mcprt")...)
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

// copyFile copies the file at src to dst.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o755)
}
