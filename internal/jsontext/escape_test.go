package jsontext

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

var oddStrings = []string{"", "plain", `q"uote`, `back\slash`, "<html>&amp;", "tab\tnl\nret\rbs\bff\f", "\x00\x01\x1f\x7f",
	"é ü ∑ 😀", "\u2028\u2029", "bad \xff utf8 \xe2\x80", "mixed <\u2028> \xc3", "/slash/"}

// marshalNoHTML is what an Encoder with SetEscapeHTML(false) writes for s.
func marshalNoHTML(t testing.TB, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// checkEscapes compares both escapers with encoding/json on s.
func checkEscapes(t testing.TB, s string) {
	want, _ := json.Marshal(s)
	if got := AppendString(nil, s); !bytes.Equal(got, want) {
		t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
	}
	if got, want := AppendStringNoHTML([]byte("x"), s), append([]byte("x"), marshalNoHTML(t, s)...); !bytes.Equal(got, want) {
		t.Fatalf("AppendStringNoHTML(%q) = %s, want %s", s, got, want)
	}
}

// Both escapers write what encoding/json writes, for odd strings and
// random bytes.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range oddStrings {
		checkEscapes(t, s)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		b := make([]byte, r.IntN(16))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		checkEscapes(t, string(b))
		// The scanner finds where every escaped string ends, long ones
		// too, and tells the ones without escapes.
		enc := AppendString(nil, strings.Repeat(string(b), 1+r.IntN(4)))
		end, plain := ScanString(append(enc, `,"\\"`...), 0)
		if end != len(enc) || plain != !bytes.Contains(enc, []byte(`\`)) {
			t.Fatalf("ScanString(%s) = %d, %v; want %d", enc, end, plain, len(enc))
		}
		if end := skipString(append(enc, `,"\\"`...), 0); end != len(enc) {
			t.Fatalf("skipString(%s) = %d, want %d", enc, end, len(enc))
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range oddStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkEscapes(t, s) })
}

// BenchmarkAppendString escapes what a log line or a result holds most:
// plain ASCII (an id, a message), and text with escapes and non-ASCII.
func BenchmarkAppendString(b *testing.B) {
	for _, tc := range []struct{ name, s string }{
		{"uuid", "f47ac10b-58cc-4372-a567-0e02b2c3d479"},
		{"sentence", "the tool call completed; its result was written to the output"},
		{"mixed", "line\nbreak, \"quoted\", é ü ∑, <html> & more"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			buf := make([]byte, 0, 256)
			b.SetBytes(int64(len(tc.s)))
			for b.Loop() {
				buf = AppendStringNoHTML(buf[:0], tc.s)
			}
		})
	}
}
