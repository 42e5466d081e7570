package wiretest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Timeouts of the blocking helpers. They are generous on purpose: they only
// end a test that would otherwise hang, they never measure speed (CI runs
// every package at once under -race on two cores, where a call that takes
// milliseconds alone can take seconds).
const (
	// ExpectTimeout bounds Expect, ExpectJSON and ExpectLog.
	ExpectTimeout = 30 * time.Second
	// WaitTimeout bounds Wait.
	WaitTimeout = 30 * time.Second
	// MaxLineBytes is the longest stdout line a Proc accepts.
	MaxLineBytes = 16 << 20
)

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

// Build compiles ./cmd/mcprt (once per test binary) into a temporary
// directory and returns the path of the executable. The module root is found
// by walking up from the working directory to go.mod. A failed build fails t
// (and every later caller).
func Build(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		root, err := ModuleRoot()
		if err != nil {
			buildErr = err
			return
		}
		dir, err := os.MkdirTemp("", "mcprt-wiretest-")
		if err != nil {
			buildErr = err
			return
		}
		buildDir = dir
		bin := filepath.Join(dir, "mcprt")
		cmd := exec.Command(goTool(), "build", "-o", bin, "./cmd/mcprt")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/mcprt: %v\n%s", err, out)
			return
		}
		buildBin = bin
	})
	if buildErr != nil {
		t.Fatalf("wiretest: %v", buildErr)
	}
	return buildBin
}

// Cleanup removes the directory Build compiled into. Call it from TestMain
// after m.Run.
func Cleanup() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

// goTool returns the go command that runs this test, falling back to PATH.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		if p := filepath.Join(strings.TrimSpace(string(out)), "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ModuleRoot returns the directory holding go.mod, walking up from the
// working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if fileExists(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("wiretest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Options configures Start.
type Options struct {
	// Env is added to the clean environment (PATH and HOME only), as
	// "K=V" entries.
	Env []string
	// Args are the command-line arguments.
	Args []string
	// Stdin, when set, is the process's standard input instead of a pipe;
	// Send and CloseStdin must not be used then.
	Stdin io.Reader
	// Dir is the process's working directory. Empty means a fresh
	// temporary directory of the test, so that data the server keeps
	// under relative paths (aacp.dataDir, the store) never lands in the
	// source tree and no two processes share it by accident.
	Dir string
}

// Proc is a running mcprt process. Its methods that take a testing.TB must
// be called from that test's goroutine; Send and SendRaw may be called from
// any goroutine.
type Proc struct {
	t     testing.TB
	cmd   *exec.Cmd
	stdin io.WriteCloser

	out    *lineQueue // stdout lines
	errBuf *logBuffer // stderr

	done     chan struct{} // closed when the process has exited
	exitCode int           // valid after done
	exitErr  error         // valid after done

	closeOnce sync.Once
	ended     atomic.Bool // the test is over: write errors are expected
}

// Start starts bin with opts. The process is killed when the test ends if it
// is still running.
func Start(t testing.TB, bin string, opts Options) *Proc {
	t.Helper()
	cmd := exec.Command(bin, opts.Args...)
	cmd.Env = CleanEnv(opts.Env...)
	cmd.Dir = opts.Dir
	if cmd.Dir == "" {
		cmd.Dir = t.TempDir()
	}
	p := &Proc{t: t, cmd: cmd, out: newLineQueue(), errBuf: newLogBuffer(), done: make(chan struct{})}
	if opts.Stdin != nil {
		cmd.Stdin = opts.Stdin
	} else {
		w, err := cmd.StdinPipe()
		if err != nil {
			t.Fatalf("wiretest: stdin pipe: %v", err)
		}
		p.stdin = w
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("wiretest: stdout pipe: %v", err)
	}
	cmd.Stderr = p.errBuf
	if err := cmd.Start(); err != nil {
		t.Fatalf("wiretest: start %s: %v", bin, err)
	}
	go p.readStdout(stdout)
	t.Cleanup(func() {
		p.ended.Store(true)
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
		// Lines nobody read must still be protocol.
		for _, line := range p.out.drain() {
			if err := CheckProtocolLine(line); err != nil {
				t.Errorf("wiretest: unread stdout line is not protocol: %v", err)
			}
		}
	})
	return p
}

// CleanEnv returns PATH and HOME from the current environment, then
// StartupTimeoutEnv, followed by extra (which may set it again: the last
// of a key wins). Nothing else of the parent's environment (MCPRT_* above
// all) leaks into the child.
func CleanEnv(extra ...string) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, StartupTimeoutEnv)
	return append(env, extra...)
}

// StartupTimeoutEnv raises the binary's server.startupTimeoutMs from its
// 10 s default to 10 minutes in every process a test starts: the default
// judges how fast a start is, and a start on a loaded machine (CI runs
// every package at once on two cores) took longer ("startup did not finish
// in time; exiting" failed a domain test). A test of the startup timeout
// sets its own.
const StartupTimeoutEnv = "MCPRT_SERVER_STARTUP_TIMEOUT_MS=600000"

// readStdout reads stdout lines until EOF, then reaps the process.
func (p *Proc) readStdout(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLineBytes)
	for sc.Scan() {
		p.out.push(sc.Text())
	}
	if err := sc.Err(); err != nil {
		p.out.fail(fmt.Errorf("reading stdout: %w", err))
		_, _ = io.Copy(io.Discard, r)
	}
	err := p.cmd.Wait()
	p.exitErr = err
	p.exitCode = p.cmd.ProcessState.ExitCode() // -1 when killed by a signal
	p.out.close()
	close(p.done)
}

// Send writes line and a "\n" to the process's stdin.
func (p *Proc) Send(line string) { p.SendRaw([]byte(line + "\n")) }

// SendRaw writes b to the process's stdin as is. A write that fails while
// the process is running is reported as a test error; once the process has
// exited or the test has ended, failures are ignored (a goroutine that keeps
// writing to a dead process must not log after its test completed).
func (p *Proc) SendRaw(b []byte) {
	if p.stdin == nil {
		p.t.Errorf("wiretest: Send with Options.Stdin set")
		return
	}
	if _, err := p.stdin.Write(b); err != nil && !p.ended.Load() && !p.Exited() {
		p.t.Errorf("wiretest: writing %d bytes to stdin: %v", len(b), err)
	}
}

// CloseStdin closes the process's stdin (the server sees EOF).
func (p *Proc) CloseStdin() {
	if p.stdin != nil {
		p.closeOnce.Do(func() { _ = p.stdin.Close() })
	}
}

// Expect returns the next stdout line. It fails t when none arrives within
// ExpectTimeout, when stdout ends, or when the line is not protocol (see
// CheckProtocolLine).
func (p *Proc) Expect(t testing.TB) string {
	t.Helper()
	line, err := p.out.pop(ExpectTimeout)
	if err != nil {
		t.Fatalf("wiretest: expected a stdout line: %v\nstderr:\n%s", err, tail(p.Stderr(), 4000))
	}
	if err := CheckProtocolLine(line); err != nil {
		t.Fatalf("wiretest: %v", err)
	}
	return line
}

// ExpectJSON returns the next stdout line decoded with UseNumber. A batch
// response (an array) fails t; use Expect for those.
func (p *Proc) ExpectJSON(t testing.TB) map[string]any {
	t.Helper()
	line := p.Expect(t)
	v, err := decode([]byte(line))
	if err != nil {
		t.Fatalf("wiretest: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("wiretest: expected a JSON object, got %s", clip(line))
	}
	return m
}

// ExpectSilence fails t if a stdout line arrives within d.
func (p *Proc) ExpectSilence(t testing.TB, d time.Duration) {
	t.Helper()
	if line, err := p.out.pop(d); err == nil {
		t.Fatalf("wiretest: expected no output for %v, got %s", d, clip(line))
	}
}

// Handshake sends initialize for version and notifications/initialized. It
// fails t unless the result echoes version as its protocolVersion, and
// returns the result.
func (p *Proc) Handshake(t testing.TB, version string) map[string]any {
	t.Helper()
	p.Send(`{"jsonrpc":"2.0","id":"wiretest-init","method":"initialize","params":{"protocolVersion":` +
		quote(version) + `,"capabilities":{},"clientInfo":{"name":"wiretest","version":"1.0.0"}}}`)
	msg := p.ExpectJSON(t)
	if msg["id"] != "wiretest-init" {
		t.Fatalf("wiretest: initialize answered with id %v: %v", msg["id"], msg)
	}
	res, ok := msg["result"].(map[string]any)
	if !ok {
		t.Fatalf("wiretest: initialize failed: %v", msg)
	}
	if res["protocolVersion"] != version {
		t.Fatalf("wiretest: initialize negotiated %v, want %s", res["protocolVersion"], version)
	}
	p.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return res
}

// Signal sends sig to the process.
func (p *Proc) Signal(sig os.Signal) {
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Errorf("wiretest: signal %v: %v", sig, err)
	}
}

// Pid returns the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Wait waits for the process to exit and returns its exit code (-1 when a
// signal killed it). It fails t after WaitTimeout.
func (p *Proc) Wait(t testing.TB) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(WaitTimeout):
		t.Fatalf("wiretest: the process did not exit within %v\nstderr:\n%s", WaitTimeout, tail(p.Stderr(), 4000))
	}
	if p.exitCode < 0 {
		t.Logf("wiretest: the process was killed: %v", p.exitErr)
	}
	return p.exitCode
}

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stderr returns everything the process wrote to stderr so far.
func (p *Proc) Stderr() string { return p.errBuf.String() }

// StderrLines decodes every complete stderr line so far. A line that is not
// a JSON object with "time", "level" and "msg" is reported as a test error
// and left out.
func (p *Proc) StderrLines() []map[string]any {
	var out []map[string]any
	for _, line := range p.errBuf.lines() {
		m, err := CheckLogLine(line)
		if err != nil {
			p.t.Errorf("wiretest: %v", err)
			continue
		}
		out = append(out, m)
	}
	return out
}

// ExpectLog waits up to ExpectTimeout for a stderr log line for which match
// returns true, and returns it decoded.
func (p *Proc) ExpectLog(t testing.TB, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(ExpectTimeout)
	seen := 0
	for {
		changed := p.errBuf.changed()
		lines := p.errBuf.lines()
		for ; seen < len(lines); seen++ {
			if m, err := CheckLogLine(lines[seen]); err == nil && match(m) {
				return m
			}
		}
		select {
		case <-changed:
		case <-p.done:
			// Stderr is complete once the process is reaped.
			if seen == len(p.errBuf.lines()) {
				t.Fatalf("wiretest: the process exited without logging %s\nstderr:\n%s", what, tail(p.Stderr(), 4000))
			}
		case <-time.After(time.Until(deadline)):
			t.Fatalf("wiretest: no log line %s within %v\nstderr:\n%s", what, ExpectTimeout, tail(p.Stderr(), 4000))
		}
	}
}
