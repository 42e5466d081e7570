package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const testCID = "conn-cid"

// testRouter has one method of each kind.
func testRouter() *Router {
	r := NewRouter(RouterConfig{Initialized: "initialized"})
	inline := func(f HandlerFunc) Handler { return f }
	r.Handle("initialize", Method{Phase: PhaseHandshake, Inline: true, Handler: inline(
		func(context.Context, *Request) (any, error) { return map[string]string{"ok": "init"}, nil })})
	r.Handle("ping", Method{Phase: PhaseAlways, Inline: true, Handler: inline(
		func(context.Context, *Request) (any, error) { return json.RawMessage(`{}`), nil })})
	r.Handle("echo", Method{Inline: true, Handler: inline(
		func(_ context.Context, req *Request) (any, error) { return req.Params, nil })})
	r.Handle("badparams", Method{Inline: true, Handler: inline(
		func(context.Context, *Request) (any, error) { return nil, NewError(CodeInvalidParams, "bad") })})
	r.Handle("fail", Method{Inline: true, Handler: inline(
		func(context.Context, *Request) (any, error) { return nil, errors.New("boom") })})
	r.Handle("panic", Method{Inline: true, Handler: inline(
		func(context.Context, *Request) (any, error) { panic("kaboom") })})
	r.Handle("silent", Method{Inline: true, Handler: inline(
		func(context.Context, *Request) (any, error) { return nil, ErrNoResponse })})
	r.Handle("compact", Method{Inline: true, Handler: inline(
		func(context.Context, *Request) (any, error) { return CompactJSON(`{"a":[1,"x y"]}`), nil })})
	r.Handle("unencodable", Method{Inline: true, Handler: inline(
		func(context.Context, *Request) (any, error) { return func() {}, nil })})
	return r
}

// metaCID reads params._meta.correlationId, as the mcp layer does.
func metaCID(params json.RawMessage) string {
	var p struct {
		Meta struct {
			CorrelationID string `json:"correlationId"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Meta.CorrelationID
}

// serveAll runs a connection over input in the given state and returns
// everything it wrote. All handlers in testRouter are inline, so the output
// order is the input order.
func serveAll(t *testing.T, st State, batching bool, opts Options, input string) string {
	t.Helper()
	var out bytes.Buffer
	opts.CorrelationID = testCID
	opts.RequestCorrelationID = metaCID
	c := NewConn(strings.NewReader(input), &out, testRouter(), opts)
	c.state.Store(int32(st))
	c.SetBatching(batching)
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

func errLine(id string, code string, cid string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":` + code + `,"message":"M","data":{"correlationId":"` + cid + `"}}}` + "\n"
}

func TestGoldenWire(t *testing.T) {
	const ok = `{"jsonrpc":"2.0","id":%s,"result":{}}` + "\n"
	okID := func(id string) string { return strings.Replace(ok, "%s", id, 1) }
	tests := []struct {
		name  string
		state State
		batch bool
		in    string
		want  string
	}{
		// Framing.
		{"blank lines ignored", StateRunning, false, "\n  \t \n\r\n", ""},
		{"crlf tolerated", StateRunning, false, `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\r\n", okID("1")},
		{"no newline at end is a fragment", StateRunning, false, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, ""},
		// Parse errors.
		{"not json", StateRunning, false, "{\n", errLine("null", "-32700", testCID)},
		{"trailing garbage", StateRunning, false, `{"jsonrpc":"2.0","id":1,"method":"ping"} x` + "\n", errLine("null", "-32700", testCID)},
		{"two objects", StateRunning, false, `{} {}` + "\n", errLine("null", "-32700", testCID)},
		{"invalid utf8", StateRunning, false, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}\n", errLine("null", "-32700", testCID)},
		{"nul byte", StateRunning, false, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\x00ng\"}\n", errLine("null", "-32700", testCID)},
		{"too deep", StateRunning, false, `{"jsonrpc":"2.0","id":1,"method":"echo","params":[` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + "]}\n", errLine("null", "-32700", testCID)},
		// Invalid requests.
		{"scalar", StateRunning, false, "42\n", errLine("null", "-32600", testCID)},
		{"string", StateRunning, false, `"x"` + "\n", errLine("null", "-32600", testCID)},
		{"missing jsonrpc", StateRunning, false, `{"id":1,"method":"ping"}` + "\n", errLine("1", "-32600", testCID)},
		{"wrong jsonrpc", StateRunning, false, `{"jsonrpc":"1.0","id":1,"method":"ping"}` + "\n", errLine("1", "-32600", testCID)},
		{"jsonrpc number", StateRunning, false, `{"jsonrpc":2,"id":1,"method":"ping"}` + "\n", errLine("1", "-32600", testCID)},
		{"escaped jsonrpc ok", StateRunning, false, `{"jsonrpc":"2\u002e0","id":1,"method":"ping"}` + "\n", okID("1")},
		{"method not string", StateRunning, false, `{"jsonrpc":"2.0","id":1,"method":1}` + "\n", errLine("1", "-32600", testCID)},
		{"id object", StateRunning, false, `{"jsonrpc":"2.0","id":{},"method":"ping"}` + "\n", errLine("null", "-32600", testCID)},
		{"id array", StateRunning, false, `{"jsonrpc":"2.0","id":[1],"method":"ping"}` + "\n", errLine("null", "-32600", testCID)},
		{"id bool", StateRunning, false, `{"jsonrpc":"2.0","id":true,"method":"ping"}` + "\n", errLine("null", "-32600", testCID)},
		{"params string", StateRunning, false, `{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}` + "\n", errLine("1", "-32600", testCID)},
		{"params null", StateRunning, false, `{"jsonrpc":"2.0","id":1,"method":"ping","params":null}` + "\n", errLine("1", "-32600", testCID)},
		{"duplicate id", StateRunning, false, `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}` + "\n", errLine("null", "-32600", testCID)},
		{"duplicate method", StateRunning, false, `{"jsonrpc":"2.0","id":7,"method":"ping","method":"ping"}` + "\n", errLine("7", "-32600", testCID)},
		{"case variant Method", StateRunning, false, `{"jsonrpc":"2.0","id":7,"Method":"ping"}` + "\n", errLine("7", "-32600", testCID)},
		{"case variant ID", StateRunning, false, `{"jsonrpc":"2.0","ID":7,"method":"ping"}` + "\n", errLine("null", "-32600", testCID)},
		{"case variant beside exact", StateRunning, false, `{"jsonrpc":"2.0","id":7,"method":"ping","METHOD":"x"}` + "\n", errLine("7", "-32600", testCID)},
		{"unknown member ignored", StateRunning, false, `{"jsonrpc":"2.0","id":7,"method":"ping","extra":{"a":[1]}}` + "\n", okID("7")},
		{"request with result", StateRunning, false, `{"jsonrpc":"2.0","id":7,"method":"ping","result":{}}` + "\n", errLine("7", "-32600", testCID)},
		{"neither method nor result", StateRunning, false, `{"jsonrpc":"2.0","id":7}` + "\n", errLine("7", "-32600", testCID)},
		{"response with both", StateRunning, false, `{"jsonrpc":"2.0","id":7,"result":1,"error":{"code":1,"message":"x"}}` + "\n", errLine("7", "-32600", testCID)},
		{"invalid request keeps client correlation", StateRunning, false, `{"jsonrpc":"1","id":7,"method":"ping","params":{"_meta":{"correlationId":"c-1"}}}` + "\n", errLine("7", "-32600", "c-1")},
		// Id echo, byte for byte.
		{"id big", StateRunning, false, `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}` + "\n", okID("9007199254740993")},
		{"id 1.0", StateRunning, false, `{"jsonrpc":"2.0","id":1.0,"method":"ping"}` + "\n", okID("1.0")},
		{"id -0", StateRunning, false, `{"jsonrpc":"2.0","id":-0,"method":"ping"}` + "\n", okID("-0")},
		{"id exponent", StateRunning, false, `{"jsonrpc":"2.0","id":1e400,"method":"ping"}` + "\n", okID("1e400")},
		{"id string", StateRunning, false, `{"jsonrpc":"2.0","id":"x","method":"ping"}` + "\n", okID(`"x"`)},
		{"id escaped string", StateRunning, false, `{"jsonrpc":"2.0","id":"a\u0041\"","method":"ping"}` + "\n", okID(`"a\u0041\""`)},
		{"id long string", StateRunning, false, `{"jsonrpc":"2.0","id":"` + strings.Repeat("z", 5000) + `","method":"ping"}` + "\n", okID(`"` + strings.Repeat("z", 5000) + `"`)},
		{"id null", StateRunning, false, `{"jsonrpc":"2.0","id":null,"method":"ping"}` + "\n", okID("null")},
		// Methods and handler outcomes.
		{"unknown method", StateRunning, false, `{"jsonrpc":"2.0","id":1,"method":"nope"}` + "\n", errLine("1", "-32601", testCID)},
		{"unknown method client cid", StateRunning, false, `{"jsonrpc":"2.0","id":1,"method":"nope","params":{"_meta":{"correlationId":"c-2"}}}` + "\n", errLine("1", "-32601", "c-2")},
		{"invalid params", StateRunning, false, `{"jsonrpc":"2.0","id":1,"method":"badparams"}` + "\n", errLine("1", "-32602", testCID)},
		{"handler error", StateRunning, false, `{"jsonrpc":"2.0","id":1,"method":"fail"}` + "\n", errLine("1", "-32603", testCID)},
		{"panic then serve", StateRunning, false, `{"jsonrpc":"2.0","id":1,"method":"panic"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n", errLine("1", "-32603", testCID) + okID("2")},
		{"unencodable result", StateRunning, false, `{"jsonrpc":"2.0","id":1,"method":"unencodable"}` + "\n", errLine("1", "-32603", testCID)},
		{"compact result sent as is", StateRunning, false, `{"jsonrpc":"2.0","id":1,"method":"compact"}` + "\n", `{"jsonrpc":"2.0","id":1,"result":{"a":[1,"x y"]}}` + "\n"},
		{"no response", StateRunning, false, `{"jsonrpc":"2.0","id":1,"method":"silent"}` + "\n", ""},
		{"params echoed compact", StateRunning, false, `{"jsonrpc":"2.0","id":1,"method":"echo","params":{ "a" : [ 1, 2 ] }}` + "\n", `{"jsonrpc":"2.0","id":1,"result":{"a":[1,2]}}` + "\n"},
		// Notifications never get a response.
		{"notification", StateRunning, false, `{"jsonrpc":"2.0","method":"ping"}` + "\n", ""},
		{"unknown notification", StateRunning, false, `{"jsonrpc":"2.0","method":"nope","params":[1]}` + "\n", ""},
		{"unmatched response dropped", StateRunning, false, `{"jsonrpc":"2.0","id":99,"result":{}}` + "\n", ""},
		// Lifecycle gate.
		{"gate starting", StateStarting, false, `{"jsonrpc":"2.0","id":1,"method":"echo"}` + "\n", errLine("1", "-32002", testCID)},
		{"gate unknown method", StateInitializing, false, `{"jsonrpc":"2.0","id":1,"method":"nope"}` + "\n", errLine("1", "-32002", testCID)},
		{"ping before init", StateStarting, false, `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n", okID("1")},
		{"handshake then gate then running", StateStarting, false,
			`{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n" +
				`{"jsonrpc":"2.0","id":2,"method":"echo"}` + "\n" +
				`{"jsonrpc":"2.0","method":"initialized"}` + "\n" +
				`{"jsonrpc":"2.0","id":3,"method":"echo","params":[]}` + "\n" +
				`{"jsonrpc":"2.0","id":4,"method":"initialize"}` + "\n",
			`{"jsonrpc":"2.0","id":1,"result":{"ok":"init"}}` + "\n" + errLine("2", "-32002", testCID) +
				`{"jsonrpc":"2.0","id":3,"result":[]}` + "\n" + errLine("4", "-32600", testCID)},
		{"initialized in starting ignored", StateStarting, false,
			`{"jsonrpc":"2.0","method":"initialized"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"echo"}` + "\n",
			errLine("2", "-32002", testCID)},
		// Batches.
		{"batch off", StateRunning, false, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n", errLine("null", "-32600", testCID)},
		{"batch invalid json", StateRunning, true, `[{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n", errLine("null", "-32700", testCID)},
		{"batch empty", StateRunning, true, "[]\n", errLine("null", "-32600", testCID)},
		{"batch mixed", StateRunning, true,
			`[{"jsonrpc":"2.0","id":1,"method":"ping"},1,{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","id":2,"method":"nope"}]` + "\n",
			`[{"jsonrpc":"2.0","id":1,"result":{}},` + strings.TrimSuffix(errLine("null", "-32600", testCID), "\n") + "," +
				strings.TrimSuffix(errLine("2", "-32601", testCID), "\n") + "]\n"},
		{"batch of notifications", StateRunning, true, `[{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","method":"x"}]` + "\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := serveAll(t, tt.state, tt.batch, Options{}, tt.in)
			if !golden(tt.want).MatchString(got) {
				t.Errorf("input %.200q\n got: %.400s\nwant: %.400s", tt.in, got, tt.want)
			}
			for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				if line != "" && !json.Valid([]byte(line)) {
					t.Errorf("output line is not valid JSON: %q", line)
				}
			}
		})
	}
}

func TestLineTooLong(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"echo","params":["` + strings.Repeat("a", 300) + `"]}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	got := serveAll(t, StateRunning, false, Options{MaxMessageBytes: 100}, in)
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"M","data":{"correlationId":"conn-cid","maxMessageBytes":100}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"
	if !golden(want).MatchString(got) {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// pipeConn runs a Conn over pipes; the test writes lines and reads replies.
type pipeConn struct {
	c   *Conn
	in  *io.PipeWriter
	out *bufioLines
}

type bufioLines struct {
	mu    sync.Mutex
	lines chan string
	buf   []byte
}

func (b *bufioLines) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	for {
		i := bytes.IndexByte(b.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		b.lines <- string(b.buf[:i])
		b.buf = b.buf[i+1:]
	}
}

func newPipeConn(t *testing.T, r *Router, opts Options) *pipeConn {
	t.Helper()
	pr, pw := io.Pipe()
	out := &bufioLines{lines: make(chan string, 10000)}
	opts.CorrelationID = testCID
	c := NewConn(pr, out, r, opts)
	c.state.Store(int32(StateRunning))
	done := make(chan struct{})
	go func() { _ = c.Serve(context.Background()); close(done) }()
	t.Cleanup(func() { pw.Close(); <-done; _ = c.Wait(context.Background()) })
	return &pipeConn{c: c, in: pw, out: out}
}

func (p *pipeConn) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (p *pipeConn) expect(t *testing.T) string {
	t.Helper()
	select {
	case l := <-p.out.lines:
		return l
	case <-time.After(5 * time.Second):
		t.Fatal("no output line within 5s")
		return ""
	}
}

func blockingRouter(started chan<- string, release <-chan struct{}) *Router {
	r := testRouter()
	r.Handle("block", Method{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		started <- req.ID.String()
		select {
		case <-release:
			return "released", nil
		case <-ctx.Done():
			return "cancelled", nil
		}
	})})
	return r
}

func TestConcurrentDispatchAndDuplicateID(t *testing.T) {
	started := make(chan string, 10)
	release := make(chan struct{})
	p := newPipeConn(t, blockingRouter(started, release), Options{})
	p.send(t, `{"jsonrpc":"2.0","id":"a","method":"block"}`)
	<-started
	// A slow request does not block ping.
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if got := p.expect(t); got != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("ping: %s", got)
	}
	// The same id while "a" is in flight is refused.
	p.send(t, `{"jsonrpc":"2.0","id":"a","method":"ping"}`)
	if got := p.expect(t); !strings.Contains(got, `"id":"a","error":{"code":-32600`) || !strings.Contains(got, "in flight") {
		t.Fatalf("duplicate: %s", got)
	}
	close(release)
	if got := p.expect(t); got != `{"jsonrpc":"2.0","id":"a","result":"released"}` {
		t.Fatalf("release: %s", got)
	}
}

func TestCancelSuppressesResponse(t *testing.T) {
	started := make(chan string, 10)
	p := newPipeConn(t, blockingRouter(started, nil), Options{})
	p.send(t, `{"jsonrpc":"2.0","id":1.0,"method":"block"}`)
	<-started
	if p.c.Cancel(Int64ID(1), errors.New("x")) {
		t.Fatal("id 1 must not match id 1.0")
	}
	var id ID
	_ = json.Unmarshal([]byte("1.0"), &id)
	if !p.c.Cancel(id, errors.New("x")) {
		t.Fatal("Cancel(1.0) found nothing in flight")
	}
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if got := p.expect(t); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("expected only the ping's response, got %s", got)
	}
}

func TestBackpressure(t *testing.T) {
	started := make(chan string, 10)
	release := make(chan struct{})
	p := newPipeConn(t, blockingRouter(started, release), Options{MaxInFlight: 2})
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"block"}`)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"block"}`)
	<-started
	<-started
	// The third request is not read until a slot frees: its write to the
	// pipe blocks (the reader is not reading), so send it asynchronously.
	sent := make(chan struct{})
	go func() { p.send(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); close(sent) }()
	select {
	case l := <-p.out.lines:
		t.Fatalf("a response while at the bound: %s", l)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	seen := map[string]bool{}
	for range 3 {
		seen[p.expect(t)] = true
	}
	<-sent
	if !seen[`{"jsonrpc":"2.0","id":3,"result":{}}`] {
		t.Fatalf("ping not answered after release: %v", seen)
	}
}

func TestOutgoingCallAndNotify(t *testing.T) {
	p := newPipeConn(t, testRouter(), Options{})
	if err := p.c.Notify("notifications/x", map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if got := p.expect(t); got != `{"jsonrpc":"2.0","method":"notifications/x","params":{"a":1}}` {
		t.Fatalf("notify: %s", got)
	}
	res := make(chan string, 1)
	go func() {
		r, err := p.c.Call(context.Background(), "roots/list", nil)
		if err != nil {
			res <- err.Error()
			return
		}
		res <- string(r)
	}()
	req := p.expect(t)
	var m struct{ ID json.RawMessage }
	_ = json.Unmarshal([]byte(req), &m)
	p.send(t, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"roots":[]}}`)
	if got := <-res; got != `{"roots":[]}` {
		t.Fatalf("call result: %s", got)
	}
}

func TestCloseStopsOutput(t *testing.T) {
	started := make(chan string, 10)
	release := make(chan struct{})
	p := newPipeConn(t, blockingRouter(started, release), Options{})
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"block"}`)
	<-started
	p.c.Close()
	if p.c.State() != StateClosed {
		t.Fatal("not CLOSED")
	}
	_ = p.c.Wait(context.Background())
	select {
	case l := <-p.out.lines:
		t.Fatalf("wrote after close: %s", l)
	case <-time.After(50 * time.Millisecond):
	}
	if err := p.c.Notify("x", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Notify after close: %v", err)
	}
}

// TestHandoffUnderLoad mixes handlers slower and faster than the hand-off:
// the reader role passes between goroutines many times, yet every request
// gets exactly one response and (under -race) no two goroutines read at
// once.
func TestHandoffUnderLoad(t *testing.T) {
	r := testRouter()
	r.Handle("nap", Method{Handler: HandlerFunc(func(_ context.Context, req *Request) (any, error) {
		var us int
		_ = json.Unmarshal(req.Params, &[]any{&us})
		time.Sleep(time.Duration(us) * time.Microsecond)
		return us, nil
	})})
	p := newPipeConn(t, r, Options{})
	const n = 300
	go func() {
		for i := range n {
			us := []int{0, 50, 150, 400, 2000}[i%5]
			p.send(t, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"nap","params":[`+strconv.Itoa(us)+`]}`)
		}
	}()
	seen := map[string]bool{}
	for range n {
		var m struct{ ID json.RawMessage }
		line := p.expect(t)
		if err := json.Unmarshal([]byte(line), &m); err != nil || seen[string(m.ID)] {
			t.Fatalf("bad or repeated response %s", line)
		}
		seen[string(m.ID)] = true
	}
}

// TestPipelinedWorkerKeepsEveryRequest floods the connection with requests
// written in one piece (so the reader always has more input buffered),
// mixing slow handlers that force hand-offs: every request gets exactly one
// response.
func TestPipelinedFloodKeepsEveryRequest(t *testing.T) {
	r := testRouter()
	r.Handle("nap", Method{Handler: HandlerFunc(func(_ context.Context, req *Request) (any, error) {
		var us int
		_ = json.Unmarshal(req.Params, &[]any{&us})
		time.Sleep(time.Duration(us) * time.Microsecond)
		return us, nil
	})})
	p := newPipeConn(t, r, Options{MaxInFlight: 64})
	const n = 2000
	var all strings.Builder
	for i := range n {
		us := []int{0, 0, 0, 300, 0, 1500}[i%6]
		all.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"nap","params":[` + strconv.Itoa(us) + `]}` + "\n")
	}
	go func() { _, _ = io.WriteString(p.in, all.String()) }()
	seen := map[string]bool{}
	for range n {
		var m struct{ ID json.RawMessage }
		line := p.expect(t)
		if err := json.Unmarshal([]byte(line), &m); err != nil || seen[string(m.ID)] {
			t.Fatalf("bad or repeated response %s", line)
		}
		seen[string(m.ID)] = true
	}
}
