package jsontext

import (
	"encoding/json"
	"unicode/utf8"
)

// MaxEcho is how many bytes (the "…" included) of a client's string (a method or tool name, an
// id, a cursor) an error message or a log entry repeats. Longer strings are
// clipped by Clip: a client cannot make the server echo a megabyte.
const MaxEcho = 128

// ellipsis marks a clipped string.
const ellipsis = "…"

// Clip returns s when it is at most max bytes long. Otherwise it returns the
// longest prefix of s that ends on a character boundary and, with "…"
// (U+2026, three bytes in UTF-8) appended, is at most max bytes long. So
// the result is never longer than max bytes and never ends in part of a
// multi-byte character. When max is smaller than the ellipsis itself, the
// result is the longest whole-character prefix of at most max bytes, without
// the ellipsis; for max <= 0 it is "".
//
// Lengths are in bytes because the limits Clip serves (log fields, error
// values, wire sizes) are in bytes. "Character" means a Unicode code point:
// a combining mark may be separated from the character before it. In a
// string that is not valid UTF-8, an invalid byte counts as one character.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	if max <= 0 {
		return ""
	}
	if max < len(ellipsis) {
		return s[:runeBoundary(s, max)]
	}
	return s[:runeBoundary(s, max-len(ellipsis))] + ellipsis
}

// runeBoundary returns the largest n <= cut such that s[:n] does not end
// inside the encoding of a valid character. It needs 0 <= cut < len(s).
func runeBoundary(s string, cut int) int {
	// Step back over at most UTFMax-1 continuation bytes to the start of the
	// encoding that covers s[cut]; keep cut when that start does not begin
	// a valid character reaching past cut (invalid bytes stand alone).
	for start := cut; start >= 0 && start > cut-utf8.UTFMax; start-- {
		if utf8.RuneStart(s[start]) {
			r, size := utf8.DecodeRuneInString(s[start:])
			if r == utf8.RuneError && size <= 1 {
				return cut
			}
			if start+size > cut {
				return start
			}
			return cut
		}
	}
	return cut
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
