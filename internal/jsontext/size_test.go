package jsontext

import (
	"bytes"
	"encoding/json"
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

// randomValue is a random JSON value of strings (with quotes, backslashes
// and spaces), numbers, literals, arrays and objects, nested up to depth 4.
func randomValue(r *rand.Rand, depth int) any {
	k := r.IntN(8)
	if depth >= 4 {
		k %= 4
	}
	switch k {
	case 0:
		return strings.Repeat(`\" a`, r.IntN(3)) + oddStrings[r.IntN(len(oddStrings))]
	case 1:
		return r.NormFloat64() * 1e3
	case 2:
		return r.IntN(2) == 0
	case 3:
		return nil
	case 4, 5:
		a := make([]any, r.IntN(4))
		for i := range a {
			a[i] = randomValue(r, depth+1)
		}
		return a
	}
	m := map[string]any{}
	for range r.IntN(4) {
		m[oddStrings[r.IntN(len(oddStrings))]] = randomValue(r, depth+1)
	}
	return m
}

// CompactLen agrees with json.Compact on random values, indented.
func TestCompactLenRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 500 {
		raw, err := json.MarshalIndent(randomValue(r, 0), strings.Repeat(" ", i%3), strings.Repeat("\t", i%2+1))
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

func BenchmarkCompactLen(b *testing.B) {
	raw := bytes.Repeat([]byte(`{"key": "value with \"escapes\" and spaces", "n": [1, 2, 3]}, `), 1000)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		_ = CompactLen(raw)
	}
}
