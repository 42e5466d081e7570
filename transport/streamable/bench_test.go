package streamable

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// BenchmarkPostNoop serves a noop tools/call of an open session through
// the Handler itself (no network: an httptest.ResponseRecorder takes the
// answer), one call at a time: what the transport and the layers below
// cost per POST, with allocations.
func BenchmarkPostNoop(b *testing.B) {
	f := newFixture(b, fixtureOpts{})
	sid := f.open()
	hdr := http.Header{}
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Accept", "application/json, text/event-stream")
	hdr.Set("Mcp-Session-Id", sid)
	hdr.Set("MCP-Protocol-Version", "2025-11-25")
	body := []byte(`{"jsonrpc":"2.0","id":1000000,"method":"tools/call","params":{"name":"noop","arguments":{}}}`)
	idAt := bytes.Index(body, []byte("1000000"))
	b.ReportAllocs()
	n := 1000000
	for b.Loop() {
		n++
		copy(body[idAt:], strconv.Itoa(n)) // a new id each time, of the same length
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
		req.Header = hdr
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkServeNoop serves noop tools/calls of one session through Serve
// on a loopback listener, from a keep-alive net/http client in the same
// process, one call at a time: net/http's share included (both sides of
// it: ns/op and allocs/op count the client too).
func BenchmarkServeNoop(b *testing.B) {
	f := newFixture(b, fixtureOpts{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- f.h.Serve(ctx, ln) }()
	b.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			b.Errorf("Serve: %v", err)
		}
	})
	f.url = "http://" + ln.Addr().String()
	sid := f.open()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	url := f.url + "/mcp"
	body := []byte(`{"jsonrpc":"2.0","id":1000000,"method":"tools/call","params":{"name":"noop","arguments":{}}}`)
	idAt := bytes.Index(body, []byte("1000000"))
	b.ReportAllocs()
	n := 1000000
	for b.Loop() {
		n++
		copy(body[idAt:], strconv.Itoa(n))
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header = http.Header{
			"Content-Type":         {"application/json"},
			"Accept":               {"application/json, text/event-stream"},
			"Mcp-Session-Id":       {sid},
			"Mcp-Protocol-Version": {"2025-11-25"},
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d, %v", resp.StatusCode, err)
		}
	}
}
