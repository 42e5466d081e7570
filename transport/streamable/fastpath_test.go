package streamable

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/mcp"
)

// TestAcceptsAnswers: the shortcut for the usual Accept header agrees with
// parsing the header for each of the two types.
func TestAcceptsAnswers(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   bool
	}{
		{nil, true},
		{[]string{"application/json, text/event-stream"}, true},
		{[]string{"text/event-stream, application/json"}, true},
		{[]string{"application/json,text/event-stream"}, true},
		{[]string{"application/json", "text/event-stream"}, true},
		{[]string{"*/*"}, true},
		{[]string{"application/*, text/*"}, true},
		{[]string{"application/json"}, false},
		{[]string{"text/event-stream"}, false},
		{[]string{"application/json, text/event-stream;q=0"}, false},
		{[]string{"application/json, text/html"}, false},
		{[]string{""}, false},
	} {
		r := &http.Request{Header: http.Header{}}
		if tc.values != nil {
			r.Header["Accept"] = tc.values
		}
		want := acceptable(r, "application/json") && acceptable(r, "text/event-stream")
		if want != tc.want {
			t.Fatalf("table error: Accept %q: parsing says %v", tc.values, want)
		}
		if got := acceptsAnswers(r); got != tc.want {
			t.Errorf("acceptsAnswers(Accept %q) = %v, want %v", tc.values, got, tc.want)
		}
	}
}

// TestIsLoopbackName: the allocation-free parse agrees with net.ParseIP's
// notion of a loopback name.
func TestIsLoopbackName(t *testing.T) {
	reference := func(name string) bool {
		if name == "localhost" {
			return true
		}
		ip := net.ParseIP(name)
		return ip != nil && ip.IsLoopback()
	}
	for _, name := range []string{
		"localhost", "127.0.0.1", "127.1.2.3", "127.0.0.01", "127.1", "::1", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1",
		"::ffff:7f00:1", "::1%lo", "fe80::1%eth0", "10.0.0.1", "::2", "0.0.0.0", "::", "example.com", "",
		"LOCALHOST", "127.0.0.1.", "[::1]", "1.2.3.4.5", "::ffff:10.0.0.1",
	} {
		if got, want := isLoopbackName(name), reference(name); got != want {
			t.Errorf("isLoopbackName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestWithNewline: a message followed by its own newline is extended in
// place; anything else is copied, and the original is never written to.
func TestWithNewline(t *testing.T) {
	frame := []byte("{}\n")
	if got := withNewline(frame[:2]); string(got) != "{}\n" || &got[0] != &frame[0] {
		t.Errorf("a trimmed frame: got %q (copied: %v), want it extended in place", got, &got[0] != &frame[0])
	}
	other := []byte("{}x")
	if got := withNewline(other[:2]); string(got) != "{}\n" || string(other) != "{}x" {
		t.Errorf("a frame followed by another byte: got %q, original now %q", got, other)
	}
	if got := withNewline([]byte("{}")); string(got) != "{}\n" {
		t.Errorf("a full slice: got %q", got)
	}
}

// TestJSONAnswerSizes: a JSON answer carries its exact Content-Length and
// is not chunked, whether it fits net/http's buffer or not, and its body
// is the response and one newline.
func TestJSONAnswerSizes(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	type echoIn struct {
		N int `json:"n"`
	}
	type echoOut struct {
		Text string `json:"text"`
	}
	if err := mcp.AddTypedTool(f.srv, mcp.Tool{Name: "pad", Description: "answers n bytes of text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (echoOut, error) {
			return echoOut{Text: strings.Repeat("x", in.N)}, nil
		}); err != nil {
		t.Fatal(err)
	}
	sid := f.open()
	for i, n := range []int{0, 1000, inlineBody, 3 * inlineBody, 100_000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			f.t = t
			resp := f.post(sid, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i+10)+`,"method":"tools/call","params":{"name":"pad","arguments":{"n":`+
				strconv.Itoa(n)+`}}}`)
			if len(resp.TransferEncoding) != 0 {
				t.Errorf("Transfer-Encoding %q, want none (a Content-Length)", resp.TransferEncoding)
			}
			body := readAll(t, resp)
			if resp.ContentLength != int64(len(body)) {
				t.Errorf("Content-Length %d, body %d bytes", resp.ContentLength, len(body))
			}
			if !strings.HasSuffix(body, "}\n") || strings.Count(body, "\n") != 1 {
				t.Errorf("body does not end in the message and one newline: ...%q", body[max(0, len(body)-20):])
			}
			var m wire
			if err := json.Unmarshal([]byte(body), &m); err != nil || m.Result == nil {
				t.Fatalf("answer %q: %v", body[:min(len(body), 200)], err)
			}
			if !strings.Contains(string(m.Result), strings.Repeat("x", n)+`"`) {
				t.Errorf("the result does not carry the %d bytes", n)
			}
		})
	}
}
