package streamable

import (
	"bytes"
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
