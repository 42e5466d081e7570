package jsontext

import (
	"encoding/json"
	"unicode/utf8"
)

// MaxEcho is how many bytes of a client's string (a method or tool name, an
// id, a cursor) an error message or a log entry repeats. Longer strings are
// clipped by Clip: a client cannot make the server echo a megabyte.
const MaxEcho = 128

// Clip returns s when it is at most max bytes long; otherwise its longest
// prefix of at most max bytes that ends on a character boundary, followed
// by "…". A character is never cut in half, and invalid UTF-8 in the kept
// prefix is left as it is (encoders escape it).
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	if max < 0 {
		max = 0
	}
	cut := max
	for cut > 0 && cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ClipBytes is Clip for raw bytes.
func ClipBytes(b []byte, max int) string {
	if len(b) <= max {
		return string(b)
	}
	return Clip(string(b[:min(len(b), max+utf8.UTFMax)]), max)
}

// Quote returns s as a JSON string, clipped to MaxEcho bytes first: the
// form in which a client's string appears in an error message.
func Quote(s string) string {
	b, _ := json.Marshal(Clip(s, MaxEcho))
	return string(b)
}
