package jsonrpc

import (
	"io"
	"reflect"
	"strings"
	"testing"
)

// TestLineSourceInsertsOnlyTopLevelSpaces reads through buffers of every
// small size: the decoder must see the line with a space before each
// top-level ',', ':' and '}', and nothing else changed.
func TestLineSourceInsertsOnlyTopLevelSpaces(t *testing.T) {
	line := `{"a":"x,:}\"","b":{"c":[1,{"d":":"}]},"e":-1.5e3}`
	want := `{"a" :"x,:}\"" ,"b" :{"c":[1,{"d":":"}]} ,"e" :-1.5e3 }`
	for size := 1; size <= len(want)+1; size++ {
		var s lineSource
		s.reset([]byte(line))
		var got []byte
		buf := make([]byte, size)
		for {
			n, err := s.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
		}
		if string(got) != want {
			t.Fatalf("size %d: got %s, want %s", size, got, want)
		}
	}
}

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
