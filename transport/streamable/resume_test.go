package streamable

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestResumeRequestStream: a client that lost a call's event stream gets
// the rest with GET and Last-Event-ID: the events after that id, replayed,
// then the live ones and the response, then the end.
func TestResumeRequestStream(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	sid := f.open()
	ctx, cancel := context.WithCancel(context.Background())
	sse := newSSE(t, f.send(f.request(ctx, http.MethodPost,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"steps","arguments":{"before":2,"after":2}}}`,
		"Mcp-Session-Id", sid)))
	first, second := sse.must(t), sse.must(t)
	<-f.started
	cancel() // the connection drops mid-call
	close(f.release)

	resumed := newSSE(t, f.do(http.MethodGet, "", "Mcp-Session-Id", sid, "Last-Event-ID", first.id))
	if ev := resumed.must(t); ev != second {
		t.Fatalf("first resumed event %+v, want the replay of %+v", ev, second)
	}
	for want := 2; want < 4; want++ {
		m := decodeWire(t, resumed.must(t).data)
		if m.Method != "notifications/message" || !strings.Contains(string(m.Params), `"data":`+strconv.Itoa(want)) {
			t.Fatalf("event %d: %+v %s", want, m, m.Params)
		}
	}
	if m := decodeWire(t, resumed.must(t).data); string(m.ID) != "1" || m.Result == nil {
		t.Fatalf("last event: %+v, want the response", m)
	}
	resumed.end(t)
}

// TestServerClosesStreamMidCall: a tool ends its request's event stream
// (CloseStream); the client saw the priming event, reconnects with its id,
// and gets the response.
func TestServerClosesStreamMidCall(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	sid := f.open()
	sse := newSSE(t, f.post(sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reconnect"}}`))
	priming, err := sse.raw()
	if err != nil || priming.data != "" || !strings.HasSuffix(priming.id, "-0") {
		t.Fatalf("first event %+v (%v): want a priming event with id <stream>-0 and empty data", priming, err)
	}
	sse.end(t)
	<-f.started
	close(f.release)
	resumed := newSSE(t, f.do(http.MethodGet, "", "Mcp-Session-Id", sid, "Last-Event-ID", priming.id))
	if m := decodeWire(t, resumed.must(t).data); string(m.ID) != "1" || m.Result == nil {
		t.Fatalf("after reconnecting: %+v, want the response", m)
	}
	resumed.end(t)
	if f.h.CloseStream(context.Background(), f.h.sessionByID(sid).sess) {
		t.Fatal("CloseStream outside a request reported a stream")
	}
}

// TestNoPrimingBefore20251125: older revisions get no empty-data event.
func TestNoPrimingBefore20251125(t *testing.T) {
	f := newFixture(t, fixtureOpts{http: func(c *Config) { c.ResponseMode = ResponseSSE }})
	resp := f.do(http.MethodPost, strings.Replace(initBody, "2025-11-25", "2025-06-18", 1))
	sid := resp.Header.Get("Mcp-Session-Id")
	readAll(t, resp)
	sse := newSSE(t, f.do(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-06-18"))
	if ev, err := sse.raw(); err != nil || ev.data == "" {
		t.Fatalf("first event %+v (%v): want the response, no priming event", ev, err)
	}
}

// TestResumeGETStream: messages sent while the GET stream was away wait
// in it and come on resumption; a bad Last-Event-ID is 400.
func TestResumeGETStream(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	sid := f.open()
	broadcast := func(n string) {
		t.Helper()
		jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":`+n+`,"method":"tools/call","params":{"name":"broadcast","arguments":{"count":2,"bytes":1}}}`), http.StatusOK)
	}
	ctx, cancel := context.WithCancel(context.Background())
	get := newSSE(t, f.send(f.request(ctx, http.MethodGet, "", "Mcp-Session-Id", sid)))
	broadcast("1")
	a, _ := get.must(t), get.must(t)
	cancel()
	st := f.h.sessionByID(sid).newestStandalone()
	waitStream(t, st, func(st *stream) bool { return !st.attached })
	broadcast("2")

	resumed := newSSE(t, f.do(http.MethodGet, "", "Mcp-Session-Id", sid, "Last-Event-ID", a.id))
	var ids []string
	for range 3 {
		ids = append(ids, resumed.must(t).id)
	}
	if ids[0] == a.id || ids[0] == ids[1] || ids[1] == ids[2] {
		t.Fatalf("resumed ids %v after %s: want the three later events", ids, a.id)
	}

	jsonAnswer(t, f.do(http.MethodGet, "", "Mcp-Session-Id", sid, "Last-Event-ID", "garbage"), http.StatusBadRequest)
}

// TestSeveralGETStreams: each message that belongs to no request goes to
// one GET stream only (the newest being read).
func TestSeveralGETStreams(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	sid := f.open()
	s := f.h.sessionByID(sid)
	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	get1 := newSSE(t, f.send(f.request(ctx1, http.MethodGet, "", "Mcp-Session-Id", sid)))
	first := s.newestStandalone()
	waitStream(t, first, func(st *stream) bool { return st.attached })
	ctx2, cancel2 := context.WithCancel(context.Background())
	get2 := newSSE(t, f.send(f.request(ctx2, http.MethodGet, "", "Mcp-Session-Id", sid)))
	second := s.newestStandalone()
	if second == first {
		t.Fatal("the second GET reads the same stream as the first")
	}
	waitStream(t, second, func(st *stream) bool { return st.attached })

	jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"broadcast","arguments":{"count":3,"bytes":1}}}`), http.StatusOK)
	for range 3 {
		get2.must(t)
	}
	first.mu.Lock()
	n := len(first.events)
	first.mu.Unlock()
	if n != 0 {
		t.Fatalf("the first GET stream got %d of the messages the second one got", n)
	}
	cancel2()
	waitStream(t, second, func(st *stream) bool { return !st.attached })
	jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"broadcast","arguments":{"count":1,"bytes":1}}}`), http.StatusOK)
	if m := decodeWire(t, get1.must(t).data); m.Method != "notifications/message" {
		t.Fatalf("the first GET stream after the second closed: %+v", m)
	}
}
