package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

type encInner struct {
	A string `json:"a"`
	B int    `json:"b,omitempty"`
}

type encPtrMarshaler struct{ v string }

func (p *encPtrMarshaler) MarshalJSON() ([]byte, error) { return json.Marshal("ptr:" + p.v) }

type encZeroer struct{ n int }

func (z encZeroer) IsZero() bool { return z.n == 7 }

type encHidden struct{ Visible string }

type encOuter struct {
	encInner
	*encHidden
	Name    string            `json:"name"`
	Skip    string            `json:"-"`
	Empty   string            `json:",omitempty"`
	Zero    time.Time         `json:"zero,omitzero"`
	Opt     *int              `json:"opt,omitempty"`
	List    []string          `json:"list"`
	Map     map[string]any    `json:"map"`
	Bytes   []byte            `json:"bytes"`
	Arr     [2]byte           `json:"arr"`
	Raw     json.RawMessage   `json:"raw"`
	When    time.Time         `json:"when"`
	Marshal encPtrMarshaler   `json:"marshal"`
	Any     any               `json:"any"`
	Tags    map[string]string `json:"tags,omitempty"`
}

type encQuoted struct {
	N int `json:"n,string"`
}

type encZeroField struct {
	Z encZeroer `json:"z,omitzero"`
}

// stdJSON is what encoding/json writes for v without HTML escaping.
func stdJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// TestEncodeLimitedMatchesEncodingJSON: the walk writes what encoding/json
// writes, and fails at the limit, not a byte earlier.
func TestEncodeLimitedMatchesEncodingJSON(t *testing.T) {
	n := 3
	when := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	tests := []struct {
		name string
		v    any
	}{
		{"nil", nil},
		{"empty struct", struct{}{}},
		{"string escapes", "a\"b\\c\n\r\t\b\f\x01\x1f<>&\u2028\u2029\x7fé😀"},
		{"invalid UTF-8", "a\xffb\xc3"},
		{"long string", strings.Repeat("x\"", 40000)},
		{"numbers", []any{1, -2.5, 1e21, 1e-7, float32(0.1), uint8(7), json.Number("12")}},
		{"bytes", []byte("hello, world")},
		{"nil slice and map", struct {
			S []int
			M map[string]int
		}{}},
		{"map sorted", map[string]any{"b": 1, "a": []any{true, nil}, "é": "x", "A": map[string]int{}}},
		{"map int keys", map[int]string{10: "a", 2: "b"}},
		{"struct", encOuter{encInner: encInner{A: "in"}, Name: "n", Skip: "s", Opt: &n, List: []string{"x"},
			Map: map[string]any{"k": encInner{B: 2}}, Bytes: []byte{0, 255}, Arr: [2]byte{1, 2}, Raw: json.RawMessage(`{ "x" : 1 }`),
			When: when, Marshal: encPtrMarshaler{"v"}, Any: &encInner{A: "p"}}},
		{"struct via pointer (addressable)", &encOuter{Marshal: encPtrMarshaler{"addr"}, encHidden: &encHidden{"h"}}},
		{"slice of structs (addressable)", []encOuter{{Name: "a"}}},
		{"quoted field", encQuoted{N: 5}},
		{"omitzero with IsZero", []encZeroField{{encZeroer{7}}, {encZeroer{1}}}},
		{"content", CallToolResult{Content: []Content{TextContent(""), ImageContent("AA==", "image/png")}, StructuredContent: map[string]any{"a": 1}}},
		{"nested pointers", func() any { s := "x"; p := &s; return &p }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := stdJSON(t, tt.v)
			e := getEncoder()
			defer putEncoder(e)
			got, err := e.encodeLimited(tt.v, len(want))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("encodeLimited = %s, %v\nencoding/json = %s", got, err, want)
			}
			if _, err := e.encodeLimited(tt.v, len(want)-1); !errors.Is(err, errOverLimit) {
				t.Fatalf("with a limit one byte short: err = %v, want errOverLimit", err)
			}
		})
	}
}

func TestEncodeLimitedErrors(t *testing.T) {
	type cycle struct{ Next *cycle }
	c := &cycle{}
	c.Next = c
	for name, v := range map[string]any{"NaN": math.NaN(), "channel": make(chan int), "cycle": c, "NaN in a map": map[string]any{"a": math.Inf(1)}} {
		e := getEncoder()
		if _, err := e.encodeLimited(v, 1<<30); err == nil || errors.Is(err, errOverLimit) {
			t.Errorf("%s: err = %v, want an encoding error", name, err)
		}
		putEncoder(e)
	}
}

// TestEncodeLimitedMemory: a result far over the limit allocates about the
// limit (the buffer, grown by doubling up to the limit: under 3 times it),
// not the result's size.
func TestEncodeLimitedMemory(t *testing.T) {
	const limit = 1 << 20
	huge := strings.Repeat("x", 64<<20)
	many := make([]string, 1<<20)
	for i := range many {
		many[i] = "abcdefghijklmnop"
	}
	for name, v := range map[string]any{"64 MiB string": huge, "string in a struct": struct{ S string }{huge},
		"16 MiB of strings": many, "64 MiB of bytes": []byte(huge)} {
		e := getEncoder()
		var err error
		bytes, _ := allocation(func() { _, err = e.encodeLimited(v, limit) })
		putEncoder(e)
		if !errors.Is(err, errOverLimit) {
			t.Fatalf("%s: err = %v, want errOverLimit", name, err)
		}
		if bytes > 3*limit { // the buffer, grown by doubling up to the limit

			t.Errorf("%s: encoding under a 1 MiB limit allocated %d bytes", name, bytes)
		}
	}
}

func BenchmarkEncodeLimited(b *testing.B) {
	v := map[string]any{"ok": true, "items": []any{"a", 1, 2.5}, "s": struct{ A, B string }{"x", "y"}}
	b.ReportAllocs()
	for b.Loop() {
		e := getEncoder()
		if _, err := e.encodeLimited(v, 1<<20); err != nil {
			b.Fatal(err)
		}
		putEncoder(e)
	}
}
