package jsonrpc

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestReusedDecoderMatchesFreshDecode: the connection's decoder, reused
// line after line (valid, invalid, non-object, over-deep), decodes each line
// exactly as a fresh Decode does.
func TestReusedDecoderMatchesFreshDecode(t *testing.T) {
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a","arguments":{"k":[1,2,{"z":"}"}]}}}`,
		`not json`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`42`,
		`{"jsonrpc":"2.0","id":1.0,"result":{"a":1}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"m","data":[1]}}`,
		`{"jsonrpc":"2.0","method":"notifications/x","params":[1,"2"]}`,
		`{"jsonrpc":"2.0","id":4,"Method":"ping"}`,
		`{"jsonrpc":"2.0","id":5,"method":"ping","params":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
		`{"jsonrpc":"2.0","id":6,"method":"ping"} {}`,
		`{ "jsonrpc" : "2.0" , "id" : 7 , "method" : "ping" }`,
		`{"jsonrpc":"2.0","id":8,"method":"ping"}`,
	}
	var d Decoder
	for round := range 3 {
		for _, line := range lines {
			got, gerr := d.Decode([]byte(line))
			want, werr := Decode([]byte(line))
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gerr, werr) {
				t.Fatalf("round %d, line %.60s: reused decoder gave %#v %#v, fresh gave %#v %#v", round, line, got, gerr, want, werr)
			}
		}
	}
}

// TestDecodeInPlaceMatchesDecode: a reused decoder's DecodeInPlace gives,
// for generated envelopes with random white space around and inside them
// (and the lines of the test above), what a fresh Decode gives, and the
// params and result it returns are slices of the message, not copies.
func TestDecodeInPlaceMatchesDecode(t *testing.T) {
	r := newPropRand(17)
	g := propGen{r}
	space := func() string { return []string{"", "", " ", "\t", "\r\n ", "  "}[r.Intn(6)] }
	var d Decoder
	for i := range 3000 {
		var e propEnvelope
		g.envelope(&e)
		var b strings.Builder
		b.WriteString(space() + "{" + space())
		for k, m := range e.members {
			if k > 0 {
				b.WriteString("," + space())
			}
			b.WriteString(strconv.Quote(m.key) + space() + ":" + space() + m.raw + space())
		}
		b.WriteString("}" + space())
		line := []byte(b.String())
		want, werr := Decode(line)
		got, gerr := d.DecodeInPlace(line)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gerr, werr) {
			t.Fatalf("line %d %s: DecodeInPlace gave %#v %#v, Decode gave %#v %#v", i, line, got, gerr, want, werr)
		}
		var kept []byte
		switch m := got.(type) {
		case *Request:
			kept = m.Params
		case *Notification:
			kept = m.Params
		case *Response:
			kept = m.Result
		}
		if c, ok := want.(*Request); ok && len(c.Params) > 0 {
			before := string(c.Params)
			clear(line) // the message changes: what aliases it changes too
			if string(c.Params) != before {
				t.Fatalf("line %d: Decode's params alias the line", i)
			}
			if len(kept) == 0 || kept[0] != 0 {
				t.Fatalf("line %d: DecodeInPlace's params %s are a copy, not a slice of the message", i, kept)
			}
		}
	}
}
