package bench

import (
	"bytes"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// pipe is the in-process transport of the session benchmarks: the session
// reads its requests from it and writes its answers to it, with no client
// goroutine in between.
//
// The benchmark hands the reader a phase: n lines, made on demand by a
// function, with at most window answers outstanding. Read, called by the
// session's reading goroutine, waits until fewer than window answers are
// outstanding and copies the next line(s) straight into the caller's
// buffer; Write, called by the session's writer, counts the newlines it is
// given, wakes the reader and, when the phase's last answer arrives, the
// benchmark. So a sequential call costs the plumbing one line built into a
// reused buffer and copied, one scan of the answer (newlines, "error"), an
// atomic add and one channel wake-up of the reading goroutine — which the
// session parks in Read between requests anyway, as it would park in
// read(2) on a real pipe. Compared with io.Pipe and a client goroutine this
// saves the client's wake-ups (two per round trip) and a copy through the
// pipe; BenchmarkPlumbing measures what is left.
type pipe struct {
	phases chan *phase // buffered: a phase can be queued before Serve runs

	// Owned by the reading goroutine.
	cur      *phase
	next     int    // index of cur's next line
	rest     []byte // the part of a long line that did not fit the last Read
	scratch  []byte // where lines are built
	expected int64  // answers expected for the lines handed out so far

	// Shared with the writer and the benchmark.
	answers   atomic.Int64  // answer lines written so far
	wake      chan struct{} // capacity 1: an answer arrived
	target    atomic.Int64  // the benchmark waits until answers reaches this
	reached   chan struct{} // capacity 1: answers reached target
	errs      atomic.Int64  // answers holding a JSON-RPC error or a tool error
	capturing atomic.Bool   // keep every answer in captured
	lastLen   atomic.Int64  // length of the last write

	mu       sync.Mutex // guards firstErr and captured
	firstErr []byte
	captured []byte

	timer *time.Timer // watchdog of do, reused
}

// phase is a run of request lines.
type phase struct {
	n      int
	window int64 // answers outstanding at most before the next line is read
	// line appends line i (ending in "\n") to dst and reports whether it
	// expects an answer.
	line func(dst []byte, i int) ([]byte, bool)
	eof  bool // the input ends after this phase
}

func newPipe() *pipe {
	t := time.NewTimer(time.Hour)
	t.Stop()
	p := &pipe{
		phases:  make(chan *phase, 1),
		wake:    make(chan struct{}, 1),
		reached: make(chan struct{}, 1),
		scratch: make([]byte, 0, 4096),
		timer:   t,
	}
	p.target.Store(1 << 62)
	return p
}

// Read hands the session the next line(s) of the current phase.
func (p *pipe) Read(b []byte) (int, error) {
	if len(p.rest) > 0 {
		n := copy(b, p.rest)
		p.rest = p.rest[n:]
		return n, nil
	}
	for p.cur == nil || p.next == p.cur.n {
		if p.cur != nil && p.cur.eof {
			p.cur = nil
			return 0, io.EOF
		}
		ph, ok := <-p.phases
		if !ok {
			return 0, io.EOF
		}
		p.cur, p.next = ph, 0
	}
	ph := p.cur
	for p.expected-p.answers.Load() >= ph.window {
		<-p.wake
	}
	n := 0
	for p.next < ph.n && (n == 0 || p.expected-p.answers.Load() < ph.window) {
		line, answered := ph.line(p.scratch[:0], p.next)
		p.scratch = line
		if len(line) > len(b)-n {
			if n > 0 {
				break // next Read
			}
			n = copy(b, line)
			p.rest = line[n:]
		} else {
			n += copy(b[n:], line)
		}
		p.next++
		if answered {
			p.expected++
		}
		if len(p.rest) > 0 {
			break
		}
	}
	return n, nil
}

var (
	newline      = []byte{'\n'}
	rpcErrMember = []byte(`"error":`)
	toolErrFlag  = []byte(`"isError":true`)
)

// Write takes the session's answers. The session's writer serializes
// calls.
func (p *pipe) Write(b []byte) (int, error) {
	k := int64(bytes.Count(b, newline))
	p.lastLen.Store(int64(len(b)))
	if bytes.Contains(b, rpcErrMember) || bytes.Contains(b, toolErrFlag) {
		p.errs.Add(1)
		p.mu.Lock()
		if p.firstErr == nil {
			p.firstErr = append([]byte(nil), b...)
		}
		p.mu.Unlock()
	}
	if p.capturing.Load() {
		p.mu.Lock()
		p.captured = append(p.captured, b...)
		p.mu.Unlock()
	}
	v := p.answers.Add(k)
	select {
	case p.wake <- struct{}{}:
	default:
	}
	if t := p.target.Load(); v >= t && v-k < t {
		select {
		case p.reached <- struct{}{}:
		default:
		}
	}
	return len(b), nil
}

// queue hands a phase to the reader without waiting.
func (p *pipe) queue(ph *phase) { p.phases <- ph }

// do hands a phase to the reader and waits until the answers it expects
// have arrived.
func (p *pipe) do(tb testing.TB, ph *phase, answers int) {
	if answers == 0 {
		p.queue(ph)
		return
	}
	before := p.answers.Load()
	p.target.Store(before + int64(answers))
	p.queue(ph)
	p.timer.Reset(2 * time.Minute)
	select {
	case <-p.reached:
		p.timer.Stop()
	case <-p.timer.C:
		tb.Fatalf("timed out: %d of %d answers arrived", p.answers.Load()-before, answers)
	}
}

// check fails tb if any answer was an error.
func (p *pipe) check(tb testing.TB) {
	tb.Helper()
	if n := p.errs.Load(); n > 0 {
		p.mu.Lock()
		defer p.mu.Unlock()
		tb.Fatalf("%d answers were errors; the first: %s", n, p.firstErr)
	}
}

// capture starts or stops keeping the answers, and returns (and forgets)
// what was kept.
func (p *pipe) capture(on bool) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.captured
	p.captured = nil
	p.capturing.Store(on)
	return out
}

// fixedLines returns a phase function that sends lines in order; notes
// marks the lines that are notifications (no answer).
func fixedLines(lines []string, notes ...int) func([]byte, int) ([]byte, bool) {
	return func(dst []byte, i int) ([]byte, bool) {
		for _, n := range notes {
			if n == i {
				return append(append(dst, lines[i]...), '\n'), false
			}
		}
		return append(append(dst, lines[i]...), '\n'), true
	}
}
