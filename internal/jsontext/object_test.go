package jsontext

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

var scanNames = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// checkScanObject fails t when ScanObject takes a text that encoding/json
// would not decode into the same members: the text must be valid JSON and
// UTF-8, an object with only the known names, once each, and every value
// must be the exact bytes encoding/json keeps as a json.RawMessage.
func checkScanObject(t *testing.T, b []byte) bool {
	t.Helper()
	vals := make([][]byte, len(scanNames))
	if !ScanObject(b, scanNames, vals) {
		return false
	}
	if !json.Valid(b) || !utf8.Valid(b) {
		t.Fatalf("%q: taken, but not valid JSON and UTF-8", b)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%q: taken, but encoding/json says %v", b, err)
	}
	n := 0
	for i, name := range scanNames {
		want, ok := m[name]
		if ok != (vals[i] != nil) || !bytes.Equal(want, vals[i]) {
			t.Fatalf("%q: member %s = %q, encoding/json has %q (present %v)", b, name, vals[i], want, ok)
		}
		if ok {
			n++
		}
	}
	if n != len(m) {
		t.Fatalf("%q: taken with %d known members, encoding/json has %d", b, n, len(m))
	}
	return true
}

func TestScanObject(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,-2.5E+3,"\u00e9\n",true,false,null]}}`, true},
		{` {} `, true},
		{`{"id" : "x" }`, true},
		{`{"id":1,"id":1}`, false},
		{`{"ID":1}`, false},
		{`{"i\u0064":1}`, false},
		{`{"other":1}`, false},
		{`[]`, false},
		{`{"id":1}x`, false},
		{`{"id":1,}`, false},
		{`{"id":-}`, false},
		{`{"id":1.}`, false},
		{`{"id":1e}`, false},
		{`{"id":00}`, false},
		{`{"id":"\u12"}`, false},
		{`{"id":tru}`, false},
		{"{\"id\":\"\x01\"}", false},
		{"{\"id\":\"\xc3\"}", false},
		{`{"params":{"a":1,}}`, false},
		{`{"params":{"a" 1}}`, false},
		{`{"params":[1 2]}`, false},
	} {
		if got := checkScanObject(t, []byte(tc.in)); got != tc.want {
			t.Errorf("ScanObject(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// FuzzScanObject: whatever ScanObject takes, encoding/json decodes into
// exactly the members it reports.
func FuzzScanObject(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noop","arguments":{}}}`))
	f.Add([]byte(`{"id":"\ud800","result":[{"a":"b"},[],{}]}`))
	f.Add([]byte(`{"error":{"code":-1,"message":"\"\\"}}`))
	f.Fuzz(func(t *testing.T, b []byte) { checkScanObject(t, b) })
}
