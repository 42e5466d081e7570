package jsontext

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// checkQuoted compares the lengths and the bytes form with the escapers.
func checkQuoted(t testing.TB, s string) {
	if got, want := QuotedLen(s), len(AppendString(nil, s)); got != want {
		t.Fatalf("QuotedLen(%q) = %d, want %d", s, got, want)
	}
	want := AppendStringNoHTML(nil, s)
	if got := QuotedLenNoHTML(s); got != len(want) {
		t.Fatalf("QuotedLenNoHTML(%q) = %d, want %d", s, got, len(want))
	}
	if got := QuotedLenBytesNoHTML([]byte(s)); got != len(want) {
		t.Fatalf("QuotedLenBytesNoHTML(%q) = %d, want %d", s, got, len(want))
	}
	if got := AppendBytesNoHTML([]byte("x"), []byte(s)); !bytes.Equal(got, append([]byte("x"), want...)) {
		t.Fatalf("AppendBytesNoHTML(%q) = %s, want x%s", s, got, want)
	}
}

// The quoted lengths are the escapers' lengths, and AppendBytesNoHTML
// writes what AppendStringNoHTML writes, for odd strings and random bytes.
func TestQuotedLenMatchesEscapers(t *testing.T) {
	for _, s := range oddStrings {
		checkQuoted(t, s)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		checkQuoted(t, string(b))
	}
}

func FuzzQuotedLen(f *testing.F) {
	for _, s := range oddStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkQuoted(t, s) })
}
