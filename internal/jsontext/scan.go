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

// skipString returns the index just past the string starting at b[i].
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
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
