package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// This file holds what the engine's tests share: a small Dispatcher in the
// role of the layer above, transports' ends the tests control (inputs fed
// chunk by chunk, outputs that block or fail), and the golden-output
// matcher.

const testCID = "conn-cid"

// testDisp is the layer above, reduced to a fixed table of routes: requests
// of unknown methods get the engine's -32601, batches are allowed per a
// flag, and every call to Route is counted (and reported on seen, if set).
type testDisp struct {
	routes  map[string]Route
	batches bool
	seen    chan string // receives each routed method when not nil

	routed atomic.Int64

	mu    sync.Mutex
	notes []string // notifications received, in order
}

func (d *testDisp) Route(_ context.Context, req *Request) Route {
	d.routed.Add(1)
	if d.seen != nil {
		d.seen <- req.Method
	}
	return d.routes[req.Method]
}

func (d *testDisp) Notification(_ context.Context, n *Notification) {
	if n.Method == "panic" {
		panic("kaboom")
	}
	d.mu.Lock()
	d.notes = append(d.notes, n.Method)
	d.mu.Unlock()
}

func (d *testDisp) Batch() *Error {
	if d.batches {
		return nil
	}
	return NewError(CodeInvalidRequest, "Invalid Request: batches are not accepted")
}

func (d *testDisp) notifications() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.notes...)
}

// handle adds a route and returns d.
func (d *testDisp) handle(method string, r Route) *testDisp {
	d.routes[method] = r
	return d
}

func inline(f HandlerFunc) Route { return Route{Handler: f, Inline: true} }

// newTestDisp returns a dispatcher with one method of each kind; all of
// them inline, so the output order is the input order.
func newTestDisp(batches bool) *testDisp {
	result := func(v any) Route {
		return inline(func(context.Context, *Request) (any, error) { return v, nil })
	}
	d := &testDisp{routes: map[string]Route{}, batches: batches}
	d.handle("ping", result(json.RawMessage(`{}`)))
	d.handle("echo", inline(func(_ context.Context, req *Request) (any, error) { return req.Params, nil }))
	d.handle("badparams", inline(func(context.Context, *Request) (any, error) { return nil, NewError(CodeInvalidParams, "bad") }))
	d.handle("fail", inline(func(context.Context, *Request) (any, error) { return nil, errors.New("boom") }))
	d.handle("panic", inline(func(context.Context, *Request) (any, error) { panic("kaboom") }))
	d.handle("silent", inline(func(context.Context, *Request) (any, error) { return nil, ErrNoResponse }))
	d.handle("compact", result(CompactJSON(`{"a":[1,"x y"]}`)))
	d.handle("unencodable", result(func() {}))
	d.handle("html", result(map[string]string{"s": "<a&b>"}))
	d.handle("codezero", inline(func(context.Context, *Request) (any, error) { return nil, &Error{Message: "zero"} }))
	d.handle("denied", Route{Err: NewError(-32002, "Not allowed now")})
	d.handle("bye", Route{Handler: HandlerFunc(func(context.Context, *Request) (any, error) { return "bye", nil }),
		Inline: true, CloseAfter: true})
	return d
}

// clientCID reads params._meta.correlationId, member names matched exactly.
func clientCID(params json.RawMessage) string {
	var p map[string]json.RawMessage
	var meta map[string]json.RawMessage
	var cid string
	if json.Unmarshal(params, &p) != nil || json.Unmarshal(p["_meta"], &meta) != nil ||
		json.Unmarshal(meta["correlationId"], &cid) != nil {
		return ""
	}
	return cid
}

// cidErrorData is an Options.ErrorData as the layer above has one: every
// error carries data.correlationId, the request's own when its params have
// one, the connection's otherwise.
func cidErrorData(connCID string) func(json.RawMessage, map[string]any) map[string]any {
	return func(params json.RawMessage, data map[string]any) map[string]any {
		cid := clientCID(params)
		if cid == "" {
			cid = connCID
		}
		out := maps.Clone(data) // the error's own map may be shared
		if out == nil {
			out = map[string]any{}
		}
		out["correlationId"] = cid
		return out
	}
}

// serveAll serves input on a Line transport until its end and returns
// everything written.
func serveAll(t *testing.T, d *testDisp, opts Options, lopts LineOptions, input string) string {
	t.Helper()
	var out syncBuffer
	if opts.ErrorData == nil {
		opts.ErrorData = cidErrorData(testCID)
	}
	c := NewConn(NewLine(strings.NewReader(input), &out, lopts), d, opts)
	if err := c.Serve(context.Background()); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if err := c.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// golden compiles an expected output where M stands for any JSON string
// content (an error message).
func golden(want string) *regexp.Regexp {
	return regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(want), "M", `(?:[^"\\]|\\.)*`) + "$")
}

func errLine(id, code, cid string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":` + code + `,"message":"M","data":{"correlationId":"` + cid + `"}}}` + "\n"
}

func okLine(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":{}}` + "\n" }

func req(id, method string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"}` + "\n"
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// feedReader is a transport's input the test feeds chunk by chunk: Read
// returns what was fed and then blocks until more is fed or Close is
// called (then io.EOF). Fed chunks are read before the close is seen.
type feedReader struct {
	chunks chan []byte
	cur    []byte
	done   chan struct{}
	once   sync.Once
}

func newFeedReader(chunks ...string) *feedReader {
	f := &feedReader{chunks: make(chan []byte, 1024), done: make(chan struct{})}
	for _, c := range chunks {
		f.feed(c)
	}
	return f
}

func (f *feedReader) feed(s string) { f.chunks <- []byte(s) }

func (f *feedReader) Read(p []byte) (int, error) {
	for len(f.cur) == 0 {
		select {
		case f.cur = <-f.chunks:
			continue
		default:
		}
		select {
		case f.cur = <-f.chunks:
		case <-f.done:
			return 0, io.EOF
		}
	}
	n := copy(p, f.cur)
	f.cur = f.cur[n:]
	return n, nil
}

func (f *feedReader) Close() error {
	f.once.Do(func() { close(f.done) })
	return nil
}

// lineSink is a transport's output that splits what is written into lines.
// With a gate, every Write waits until the gate is closed; entered is
// closed when the first Write begins.
type lineSink struct {
	gate    chan struct{}
	entered chan struct{}
	once    sync.Once
	lines   chan string

	mu  sync.Mutex
	buf []byte
}

func newLineSink(gated bool) *lineSink {
	s := &lineSink{lines: make(chan string, 100000), entered: make(chan struct{})}
	if gated {
		s.gate = make(chan struct{})
	}
	return s
}

func (s *lineSink) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.entered) })
	if s.gate != nil {
		<-s.gate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		s.lines <- string(s.buf[:i])
		s.buf = s.buf[i+1:]
	}
}

// next returns the next line written, failing the test after 10 s.
func (s *lineSink) next(t *testing.T) string {
	t.Helper()
	select {
	case l := <-s.lines:
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no output line within 10s")
		return ""
	}
}

// none fails the test if a line was written and not yet read.
func (s *lineSink) none(t *testing.T, why string) {
	t.Helper()
	select {
	case l := <-s.lines:
		t.Fatalf("%s, yet got %s", why, l)
	default:
	}
}

// recStream is a Stream that records every Outgoing as it was handed over
// and reads the messages the test sends.
type recStream struct {
	in   chan []byte
	out  chan Outgoing
	done chan struct{}
	once sync.Once
}

func newRecStream() *recStream {
	return &recStream{in: make(chan []byte, 64), out: make(chan Outgoing, 1024), done: make(chan struct{})}
}

func (s *recStream) Read() ([]byte, error) {
	select {
	case m := <-s.in:
		return m, nil
	case <-s.done:
		return nil, io.EOF
	}
}

func (s *recStream) Write(_ context.Context, m Outgoing) error {
	select {
	case <-s.done:
		return ErrClosed
	default:
	}
	m.Data = bytes.Clone(m.Data)
	s.out <- m
	return nil
}

func (s *recStream) Close() error {
	s.once.Do(func() { close(s.done) })
	return nil
}

func (s *recStream) send(msg string) { s.in <- []byte(msg) }

// next returns the next Outgoing, failing the test after 10 s.
func (s *recStream) next(t *testing.T) Outgoing {
	t.Helper()
	select {
	case m := <-s.out:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("nothing written within 10s")
		return Outgoing{}
	}
}

// serving is a Serve call running on its own goroutine.
type serving struct {
	done chan struct{}
	err  error // Serve's result, once done is closed
}

// wait returns Serve's result, failing the test after 10 s.
func (s *serving) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-s.done:
		return s.err
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return within 10s")
		return nil
	}
}

// serveConn starts c.Serve and arranges for the test's end to close c and
// wait for Serve and every handler.
func serveConn(t *testing.T, c *Conn) *serving {
	t.Helper()
	s := &serving{done: make(chan struct{})}
	go func() { s.err = c.Serve(context.Background()); close(s.done) }()
	t.Cleanup(func() {
		c.Close()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return within 10s of Close")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Wait(ctx); err != nil {
			t.Errorf("handlers still running 10s after Close: %v", err)
		}
	})
	return s
}

// lineConn is a Conn over a Line transport whose input the test feeds and
// whose output it reads line by line.
type lineConn struct {
	c      *Conn
	in     *feedReader
	out    *lineSink
	served *serving
}

func newLineConn(t *testing.T, d Dispatcher, opts Options, lopts LineOptions, gated bool) *lineConn {
	t.Helper()
	if opts.ErrorData == nil {
		opts.ErrorData = cidErrorData(testCID)
	}
	in, out := newFeedReader(), newLineSink(gated)
	c := NewConn(NewLine(in, out, lopts), d, opts)
	return &lineConn{c: c, in: in, out: out, served: serveConn(t, c)}
}

// responseID returns the id member of a response line.
func responseID(t *testing.T, line string) string {
	t.Helper()
	var m struct{ ID json.RawMessage }
	if err := json.Unmarshal([]byte(line), &m); err != nil || m.ID == nil {
		t.Fatalf("not a response: %.200s", line)
	}
	return string(m.ID)
}

// blocker is a handler that reports each request it starts and returns
// once released or cancelled.
type blocker struct {
	started chan string
	release chan struct{}
}

func newBlocker() *blocker {
	return &blocker{started: make(chan string, 100), release: make(chan struct{})}
}

func (b *blocker) route() Route {
	return Route{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		b.started <- req.ID.String()
		select {
		case <-b.release:
			return "released", nil
		case <-ctx.Done():
			return "cancelled", nil
		}
	})}
}
