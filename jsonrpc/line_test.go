package jsonrpc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// This file tests the Line transport under a Conn: its output budget, the
// bounds of its cork, the end of its input, and write errors.

// sizedRoute answers with a string result that makes a response line of
// about n bytes.
func sizedRoute(n int) Route {
	res := CompactJSON(`"` + strings.Repeat("r", n-40) + `"`)
	return inline(func(context.Context, *Request) (any, error) { return res, nil })
}

// pacedLine is a Line that reports each Pace call: whether the output
// queued was over the budget when the reader got there.
type pacedLine struct {
	*Line
	paced chan bool
}

func (p *pacedLine) Pace(done <-chan struct{}) {
	w := p.wr
	w.mu.Lock()
	over := w.pending+w.waiting > w.budget
	w.mu.Unlock()
	p.paced <- over
	p.Line.Pace(done)
}

// TestLineOutputBudget: while the client does not read, a response larger
// than the output budget stops the reader before the next request; once
// the output drains, every request is read and answered exactly once.
func TestLineOutputBudget(t *testing.T) {
	const budget, bigSize, small = 4 << 10, 16 << 10, 500
	d := newTestDisp(false).handle("big", sizedRoute(bigSize))
	var input strings.Builder
	input.WriteString(req("0", "big"))
	for i := 1; i <= small; i++ {
		input.WriteString(req(strconv.Itoa(i), "ping"))
	}
	in, out := newFeedReader(input.String()), newLineSink(true)
	line := &pacedLine{Line: NewLine(in, out, LineOptions{OutputBudget: budget}), paced: make(chan bool, 2*small+10)}
	c := NewConn(line, d, Options{})
	serveConn(t, c)

	// The reader paces before every read: the first time with nothing
	// queued, the second with the big response queued and unwritten.
	for n := 0; ; n++ {
		if over := <-line.paced; over {
			break
		}
		if n > 0 {
			t.Fatal("the reader went on reading past the budget")
		}
	}
	<-out.entered // the big response is being written; the client does not read
	if n := d.routed.Load(); n != 1 {
		t.Fatalf("%d requests read while over the budget, want 1", n)
	}
	out.none(t, "the client is not reading")
	close(out.gate)
	expectEachOnce(t, out, small+1)
	if n := d.routed.Load(); n != small+1 {
		t.Fatalf("%d requests routed, want %d", n, small+1)
	}
}

// TestLineWritersWaitForTheBudget: handlers on goroutines of their own
// that answer at once while the client does not read wait for the budget
// in Write; once the client reads, every response arrives exactly once.
func TestLineWritersWaitForTheBudget(t *testing.T) {
	const n = 40
	b := newBlocker()
	res := CompactJSON(`"` + strings.Repeat("m", 1500) + `"`)
	d := newTestDisp(false).handle("mid", Route{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		b.started <- req.ID.String()
		<-b.release
		return res, nil
	})})
	p := newLineConn(t, d, Options{}, LineOptions{OutputBudget: 2 << 10}, true)
	for i := range n {
		p.in.feed(req(strconv.Itoa(i), "mid"))
	}
	for range n {
		<-b.started
	}
	close(b.release)
	<-p.out.entered
	close(p.out.gate)
	expectEachOnce(t, p.out, n)
}

// callRecorder records each write call: its bytes, whether the cork timer
// made it, and how many requests had been routed by then.
type callRecorder struct {
	routed *atomic.Int64
	mu     sync.Mutex
	calls  []recordedCall
	lines  chan string
	buf    []byte
}

type recordedCall struct {
	data   string
	timer  bool
	routed int64
}

func newCallRecorder(routed *atomic.Int64) *callRecorder {
	return &callRecorder{routed: routed, lines: make(chan string, 100)}
}

func (r *callRecorder) Write(p []byte) (int, error) {
	stack := make([]byte, 8<<10)
	stack = stack[:runtime.Stack(stack, false)]
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, recordedCall{string(p), bytes.Contains(stack, []byte("corkExpired")), r.routed.Load()})
	r.buf = append(r.buf, p...)
	for {
		i := bytes.IndexByte(r.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		r.lines <- string(r.buf[:i])
		r.buf = r.buf[i+1:]
	}
}

func (r *callRecorder) recorded() []recordedCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recordedCall(nil), r.calls...)
}

// TestLineCorkSizeBound: while more input is buffered, responses gather;
// once the gathered output would pass corkMaxBytes it is written, by the
// reader, without waiting for the cork timer or the end of the input.
func TestLineCorkSizeBound(t *testing.T) {
	const a, b = 40 << 10, 30 << 10 // each under the bound, together over it
	if a > corkMaxBytes || b > corkMaxBytes || a+b <= corkMaxBytes {
		t.Fatal("sizes do not fit corkMaxBytes")
	}
	d := newTestDisp(false).handle("a", sizedRoute(a)).handle("b", sizedRoute(b))
	// A round where the cork timer writes first (the reader was held up
	// for corkMaxDelay) proves nothing: try again, a bounded number of
	// times.
	for round := 0; round < 20; round++ {
		rec := newCallRecorder(&d.routed)
		d.routed.Store(0)
		// The last line is incomplete: the reader waits for its end with
		// the earlier lines' responses gathered.
		in := newFeedReader(req("1", "ping") + req("2", "a") + req("3", "b") + `{"jsonrpc":"2.0",`)
		c := NewConn(NewLine(in, rec, LineOptions{}), d, Options{})
		s := serveConn(t, c)
		for _, want := range []string{"1", "2", "3"} {
			select {
			case l := <-rec.lines:
				if id := responseID(t, l); id != want {
					t.Fatalf("response %s, want %s", id, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("response %s not written: %d write calls", want, len(rec.recorded()))
			}
		}
		c.Close()
		s.wait(t)
		calls := rec.recorded()
		timed := false
		for _, call := range calls {
			timed = timed || call.timer
		}
		if timed {
			continue
		}
		// The ping's response was held while "a" ran, and went out first
		// when "b" passed the bound.
		if len(calls) != 3 || calls[0].data != okLine("1") || calls[0].routed != 3 {
			t.Fatalf("%d write calls; the first %.60q, after %d requests routed; want 3, the ping's, after 3",
				len(calls), calls[0].data, calls[0].routed)
		}
		return
	}
	t.Fatal("in every round the cork timer wrote the gathered output: the size bound never did")
}

// TestLineCorkTimer: a response gathered while the reader waits for the
// rest of a line it has begun is written by the cork timer.
func TestLineCorkTimer(t *testing.T) {
	p := newLineConn(t, newTestDisp(false), Options{}, LineOptions{}, false)
	start := time.Now()
	p.in.feed(req("1", "ping") + `{"jsonrpc":"2.0",`)
	if got := p.out.next(t); got+"\n" != okLine("1") {
		t.Fatalf("got %s", got)
	}
	t.Logf("the gathered response was written after %v (cork delay %v)", time.Since(start), corkMaxDelay)
	p.in.feed(`"id":2,"method":"ping"}` + "\n")
	if got := p.out.next(t); got+"\n" != okLine("2") {
		t.Fatalf("got %s", got)
	}
}

// TestLineEndOfInputWritesEverything: responses made before the input
// ends are all written before Serve returns, even when another goroutine
// (the cork timer) is writing when the input ends.
func TestLineEndOfInputWritesEverything(t *testing.T) {
	out := newLineSink(true)
	d := newTestDisp(false).handle("waitflush", inline(func(context.Context, *Request) (any, error) {
		<-out.entered // the cork timer is writing the first response
		return "b", nil
	}))
	c := NewConn(NewLine(strings.NewReader(req("1", "ping")+req("2", "waitflush")), out, LineOptions{}), d, Options{})
	s := serveConn(t, c)
	<-out.entered
	close(out.gate)
	if err := s.wait(t); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1", "2"} {
		select {
		case l := <-out.lines:
			if id := responseID(t, l); id != want {
				t.Fatalf("response %s, want %s", id, want)
			}
		default:
			t.Fatalf("response %s not written when Serve returned", want)
		}
	}
}

// idleReader is an input with nothing to read: Read reports that it was
// entered and blocks until released.
type idleReader struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func newIdleReader() *idleReader {
	return &idleReader{entered: make(chan struct{}, 10), release: make(chan struct{})}
}

func (r *idleReader) Read([]byte) (int, error) {
	r.entered <- struct{}{}
	<-r.release
	return 0, io.EOF
}

func (r *idleReader) free() { r.once.Do(func() { close(r.release) }) }

// closableIdleReader is an idleReader that Close releases.
type closableIdleReader struct{ *idleReader }

func (r closableIdleReader) Close() error {
	r.free()
	return nil
}

// TestServeReturnsWhenContextEnds: cancelling Serve's context while the
// reader waits for input makes Serve return promptly, whether or not the
// input can be closed, and closes the connection.
func TestServeReturnsWhenContextEnds(t *testing.T) {
	for _, closable := range []bool{true, false} {
		t.Run("closable="+strconv.FormatBool(closable), func(t *testing.T) {
			idle := newIdleReader()
			defer idle.free()
			var in io.Reader = idle
			if closable {
				in = closableIdleReader{idle}
			}
			c := NewConn(NewLine(in, io.Discard, LineOptions{}), newTestDisp(false), Options{})
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- c.Serve(ctx) }()
			<-idle.entered
			cancel()
			select {
			case err := <-served:
				if err != nil {
					t.Fatalf("Serve: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Serve did not return within 10s of the cancellation")
			}
			if !c.Closed() {
				t.Fatal("the connection is open after Serve returned")
			}
		})
	}
}

// TestServeReportsReadError: a read error other than io.EOF ends Serve
// with that error.
func TestServeReportsReadError(t *testing.T) {
	errDisk := errors.New("disk on fire")
	in := io.MultiReader(strings.NewReader(req("1", "ping")), errReader{errDisk})
	var out syncBuffer
	c := NewConn(NewLine(in, &out, LineOptions{}), newTestDisp(false), Options{})
	if err := c.Serve(context.Background()); !errors.Is(err, errDisk) {
		t.Fatalf("Serve: %v, want the read error", err)
	}
	if got := out.String(); got != okLine("1") {
		t.Fatalf("output %q", got)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// errWriter fails every write.
type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }

// TestLineWriteErrorClosesConn: a write that fails (the client went away)
// closes the connection; Serve returns and later writes fail.
func TestLineWriteErrorClosesConn(t *testing.T) {
	errPipe := errors.New("broken pipe")
	in := newFeedReader(req("1", "ping"))
	c := NewConn(NewLine(in, errWriter{errPipe}, LineOptions{}), newTestDisp(false), Options{})
	s := serveConn(t, c)
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection is open 10s after its output failed")
	}
	s.wait(t)
	if err := c.Notify(context.Background(), "x", nil); err == nil {
		t.Fatal("Notify succeeded after the output failed")
	}
}

// TestLineWriteErrorInCorkTimerClosesConn: the same when the failing
// write is the cork timer's, while the reader waits for input.
func TestLineWriteErrorInCorkTimerClosesConn(t *testing.T) {
	in := newFeedReader(req("1", "ping") + `{"jsonrpc":`)
	c := NewConn(NewLine(in, errWriter{errors.New("broken pipe")}, LineOptions{}), newTestDisp(false), Options{})
	serveConn(t, c)
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection is open 10s after its output failed")
	}
}
