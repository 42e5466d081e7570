package jsonrpc

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// batchAnswer is one element of a batch's answer.
type batchAnswer struct {
	ID     json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// TestBatchResponseBound: the elements whose responses would make a
// batch's answer longer than Options.MaxBatchResponseBytes are answered
// with -32603 naming the bound instead; every element still gets exactly
// one answer, whether the elements run in order or at once.
func TestBatchResponseBound(t *testing.T) {
	const bound, n = 300, 8
	res := CompactJSON(`"` + strings.Repeat("r", 80) + `"`) // a response of about 120 bytes
	tests := []struct {
		name   string
		route  Route
		wantOK int // -1: at least one
	}{
		{"inline", inline(func(context.Context, *Request) (any, error) { return res, nil }), 2},
		{"concurrent", Route{Handler: HandlerFunc(func(context.Context, *Request) (any, error) { return res, nil })}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newTestDisp(true).handle("r", tt.route)
			var elems []string
			for i := range n {
				elems = append(elems, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"r"}`)
			}
			p := newLineConn(t, d, Options{MaxBatchResponseBytes: bound}, LineOptions{}, false)
			p.in.feed("[" + strings.Join(elems, ",") + "]\n" + req(`"last"`, "ping"))
			lines := []string{p.out.next(t), p.out.next(t)}
			if lines[0][0] != '[' { // the batch's elements may finish after the ping
				lines[0], lines[1] = lines[1], lines[0]
			}
			if lines[1]+"\n" != okLine(`"last"`) {
				t.Fatalf("output %.300s", lines)
			}
			var answers []batchAnswer
			if err := json.Unmarshal([]byte(lines[0]), &answers); err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			ok, okBytes := 0, 0
			for _, a := range answers {
				seen[string(a.ID)]++
				switch {
				case a.Error == nil:
					ok++
					okBytes += len(`{"jsonrpc":"2.0","id":`) + len(a.ID) + len(`,"result":`) + len(a.Result) + len("}\n")
				case a.Error.Code != CodeInternalError || !strings.Contains(a.Error.Message, strconv.Itoa(bound)):
					t.Fatalf("element %s: %v; want -32603 naming the bound", a.ID, a.Error)
				}
			}
			for i := range n {
				if seen[strconv.Itoa(i)] != 1 {
					t.Fatalf("answers by id %v; want each of 0-%d once", seen, n-1)
				}
			}
			if (tt.wantOK >= 0 && ok != tt.wantOK) || ok == 0 || okBytes > bound {
				t.Fatalf("%d results of %d bytes in all; want %d within %d bytes", ok, okBytes, tt.wantOK, bound)
			}
		})
	}
}

// TestClientTextIsClipped: what an error message repeats of a client's
// message (a method name, a member's value) is clipped, however long it
// was; the id alone is echoed whole.
func TestClientTextIsClipped(t *testing.T) {
	huge := strings.Repeat("m", 1<<20)
	long := strings.Repeat("v", 64<<10)
	array := "[" + strings.Repeat("1,", 32<<10) + "1]"
	tests := []struct {
		name, in string
		code     int64
	}{
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"` + huge + `"}`, CodeMethodNotFound},
		{"unknown method in a batch", `[{"jsonrpc":"2.0","id":1,"method":"` + huge + `"}]`, CodeMethodNotFound},
		{"jsonrpc value", `{"jsonrpc":"` + long + `","id":1,"method":"ping"}`, CodeInvalidRequest},
		{"method value", `{"jsonrpc":"2.0","id":1,"method":` + array + `}`, CodeInvalidRequest},
		{"id value", `{"jsonrpc":"2.0","id":` + array + `,"method":"ping"}`, CodeInvalidRequest},
		{"params value", `{"jsonrpc":"2.0","id":1,"method":"ping","params":"` + long + `"}`, CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := serveAll(t, newTestDisp(true), Options{}, LineOptions{}, tt.in+"\n")
			if len(out) > 1024 {
				t.Fatalf("a %d-byte answer to a %d-byte message", len(out), len(tt.in))
			}
			var r batchAnswer
			if err := json.Unmarshal([]byte(strings.Trim(out, "[]\n")), &r); err != nil || r.Error == nil || r.Error.Code != tt.code {
				t.Fatalf("answer %s, want error %d", out, tt.code)
			}
			if len(r.Error.Message) > 400 {
				t.Fatalf("a message of %d bytes: %.300s", len(r.Error.Message), r.Error.Message)
			}
			if tt.code == CodeMethodNotFound && !clippedName.MatchString(r.Error.Message) {
				t.Fatalf("the method is not named, clipped: %s", r.Error.Message)
			}
		})
	}
}

// clippedName matches a method name clipped to about a hundred bytes.
var clippedName = regexp.MustCompile(`"m{100,128}…"`)

// TestDuplicateIDMessageIsClipped: the -32600 for an id still in flight
// echoes the id whole in its id member, and clipped in its message.
func TestDuplicateIDMessageIsClipped(t *testing.T) {
	b := newBlocker()
	d := newTestDisp(false).handle("block", b.route())
	p := newLineConn(t, d, Options{}, LineOptions{}, false)
	id := `"` + strings.Repeat("z", 256<<10) + `"`
	p.in.feed(`{"jsonrpc":"2.0","id":` + id + `,"method":"block"}` + "\n")
	<-b.started
	p.in.feed(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` + "\n")
	var r batchAnswer
	if err := json.Unmarshal([]byte(p.out.next(t)), &r); err != nil || r.Error == nil || r.Error.Code != CodeInvalidRequest {
		t.Fatalf("duplicate id: %v %v", err, r.Error)
	}
	if string(r.ID) != id {
		t.Fatalf("the id was not echoed whole (%d bytes of %d)", len(r.ID), len(id))
	}
	if len(r.Error.Message) > 300 || !strings.Contains(r.Error.Message, "in flight") {
		t.Fatalf("message of %d bytes: %.300s", len(r.Error.Message), r.Error.Message)
	}
	close(b.release)
	if got := responseID(t, p.out.next(t)); got != id {
		t.Fatal("the first request's answer is not for its id")
	}
}
