package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestConcurrentDispatchAndDuplicateID: a slow request does not hold up
// the next one, and a request whose id is still in flight is refused with
// -32600 whatever its method, without reaching the dispatcher.
func TestConcurrentDispatchAndDuplicateID(t *testing.T) {
	b := newBlocker()
	d := newTestDisp(false).handle("block", b.route())
	p := newLineConn(t, d, Options{}, LineOptions{}, false)
	p.in.feed(`{"jsonrpc":"2.0","id":"a","method":"block"}` + "\n")
	<-b.started
	p.in.feed(req("1", "ping"))
	if got := p.out.next(t); got+"\n" != okLine("1") {
		t.Fatalf("ping: %s", got)
	}
	routed := d.routed.Load()
	for _, method := range []string{"ping", "nope"} {
		p.in.feed(`{"jsonrpc":"2.0","id":"a","method":"` + method + `"}` + "\n")
		got := p.out.next(t)
		if !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":"a","error":{"code":-32600`) || !strings.Contains(got, "in flight") {
			t.Fatalf("duplicate id with method %s: %s", method, got)
		}
	}
	if n := d.routed.Load(); n != routed {
		t.Fatalf("a request with a duplicate id reached the dispatcher (%d routes, want %d)", n, routed)
	}
	close(b.release)
	if got := p.out.next(t); got != `{"jsonrpc":"2.0","id":"a","result":"released"}` {
		t.Fatalf("release: %s", got)
	}
	// Once answered, the id may be used again.
	p.in.feed(`{"jsonrpc":"2.0","id":"a","method":"ping"}` + "\n")
	if got := p.out.next(t); got+"\n" != okLine(`"a"`) {
		t.Fatalf("reused id: %s", got)
	}
}

// TestCancelSuppressesResponse: Conn.Cancel matches ids as text, cancels
// the handler's context with the given cause, and the handler's answer is
// not sent.
func TestCancelSuppressesResponse(t *testing.T) {
	b := newBlocker()
	causes := make(chan error, 1)
	d := newTestDisp(false).handle("block", Route{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		b.started <- req.ID.String()
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return "cancelled", nil
	})})
	p := newLineConn(t, d, Options{}, LineOptions{}, false)
	p.in.feed(`{"jsonrpc":"2.0","id":1.0,"method":"block"}` + "\n")
	<-b.started
	errPeer := errors.New("the peer cancelled")
	if p.c.Cancel(Int64ID(1), errPeer) {
		t.Fatal("id 1 must not match id 1.0")
	}
	var id ID
	_ = json.Unmarshal([]byte("1.0"), &id)
	if !p.c.Cancel(id, errPeer) {
		t.Fatal("Cancel(1.0) found nothing in flight")
	}
	if cause := <-causes; cause != errPeer {
		t.Fatalf("context cause %v, want the Cancel's", cause)
	}
	// Once every handler has returned, whatever it wrote precedes the
	// answer to a later request.
	if err := p.c.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.in.feed(req("2", "ping"))
	if got := p.out.next(t); got+"\n" != okLine("2") {
		t.Fatalf("expected only the ping's response, got %s", got)
	}
	if p.c.Cancel(id, errPeer) {
		t.Fatal("Cancel found a request that has finished")
	}
}

// TestInFlightBackpressure: at MaxInFlight the reader stops reading until a
// request completes; then every request is answered.
func TestInFlightBackpressure(t *testing.T) {
	b := newBlocker()
	d := newTestDisp(false).handle("block", b.route())
	d.seen = make(chan string, 100)
	p := newLineConn(t, d, Options{MaxInFlight: 2}, LineOptions{}, false)
	p.in.feed(req("1", "block") + req("2", "block"))
	<-b.started
	<-b.started
	p.in.feed(req("3", "ping") + req("4", "ping"))
	for _, want := range []string{"block", "block", "ping"} {
		if got := <-d.seen; got != want {
			t.Fatalf("routed %s, want %s", got, want)
		}
	}
	// Both tokens are held by the blocked handlers: the reader waits for
	// one in dispatch, so request 3 is not run and request 4 not read.
	p.out.none(t, "at the bound nothing is answered")
	if n := d.routed.Load(); n != 3 {
		t.Fatalf("%d requests routed at the bound, want 3", n)
	}
	close(b.release)
	seen := map[string]int{}
	for range 4 {
		seen[responseID(t, p.out.next(t))]++
	}
	for _, id := range []string{"1", "2", "3", "4"} {
		if seen[id] != 1 {
			t.Fatalf("responses by id %v; want each of 1-4 once", seen)
		}
	}
}

// TestCloseStopsOutput: Close cancels running handlers with ErrClosed,
// drops their answers, makes Serve return, and refuses outgoing messages.
func TestCloseStopsOutput(t *testing.T) {
	b := newBlocker()
	causes := make(chan error, 1)
	d := newTestDisp(false).handle("block", Route{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		b.started <- req.ID.String()
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return "after close", nil
	})})
	p := newLineConn(t, d, Options{}, LineOptions{}, false)
	p.in.feed(req("1", "block"))
	<-b.started
	p.c.Close()
	if !p.c.Closed() {
		t.Fatal("not closed")
	}
	<-p.c.Done()
	if cause := <-causes; !errors.Is(cause, ErrClosed) {
		t.Fatalf("handler's context cause %v, want ErrClosed", cause)
	}
	if err := p.served.wait(t); err != nil {
		t.Fatalf("Serve after Close: %v", err)
	}
	if err := p.c.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.out.none(t, "nothing is written after Close")
	if err := p.c.Notify(context.Background(), "x", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Notify after close: %v", err)
	}
	if _, err := p.c.Call(context.Background(), "x", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Call after close: %v", err)
	}
	p.c.Close() // twice is fine
}

// napRoute sleeps for params[0] microseconds: a handler that is faster or
// slower than the hand-off.
func napRoute() Route {
	return Route{Handler: HandlerFunc(func(_ context.Context, req *Request) (any, error) {
		var us int
		_ = json.Unmarshal(req.Params, &[]any{&us})
		time.Sleep(time.Duration(us) * time.Microsecond)
		return us, nil
	})}
}

// TestHandoffUnderLoad mixes handlers slower and faster than the hand-off:
// the reader role passes between goroutines many times, yet every request
// gets exactly one response and (under -race) no two goroutines read at
// once.
func TestHandoffUnderLoad(t *testing.T) {
	d := newTestDisp(false).handle("nap", napRoute())
	p := newLineConn(t, d, Options{}, LineOptions{}, false)
	const n = 300
	go func() {
		for i := range n {
			us := []int{0, 50, 150, 400, 2000}[i%5]
			p.in.feed(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"nap","params":[` + strconv.Itoa(us) + `]}` + "\n")
		}
	}()
	expectEachOnce(t, p.out, n)
}

// TestPipelinedFloodKeepsEveryRequest floods the connection with requests
// written in one piece (so the reader always has more input buffered and
// output gathers), mixing slow handlers that force hand-offs: every request
// gets exactly one response.
func TestPipelinedFloodKeepsEveryRequest(t *testing.T) {
	d := newTestDisp(false).handle("nap", napRoute())
	p := newLineConn(t, d, Options{MaxInFlight: 64}, LineOptions{}, false)
	const n = 2000
	var all strings.Builder
	for i := range n {
		us := []int{0, 0, 0, 300, 0, 1500}[i%6]
		all.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"nap","params":[` + strconv.Itoa(us) + `]}` + "\n")
	}
	p.in.feed(all.String())
	expectEachOnce(t, p.out, n)
}

// expectEachOnce reads n responses and checks their ids are 0..n-1, each
// once.
func expectEachOnce(t *testing.T, out *lineSink, n int) {
	t.Helper()
	seen := map[string]bool{}
	for range n {
		id := responseID(t, out.next(t))
		if seen[id] {
			t.Fatalf("a second response for id %s", id)
		}
		seen[id] = true
	}
	for i := range n {
		if !seen[strconv.Itoa(i)] {
			t.Fatalf("no response for id %d", i)
		}
	}
}

// TestWaitTimeoutLeavesNoGoroutine: Conn.Wait that gives up while a
// handler runs leaves no goroutine behind, however often it is called,
// and a later Wait still sees the handler return.
func TestWaitTimeoutLeavesNoGoroutine(t *testing.T) {
	b := newBlocker()
	d := newTestDisp(false).handle("block", b.route())
	p := newLineConn(t, d, Options{}, LineOptions{}, false)
	p.in.feed(`{"jsonrpc":"2.0","id":"a","method":"block"}` + "\n")
	<-b.started
	expired, cancel := context.WithCancel(context.Background())
	cancel()
	before := runtime.NumGoroutine()
	for range 100 {
		if err := p.c.Wait(expired); !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait with a running handler and a done context = %v, want context.Canceled", err)
		}
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Fatalf("%d goroutines after 100 timed-out waits, %d before", after, before)
	}
	close(b.release)
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := p.c.Wait(ctx); err != nil {
		t.Fatalf("Wait after the handler returned: %v", err)
	}
}

// TestReusedFramesKeepEachAnswer: over a Line the connection encodes
// responses into buffers it reuses once the stream is done with them.
// Pipelined requests whose handlers return results of every kind and size
// (CompactJSON, json.RawMessage, values; some after a hand-off, so that
// several responses are encoded at once) each get their own result,
// whole: no buffer is reused while a response still needs it.
func TestReusedFramesKeepEachAnswer(t *testing.T) {
	d := newTestDisp(false).handle("echo", Route{Handler: HandlerFunc(func(_ context.Context, req *Request) (any, error) {
		var p struct {
			N, Pad int
			Kind   string
			Nap    int
		}
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, err
		}
		time.Sleep(time.Duration(p.Nap) * time.Microsecond)
		body := fmt.Sprintf(`{"n":%d,"pad":%q}`, p.N, strings.Repeat("x", p.Pad))
		switch p.Kind {
		case "compact":
			return CompactJSON(body), nil
		case "raw":
			return json.RawMessage(" " + body + " "), nil
		}
		return map[string]any{"n": p.N, "pad": strings.Repeat("x", p.Pad)}, nil
	})})
	p := newLineConn(t, d, Options{MaxInFlight: 64}, LineOptions{}, false)
	const n = 600
	var all strings.Builder
	for i := range n {
		fmt.Fprintf(&all, `{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"n":%d,"pad":%d,"kind":%q,"nap":%d}}`+"\n",
			i, i, []int{0, 10, 300, 2000, 9000}[i%5], []string{"compact", "raw", "value"}[i%3], []int{0, 0, 0, 0, 300}[i%7%5])
	}
	p.in.feed(all.String())
	seen := map[int]bool{}
	for range n {
		line := p.out.next(t)
		var m struct {
			ID     int
			Result struct {
				N   int
				Pad string
			}
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a response: %.200s", line)
		}
		if m.Result.N != m.ID || len(m.Result.Pad) != []int{0, 10, 300, 2000, 9000}[m.ID%5] || seen[m.ID] {
			t.Fatalf("response %d carries the result of %d (pad %d) or came twice", m.ID, m.Result.N, len(m.Result.Pad))
		}
		seen[m.ID] = true
	}
}
