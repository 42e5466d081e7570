package main

// The load tests' harness. wiretest.Proc reads stdout and stderr eagerly,
// which is what most tests want; the load tests need the opposite: a
// client that stops reading stdout or stderr, reads a response line of
// 100 MB without keeping it, or counts a million lines cheaply. loadProc
// runs the binary on three pipes the test holds itself and measures the
// server's peak memory (VmHWM from /proc).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// loadGuard bounds every wait of the load tests. It only ends a test that
// would otherwise hang; it never measures speed (20 s was exceeded by
// TestLoadBatchAnswerIsBounded's answer on a loaded 2-core machine).
const loadGuard = 60 * time.Second

// loadKeep is the most of one stdout line, or of stderr, a loadProc keeps;
// longer lines are counted, not kept.
const loadKeep = 32 << 20

// loadBinary is the binary under test: ./cmd/mcprt built by wiretest, or
// the one named by MCPRT_LOAD_BIN (to run the load tests against another
// build, such as an older commit's, and see them fail).
func loadBinary(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the load tests read /proc and the kernel's pipe sizes: Linux only")
	}
	if bin := os.Getenv("MCPRT_LOAD_BIN"); bin != "" {
		return bin
	}
	return wiretest.Build(t)
}

// loadProc is one mcprt process in mode TEST whose pipes the test holds.
// Its methods are called from the test's goroutine, except write, which
// a writer goroutine may call.
type loadProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     *os.File // our end of stdin
	out    *os.File // our end of stdout
	rd     *bufio.Reader
	errR   *os.File // our end of stderr
	stderr *stderrSink
	done   chan struct{} // closed once the process is reaped
	once   sync.Once
	ended  atomic.Bool // the test is over
}

// startLoad starts the binary in mode TEST with env. Unless stallStderr is
// set, a goroutine reads stderr into p.stderr from the start; otherwise
// nobody reads it until drainStderr.
func startLoad(t *testing.T, stallStderr bool, env ...string) *loadProc {
	t.Helper()
	bin := loadBinary(t)
	var ends [6]*os.File // stdin r/w, stdout r/w, stderr r/w
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		ends[i], ends[i+1] = r, w
	}
	cmd := exec.Command(bin)
	cmd.Env = wiretest.CleanEnv(append([]string{"MCPRT_SERVER_MODE=TEST", "MCPRT_AACP_DATA_DIR=" + t.TempDir()}, env...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ends[0], ends[3], ends[5]
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ends[0].Close()
	ends[3].Close()
	ends[5].Close()
	p := &loadProc{t: t, cmd: cmd, in: ends[1], out: ends[2], errR: ends[4],
		rd: bufio.NewReaderSize(ends[2], 1<<20), stderr: newStderrSink(), done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	if !stallStderr {
		p.drainStderr()
	}
	t.Cleanup(func() {
		p.ended.Store(true)
		p.in.Close()
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
		p.out.Close()
		if stallStderr {
			p.errR.Close() // the sink's goroutine, if any, ends at the close
		}
	})
	return p
}

// drainStderr starts reading stderr (once).
func (p *loadProc) drainStderr() {
	p.once.Do(func() { go p.stderr.readFrom(p.errR) })
}

// write writes b to stdin. A failure fails the test while the test and
// the server run; later (a writer goroutine outliving its test) it is
// ignored.
func (p *loadProc) write(b []byte) {
	if _, err := p.in.Write(b); err != nil && !p.ended.Load() && !p.exited() {
		p.t.Errorf("writing %d bytes to stdin: %v", len(b), err)
	}
}

// exited reports whether the server has exited.
func (p *loadProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// send writes line and "\n".
func (p *loadProc) send(line string) { p.write([]byte(line + "\n")) }

// readLine returns the next stdout line without its "\n" (at most loadKeep
// bytes of it) and its full length. It fails the test after loadGuard.
func (p *loadProc) readLine() ([]byte, int) {
	p.t.Helper()
	if err := p.out.SetReadDeadline(time.Now().Add(loadGuard)); err != nil {
		p.t.Fatal(err)
	}
	var kept []byte
	n := 0
	for {
		chunk, err := p.rd.ReadSlice('\n')
		n += len(chunk)
		if room := loadKeep - len(kept); room > 0 {
			kept = append(kept, chunk[:min(len(chunk), room)]...)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(kept, []byte("\n")), n - 1
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, os.ErrDeadlineExceeded):
			p.t.Fatalf("no complete stdout line within %v (%d bytes of one read)\nstderr:\n%s",
				loadGuard, n, p.stderr.tail(3000))
		default:
			p.t.Fatalf("reading stdout: %v after %d bytes of a line\nstderr:\n%s", err, n, p.stderr.tail(3000))
		}
	}
}

// peekByte waits for the first byte of the next stdout line without
// consuming it.
func (p *loadProc) peekByte() {
	p.t.Helper()
	if err := p.out.SetReadDeadline(time.Now().Add(loadGuard)); err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.rd.Peek(1); err != nil {
		p.t.Fatalf("no stdout within %v: %v\nstderr:\n%s", loadGuard, err, p.stderr.tail(3000))
	}
}

// handshake brings the server to RUNNING under rev.
func (p *loadProc) handshake(rev string) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + rev +
		`","capabilities":{},"clientInfo":{"name":"load","version":"1.0"}}}`)
	line, _ := p.readLine()
	if _, err := wiretest.CheckResult(string(line), `"init"`); err != nil {
		p.t.Fatal(err)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// ping sends a ping with id and expects its answer as the next line.
func (p *loadProc) ping(id string) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
	line, _ := p.readLine()
	if _, err := wiretest.CheckResult(string(line), id); err != nil {
		p.t.Fatal(err)
	}
}

// finish reads the server's peak resident set (VmHWM, in MB), then closes
// stdin, discards the stdout nobody read, reads stderr to its end and
// waits for exit code 0. It returns the peak. (The kernel's maxrss of the
// reaped child would not do: the exec'ed child inherits, through vfork,
// the peak of the test process itself.)
func (p *loadProc) finish() float64 {
	p.t.Helper()
	peak := p.procStatus("VmHWM")
	p.end()
	return peak
}

// end closes stdin, discards the stdout nobody read, waits for exit code 0
// and reads stderr to its end.
func (p *loadProc) end() {
	p.t.Helper()
	p.in.Close()
	p.drainStderr()
	go func() {
		_ = p.out.SetReadDeadline(time.Time{})
		for {
			if _, err := p.rd.Discard(1 << 16); err != nil {
				return
			}
		}
	}()
	select {
	case <-p.done:
	case <-time.After(loadGuard):
		p.t.Fatalf("the server did not exit within %v of stdin EOF\nstderr:\n%s", loadGuard, p.stderr.tail(3000))
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		p.t.Fatalf("exit code %d, want 0\nstderr:\n%s", code, p.stderr.tail(3000))
	}
	p.stderr.wait(p.t)
}

// procStatus returns a field of /proc/PID/status in MB (VmHWM, VmRSS).
func (p *loadProc) procStatus(field string) float64 {
	p.t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		p.t.Fatalf("reading the server's status: %v", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				p.t.Fatalf("%s: %q", field, line)
			}
			return float64(kb) / 1024
		}
	}
	p.t.Fatalf("no %s in the server's status", field)
	return 0
}

// responseID returns the id of a response line as JSON text, reading only
// as far as the id when the line starts {"jsonrpc":"2.0","id": (as the
// server writes them), and decoding the line otherwise.
func responseID(line []byte) (string, error) {
	const head = `{"jsonrpc":"2.0","id":`
	if rest, ok := bytes.CutPrefix(line, []byte(head)); ok {
		if i := bytes.IndexByte(rest, ','); i > 0 && !bytes.ContainsAny(rest[:i], `{["\`) {
			return string(rest[:i]), nil // a number
		}
	}
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(line, &m); err != nil || m.ID == nil {
		return "", fmt.Errorf("not a response: %s", clip(string(line)))
	}
	return string(m.ID), nil
}

// stderrSink collects stderr: all of it up to loadKeep bytes, and the
// total count of bytes and lines in any case.
type stderrSink struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	total  int
	lines  int
	eof    bool
	signal chan struct{} // closed and replaced at every change
}

func newStderrSink() *stderrSink { return &stderrSink{signal: make(chan struct{})} }

func (s *stderrSink) readFrom(f *os.File) {
	b := make([]byte, 64<<10)
	for {
		n, err := f.Read(b)
		s.mu.Lock()
		s.total += n
		s.lines += bytes.Count(b[:n], []byte("\n"))
		if room := loadKeep - s.buf.Len(); room > 0 {
			s.buf.Write(b[:min(n, room)])
		}
		if err != nil {
			s.eof = true
		}
		close(s.signal)
		s.signal = make(chan struct{})
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// counts returns the bytes and lines read so far.
func (s *stderrSink) counts() (total, lines int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total, s.lines
}

// wait waits for the end of stderr (the process has exited).
func (s *stderrSink) wait(t *testing.T) {
	t.Helper()
	deadline := time.After(loadGuard)
	for {
		s.mu.Lock()
		eof, sig := s.eof, s.signal
		s.mu.Unlock()
		if eof {
			return
		}
		select {
		case <-sig:
		case <-deadline:
			t.Fatalf("stderr did not end within %v", loadGuard)
		}
	}
}

// logLines decodes the complete stderr lines kept; a line that is not a
// JSON log entry fails t.
func (s *stderrSink) logLines(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	text := s.buf.String()
	s.mu.Unlock()
	text = text[:strings.LastIndexByte(text, '\n')+1]
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSuffix(text, "\n"), "\n") {
		if line == "" {
			continue
		}
		m, err := wiretest.CheckLogLine(line)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// countMsg counts the complete stderr lines kept that hold "msg":msg.
func (s *stderrSink) countMsg(msg string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buf.Bytes()
	b = b[:bytes.LastIndexByte(b, '\n')+1]
	return bytes.Count(b, []byte(`"msg":`+strconv.Quote(msg)))
}

// tail returns the end of the stderr kept, for failure messages.
func (s *stderrSink) tail(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buf.Bytes()
	if len(b) > n {
		return "…" + string(b[len(b)-n:])
	}
	return string(b)
}

// completionRecords returns the completion records among lines.
func completionRecords(lines []map[string]any) []map[string]any {
	var out []map[string]any
	for _, m := range lines {
		if m["msg"] == "tool call completed" {
			out = append(out, m)
		}
	}
	return out
}

// loadCall is a tools/call request line with id and _meta.correlationId
// "load-<id>", which names the call in its completion record.
func loadCall(id int, name, args string) string {
	s := strconv.Itoa(id)
	return toolsCallLine(s, name, args, `{"correlationId":"load-`+s+`"}`)
}

// waitMsg waits until the complete stderr lines kept hold n lines with
// "msg":msg.
func (s *stderrSink) waitMsg(t *testing.T, msg string, n int) {
	t.Helper()
	deadline := time.After(loadGuard)
	for {
		s.mu.Lock()
		sig := s.signal
		s.mu.Unlock()
		if got := s.countMsg(msg); got >= n {
			return
		}
		select {
		case <-sig:
		case <-deadline:
			t.Fatalf("%d stderr lines %q within %v, want %d\nstderr:\n%s", s.countMsg(msg), msg, loadGuard, n, s.tail(3000))
		}
	}
}

// cpuSeconds returns the CPU time (user and system) the server has used,
// from /proc/PID/stat; unlike wall time it barely depends on what else
// runs on the machine.
func (p *loadProc) cpuSeconds() float64 {
	p.t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		p.t.Fatalf("reading the server's stat: %v", err)
	}
	// Fields after the command's closing parenthesis: state is the 1st,
	// utime the 12th and stime the 13th, in clock ticks (USER_HZ, 100).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	utime, err1 := strconv.Atoi(f[11])
	stime, err2 := strconv.Atoi(f[12])
	if err1 != nil || err2 != nil {
		p.t.Fatalf("cannot parse the server's stat: %s", b)
	}
	return float64(utime+stime) / 100
}
