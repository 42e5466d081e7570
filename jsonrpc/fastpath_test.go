package jsonrpc

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// fastPathCases are envelopes that the fast path takes (fast) or leaves to
// the reference decoder, each of which both paths must answer alike.
var fastPathCases = []struct {
	name string
	line string
	fast bool
}{
	{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noop","arguments":{}}}`, true},
	{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, true},
	{"result", `{"jsonrpc":"2.0","id":"a","result":{"x":[1,2.5e-3,true,false,null]}}`, true},
	{"error response", `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"m","data":{"k":"v"}}}`, true},
	{"error not an object", `{"jsonrpc":"2.0","id":2,"error":[1]}`, true},
	{"error code a string", `{"jsonrpc":"2.0","id":2,"error":{"code":"-1","message":"m"}}`, true},
	{"whitespace everywhere", " \t\r\n{ \"jsonrpc\" :\t\"2.0\" ,\n\"id\" : 7 , \"method\" : \"ping\" , \"params\" : [ 1 , { } ] }\r\n ", true},
	{"empty object", `{}`, true},
	{"id 1.0", `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, true},
	{"id -0", `{"jsonrpc":"2.0","id":-0,"method":"ping"}`, true},
	{"id 1e3", `{"jsonrpc":"2.0","id":1E+3,"method":"ping"}`, true},
	{"id beyond float64", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, true},
	{"id huge exponent", `{"jsonrpc":"2.0","id":1e700,"method":"ping"}`, true},
	{"id null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, true},
	{"id string with escapes", `{"jsonrpc":"2.0","id":"a\"b\u00e9\/","method":"ping"}`, true},
	{"id object", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, true},
	{"id true", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, true},
	{"method null", `{"jsonrpc":"2.0","id":1,"method":null}`, true},
	{"method escaped", `{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`, true},
	{"params null", `{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`, true},
	{"params a string", `{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`, true},
	{"jsonrpc escaped", `{"jsonrpc":"2\u002e0","id":1,"method":"ping"}`, true},
	{"jsonrpc 2.1", `{"jsonrpc":"2.1","id":1,"method":"ping"}`, true},
	{"jsonrpc number", `{"jsonrpc":2.0,"id":1,"method":"ping"}`, true},
	{"missing jsonrpc", `{"id":1,"method":"ping"}`, true},
	{"result and error", `{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}`, true},
	{"response without id", `{"jsonrpc":"2.0","result":1}`, true},
	{"method with result", `{"jsonrpc":"2.0","id":1,"method":"ping","result":1}`, true},
	{"non-ASCII in params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"k":"héllo \u2028"}}`, true},

	{"escaped name", `{"jsonrpc":"2.0","\u0069d":1,"method":"ping"}`, false},
	{"escaped name, duplicate", `{"jsonrpc":"2.0","id":1,"\u0069d":2,"method":"ping"}`, false},
	{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, false},
	{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"x"}`, false},
	{"ID for id", `{"jsonrpc":"2.0","ID":1,"method":"ping"}`, false},
	{"Method for method", `{"jsonrpc":"2.0","id":1,"Method":"ping"}`, false},
	{"unknown member", `{"jsonrpc":"2.0","id":1,"method":"ping","extra":true}`, false},
	{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, false},
	{"empty batch", `[]`, false},
	{"number", `42`, false},
	{"null", `null`, false},
	{"two objects", `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, false},
	{"trailing comma", `{"jsonrpc":"2.0","id":1,"method":"ping",}`, false},
	{"unclosed", `{"jsonrpc":"2.0","id":1,"method":"ping"`, false},
	{"leading zero", `{"jsonrpc":"2.0","id":01,"method":"ping"}`, false},
	{"bad escape", `{"jsonrpc":"2.0","id":"\x","method":"ping"}`, false},
	{"control character", "{\"jsonrpc\":\"2.0\",\"id\":\"a\tb\",\"method\":\"ping\"}", false},
	{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}", false},
	{"deep params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, false},
	{"too deep for encoding/json", `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, false},
	{"blank", ` `, false},
	{"vertical tab", "\v{}", false},
}

// TestFastPathAgreesWithReference: for each case the fast path is taken
// exactly when expected, and Decode and DecodeInPlace answer as the
// reference decoder does.
func TestFastPathAgreesWithReference(t *testing.T) {
	for _, tc := range fastPathCases {
		t.Run(tc.name, func(t *testing.T) {
			var d Decoder
			_, _, fast := d.decodeFast([]byte(tc.line))
			if fast != tc.fast {
				t.Errorf("fast path taken = %v, want %v", fast, tc.fast)
			}
			checkAgreement(t, []byte(tc.line))
		})
	}
}

// checkAgreement fails t when Decode or DecodeInPlace of line differs from
// the reference decoder's answer, or when the fast path took a line that is
// not valid JSON and UTF-8.
func checkAgreement(t *testing.T, line []byte) {
	t.Helper()
	var ref Decoder
	want, werr := ref.decodeReference(append([]byte(nil), line...))
	var d Decoder
	got, gerr := d.Decode(append([]byte(nil), line...))
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gerr, werr) {
		t.Fatalf("line %q: Decode gave %#v %#v, the reference %#v %#v", line, got, gerr, want, werr)
	}
	got, gerr = d.DecodeInPlace(append([]byte(nil), line...))
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gerr, werr) {
		t.Fatalf("line %q: DecodeInPlace gave %#v %#v, the reference %#v %#v", line, got, gerr, want, werr)
	}
	if _, _, fast := d.decodeFast(line); fast && (!json.Valid(line) || !utf8.Valid(line)) {
		t.Fatalf("line %q: the fast path took a line that is not valid JSON and UTF-8", line)
	}
}

// FuzzDecodeFastPath: whatever the line, the decoder (fast path first)
// answers exactly as the reference encoding/json decoder does. Seeds: the
// table above and testdata/fuzz/FuzzDecodeFastPath.
func FuzzDecodeFastPath(f *testing.F) {
	for _, tc := range fastPathCases {
		f.Add([]byte(tc.line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkAgreement(t, line)
	})
}

// TestMethodNamesReused: a decoder hands out the same string for a method
// name it saw lately, and the right name whatever the order.
func TestMethodNamesReused(t *testing.T) {
	var d Decoder
	names := []string{"a", "tools/call", "ping", "a", "b", "c", "d", "e", "tools/call", "x\\/y"}
	for round := range 3 {
		for _, name := range names {
			got, ok := d.method([]byte(`"` + name + `"`))
			want, _ := unquote([]byte(`"` + name + `"`))
			if !ok || got != want {
				t.Fatalf("round %d: method(%q) = %q, %v; want %q", round, name, got, ok, want)
			}
		}
	}
	if got, ok := d.method([]byte(`1`)); ok {
		t.Fatalf("method(1) = %q, true; want false", got)
	}
}
