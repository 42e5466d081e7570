package jsontext

import (
	"bytes"
	"encoding/json"
)

// EachMember calls fn with the raw key (quotes included) and raw value of
// every member of the object obj, in order, until fn returns false. It
// reports whether obj is an object.
func EachMember(obj []byte, fn func(key, value []byte) bool) bool {
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i++
	for {
		i = SkipSpace(obj, i)
		if i >= len(obj) || obj[i] == '}' {
			return true
		}
		if obj[i] == ',' {
			i++
			continue
		}
		keyEnd := skipString(obj, i)
		key := obj[i:keyEnd]
		i = SkipSpace(obj, keyEnd) + 1 // past ':'
		i = SkipSpace(obj, i)
		valueEnd := SkipValue(obj, i)
		if !fn(key, obj[i:valueEnd]) {
			return true
		}
		i = valueEnd
	}
}

// Member returns the raw value of the member called name of the object
// obj, matched exactly (escapes decoded), or nil.
func Member(obj []byte, name string) []byte {
	var out []byte
	EachMember(obj, func(key, value []byte) bool {
		if KeyIs(key, name) {
			out = value
			return false
		}
		return true
	})
	return out
}

// KeyIs reports whether the raw key (quotes included) names name, escapes
// decoded.
func KeyIs(rawKey []byte, name string) bool {
	if bytes.IndexByte(rawKey, '\\') < 0 {
		return len(rawKey) == len(name)+2 && string(rawKey[1:len(rawKey)-1]) == name
	}
	s, ok := String(rawKey)
	return ok && s == name
}

// String returns the value of raw when it is a JSON string.
func String(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// IsObject reports whether raw, after leading space, starts an object.
func IsObject(raw []byte) bool {
	i := SkipSpace(raw, 0)
	return i < len(raw) && raw[i] == '{'
}

// SkipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// ScanString returns the index just past the string starting at b[i] (a
// quote), or len(b) when it is not closed, and whether the string holds no
// escape (its bytes between the quotes are its value). It reads byte by
// byte and is small enough to be inlined where it is called: for the
// short strings of keys and envelope fields.
func ScanString(b []byte, i int) (int, bool) {
	plain := true
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			plain = false
			j++
		case '"':
			return j + 1, plain
		}
	}
	return len(b), false
}

// shortString is how many bytes of a string skipString reads one by one
// before it jumps from quote to quote instead.
const shortString = 16

// skipString returns the index just past the string starting at b[i] (a
// quote), or len(b) when it is not closed. Past its first shortString
// bytes it jumps from quote to quote with bytes.IndexByte and counts the
// backslashes before each (an odd number escapes it): long strings (a
// tool's text arguments) go at the speed of IndexByte.
func skipString(b []byte, i int) int {
	start := i + 1
	j := start
	for lim := min(len(b), start+shortString); j < lim; j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	for j < len(b) {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			break
		}
		q := j + k
		bs := 0
		for p := q - 1; p >= start && b[p] == '\\'; p-- {
			bs++
		}
		if bs%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
	return len(b)
}

// CompactLen returns the length in bytes of the compact form of the JSON
// text raw (what json.Compact would produce: white space outside strings
// removed), without allocating. raw must be valid JSON (callers have
// validated it); an empty raw has length 0. It is the size that
// tools.maxPayloadBytes bounds: the compact JSON length of a tool call's
// arguments.
func CompactLen(raw []byte) int {
	n := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case ' ', '\t', '\n', '\r':
		case '"':
			end := skipString(raw, i)
			n += end - i
			i = end - 1
		default:
			n++
		}
	}
	return n
}

// SkipValue returns the index just past the value starting at b[i].
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}
