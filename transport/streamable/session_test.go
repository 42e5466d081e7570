package streamable

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/mcp"
)

// TestFullSession runs a session over real HTTP: initialize, initialized,
// tools/list, tools/call answered as JSON and as an event stream that
// carries the call's own notification first, a GET stream that gets
// list_changed, DELETE, then 404.
func TestFullSession(t *testing.T) {
	f := newFixture(t, fixtureOpts{})

	resp := f.do(http.MethodPost, initBody)
	init := jsonAnswer(t, resp, http.StatusOK)
	sid := resp.Header.Get("Mcp-Session-Id")
	if len(sid) < 20 {
		t.Fatalf("Mcp-Session-Id %q: want a long random id", sid)
	}
	for _, c := range sid {
		if c < 0x21 || c > 0x7e {
			t.Fatalf("Mcp-Session-Id %q holds a character outside visible ASCII", sid)
		}
	}
	var ir struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(init.Result, &ir); err != nil || ir.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize result %s: want protocolVersion 2025-11-25", init.Result)
	}
	if resp := f.post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: status %d, want 202", resp.StatusCode)
	}

	list := jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), http.StatusOK)
	if string(list.ID) != "1" || !strings.Contains(string(list.Result), `"noop"`) {
		t.Fatalf("tools/list answer: id %s, result %s", list.ID, list.Result)
	}

	call := jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"noop"}}`), http.StatusOK)
	if string(call.ID) != `"a"` || call.Error != nil || !strings.Contains(string(call.Result), `"isError":false`) {
		t.Fatalf("tools/call noop: %+v result %s", call, call.Result)
	}

	// A call that notifies first is answered as an event stream: the
	// notification, then the response, then the end.
	sse := newSSE(t, f.post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notify"}}`))
	note := decodeWire(t, sse.must(t).data)
	if note.Method != "notifications/message" || note.ID != nil {
		t.Fatalf("first event: %+v, want the call's notifications/message", note)
	}
	res := sse.must(t)
	if m := decodeWire(t, res.data); string(m.ID) != "2" || m.Result == nil {
		t.Fatalf("second event %s: want the response to id 2", res.data)
	}
	if res.id == "" {
		t.Fatal("events carry no id")
	}
	sse.end(t)

	// The GET stream gets what belongs to no request.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	get := newSSE(t, f.send(f.request(ctx, http.MethodGet, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")))
	type empty struct{}
	if err := mcp.AddTypedTool(f.srv, mcp.Tool{Name: "late", Description: "added while serving"},
		func(context.Context, *mcp.CallToolRequest, empty) (empty, error) { return empty{}, nil }); err != nil {
		t.Fatal(err)
	}
	if m := decodeWire(t, get.must(t).data); m.Method != "notifications/tools/list_changed" {
		t.Fatalf("GET stream: %+v, want notifications/tools/list_changed", m)
	}
	cancel()

	if resp := f.do(http.MethodDelete, "", "Mcp-Session-Id", sid); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: status %d, want 204", resp.StatusCode)
	}
	gone := jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`), http.StatusNotFound)
	if gone.Error == nil {
		t.Fatal("a request of a deleted session: want a JSON-RPC error body")
	}
	if n := f.h.Sessions(); n != 0 {
		t.Fatalf("%d sessions open after DELETE, want 0", n)
	}
}

// TestSSEMode answers even a plain call as an event stream.
func TestSSEMode(t *testing.T) {
	f := newFixture(t, fixtureOpts{http: func(c *Config) { c.ResponseMode = ResponseSSE }})
	resp := f.do(http.MethodPost, initBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no Mcp-Session-Id on an event-stream answer to initialize")
	}
	sse := newSSE(t, resp)
	if m := decodeWire(t, sse.must(t).data); string(m.ID) != "0" || m.Result == nil {
		t.Fatalf("initialize over an event stream: %+v", m)
	}
	sse.end(t)
	f.post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	sse = newSSE(t, f.post(sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noop"}}`))
	if m := decodeWire(t, sse.must(t).data); string(m.ID) != "1" || m.Result == nil {
		t.Fatalf("tools/call over an event stream: %+v", m)
	}
	sse.end(t)
}

// TestJSONModeSendsRelatedMessagesToGET keeps the POST answer a single
// JSON body; the call's own notification goes to the GET stream.
func TestJSONModeSendsRelatedMessagesToGET(t *testing.T) {
	f := newFixture(t, fixtureOpts{http: func(c *Config) { c.ResponseMode = ResponseJSON }})
	sid := f.open()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	get := newSSE(t, f.send(f.request(ctx, http.MethodGet, "", "Mcp-Session-Id", sid)))
	m := jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notify"}}`), http.StatusOK)
	if string(m.ID) != "1" {
		t.Fatalf("answer %+v, want the response to id 1", m)
	}
	if n := decodeWire(t, get.must(t).data); n.Method != "notifications/message" {
		t.Fatalf("GET stream: %+v, want the call's notification", n)
	}
}

// TestCancelledRequestEndsItsPOST: after notifications/cancelled the POST
// of the cancelled request ends without a response.
func TestCancelledRequestEndsItsPOST(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	sid := f.open()
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := f.ts.Client().Do(f.request(context.Background(), http.MethodPost,
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"steps","arguments":{"before":0,"after":0}}}`,
			"Mcp-Session-Id", sid))
		if err != nil {
			t.Error(err)
			close(done)
			return
		}
		done <- resp
	}()
	<-f.started // the call is running
	if resp := f.post(sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: status %d", resp.StatusCode)
	}
	resp := <-done
	if resp == nil {
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("the cancelled request's POST: status %d, want 204: %s", resp.StatusCode, readAll(t, resp))
	}
	// The session goes on.
	if m := jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":8,"method":"ping"}`), http.StatusOK); m.Result == nil {
		t.Fatalf("ping after the cancellation: %+v", m)
	}
}

// TestBatches: the 2025-03-26 revision has batches (one array answer);
// later ones answer a batch with one -32600.
func TestBatches(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	resp := f.do(http.MethodPost, strings.Replace(initBody, "2025-11-25", "2025-03-26", 1))
	sid := resp.Header.Get("Mcp-Session-Id")
	readAll(t, resp)
	hdr := []string{"Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-03-26"}
	if resp := f.do(http.MethodPost, `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`, hdr...); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("a batch of one notification: status %d, want 202", resp.StatusCode)
	}
	resp = f.do(http.MethodPost, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"noop"}}]`, hdr...)
	body := readAll(t, resp)
	var answers []wire
	if err := json.Unmarshal([]byte(body), &answers); err != nil || len(answers) != 2 || resp.StatusCode != http.StatusOK {
		t.Fatalf("batch answer: status %d: %s", resp.StatusCode, body)
	}
	// A batch element's own notification comes first, on the batch's event
	// stream, and the array answer ends it.
	sse := newSSE(t, f.do(http.MethodPost, `[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"notify"}},{"jsonrpc":"2.0","id":4,"method":"ping"}]`, hdr...))
	if m := decodeWire(t, sse.must(t).data); m.Method != "notifications/message" {
		t.Fatalf("first event of the batch stream: %+v", m)
	}
	if ev := sse.must(t); !strings.HasPrefix(ev.data, "[") {
		t.Fatalf("second event %s: want the batch's array answer", ev.data)
	}
	sse.end(t)

	sid2 := f.open()
	m := jsonAnswer(t, f.post(sid2, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`), http.StatusOK)
	if m.Error == nil || m.Error.Code != -32600 || !strings.Contains(m.Error.Message, "batch") {
		t.Fatalf("a batch under 2025-11-25: %+v, want -32600 about batches", m)
	}
}

// TestIdleExpiryCountsFromTheLastRequest: the idle timer is re-armed
// lazily, yet a session expires exactly the idle timeout after its last
// request ended, however many requests came since the timer was armed.
func TestIdleExpiryCountsFromTheLastRequest(t *testing.T) {
	f := newFixture(t, fixtureOpts{http: func(c *Config) { c.SessionIdleTimeout = time.Minute }})
	sid := f.open()
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	steps := []struct {
		advance time.Duration
		ping    bool
		open    bool
	}{
		{advance: 40 * time.Second, ping: true, open: true},   // t=40s: a request; expiry moves to 100s
		{advance: 30 * time.Second, ping: true, open: true},   // t=70s: the first timer (60s) re-armed; expiry 130s
		{advance: 59 * time.Second, open: true},               // t=129s
		{advance: time.Second - time.Millisecond, open: true}, // just before 130s
		{advance: time.Millisecond, open: false},              // t=130s: expired
	}
	for i, st := range steps {
		f.clock.Advance(st.advance)
		if got := f.h.sessionByID(sid) != nil; got != st.open {
			t.Fatalf("step %d: session open = %v, want %v", i, got, st.open)
		}
		if st.ping {
			jsonAnswer(t, f.post(sid, ping), http.StatusOK)
		}
	}
	if n := f.clock.Timers(); n != 0 {
		t.Fatalf("%d timers still armed after the session expired", n)
	}
}
