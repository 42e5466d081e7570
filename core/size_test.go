package core

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestCompactLen(t *testing.T) {
	inputs := []string{
		``,
		`{}`,
		`  {  }  `,
		"{\n\t\"a\" : 1 ,\r\n \"b\" : [ 1 , 2 ]\n}",
		`"plain"`,
		`"with spaces inside  and \t tab escapes"`,
		`"escaped \" quote"`,
		`{"a":"\"","b" : "x"}`,
		`["\\", "a"]`,
		`["\\\"", " "]`,
		`["\\\\", " \\ "]`,
		`{"k": "ends with backslash\\"  , "n" : null}`,
		`"\u0041 \ud83c\udf89"`,
		`"日本語 with spaces"  `,
		`[ true , false , null , -1.5e+10 , 0 ]`,
		`{"nested": {"deep": [ { "x" : " y " } ] } }`,
		"\"a\tb\"", // raw tab inside a string (invalid JSON, still counted)
	}
	for _, in := range inputs {
		want := len(in)
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(in)); err == nil {
			want = buf.Len()
		} else if in != "" && in != "\"a\tb\"" {
			t.Fatalf("test input %q is not valid JSON: %v", in, err)
		} else if in == "" {
			want = 0
		}
		if got := CompactLen([]byte(in)); got != want {
			t.Errorf("CompactLen(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestCompactLenRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	g := &valueGen{rng}
	for i := range 300 {
		v := map[string]any{"v": g.value(0), "s": strings.Repeat(`\" `, rng.IntN(4))}
		raw, err := json.MarshalIndent(v, strings.Repeat(" ", i%3), strings.Repeat("\t", i%2+1))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			t.Fatal(err)
		}
		if got := CompactLen(raw); got != buf.Len() {
			t.Fatalf("CompactLen(%s) = %d, want %d", raw, got, buf.Len())
		}
	}
}

func TestCompactLenNoAlloc(t *testing.T) {
	raw := []byte(`{ "a" : [ 1, 2, "x \" y" ] }`)
	if n := testing.AllocsPerRun(100, func() { _ = CompactLen(raw) }); n != 0 {
		t.Errorf("CompactLen allocated %v times", n)
	}
}

func TestJSONSize(t *testing.T) {
	tests := []any{
		nil,
		"",
		"héllo <b> & 🎉",
		42,
		map[string]any{"a": []any{1, "two", nil}, "b": true},
		testCreds{User: "u", Headers: map[string]string{"x": "y"}},
		json.RawMessage(`{ "spaced" : 1 }`),
	}
	for _, v := range tests {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		if err := e.Encode(v); err != nil {
			t.Fatal(err)
		}
		enc := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		got, err := JSONSize(v)
		if err != nil || got != len(enc) {
			t.Errorf("JSONSize(%#v) = %d, %v; want %d", v, got, err, len(enc))
		}
	}
	for _, bad := range []any{make(chan int), math.NaN(), map[string]any{"f": func() {}}} {
		if n, err := JSONSize(bad); err == nil || !strings.Contains(err.Error(), "measure JSON size") {
			t.Errorf("JSONSize(%T) = %d, %v; want a wrapped error", bad, n, err)
		}
	}
}

func BenchmarkCompactLen(b *testing.B) {
	raw := bytes.Repeat([]byte(`{"key": "value with \"escapes\" and spaces", "n": [1, 2, 3]}, `), 1000)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		_ = CompactLen(raw)
	}
}
