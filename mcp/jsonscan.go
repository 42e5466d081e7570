package mcp

import (
	"bytes"
	"encoding/json"
)

// The request hot path reads a few members of params that encoding/json has
// already validated (the whole line passed json.Valid). These helpers walk
// such valid JSON without decoding it: no reflection, no allocation. They
// must only ever see valid JSON.

// eachMember calls fn with the raw key (quotes included) and raw value of
// every member of the object obj, in order, until fn returns false. It
// reports whether obj is an object.
func eachMember(obj []byte, fn func(key, value []byte) bool) bool {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] == '}' {
			return true
		}
		if obj[i] == ',' {
			i++
			continue
		}
		keyEnd := skipString(obj, i)
		key := obj[i:keyEnd]
		i = skipSpace(obj, keyEnd) + 1 // past ':'
		i = skipSpace(obj, i)
		valueEnd := skipValue(obj, i)
		if !fn(key, obj[i:valueEnd]) {
			return true
		}
		i = valueEnd
	}
}

// keyIs reports whether the raw key names name (escapes decoded).
func keyIs(rawKey []byte, name string) bool {
	if bytes.IndexByte(rawKey, '\\') < 0 {
		return len(rawKey) == len(name)+2 && string(rawKey[1:len(rawKey)-1]) == name
	}
	var s string
	return json.Unmarshal(rawKey, &s) == nil && s == name
}

// stringValue returns the value of a raw JSON string, if raw is one.
func stringValue(raw []byte) (string, bool) {
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

func skipSpace(b []byte, i int) int {
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

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
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
