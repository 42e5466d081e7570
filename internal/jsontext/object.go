package jsontext

import "unicode/utf8"

// MaxScanDepth is how deeply ScanObject lets containers nest inside the
// object before it gives up (the caller's reference decoder then takes the
// text, with encoding/json's own limit).
const MaxScanDepth = 64

// ScanObject is a strict single pass over b, for the common case of a
// small well-formed object whose member names are known in advance. It
// succeeds only when b holds exactly one JSON object (JSON white space
// around it allowed) whose member names are all among names, spelled
// exactly and without escapes, each at most once, and when the whole of b
// is valid JSON and valid UTF-8 with containers nested at most
// MaxScanDepth deep inside the object. Then it stores in vals[i] the raw
// value of the member called names[i] (its exact bytes, a slice of b with
// its capacity cut at its end) and nil for a name that is absent, and
// returns true.
//
// It returns false for anything else: an unknown, escaped or repeated
// name, a top-level value that is no object, invalid JSON, invalid UTF-8,
// deeper nesting. The contents of vals are then unspecified, and the
// caller decodes b with its reference decoder, which decides what b is
// and which error it earns. ScanObject never allocates; vals must be at
// least as long as names.
func ScanObject(b []byte, names []string, vals [][]byte) bool {
	for i := range names {
		vals[i] = nil
	}
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return SkipSpace(b, i+1) == len(b)
	}
	for {
		// the member name
		if i >= len(b) || b[i] != '"' {
			return false
		}
		end, plain := ScanString(b, i)
		if !plain || end > len(b) || b[end-1] != '"' || end-i < 2 {
			return false
		}
		slot := -1
		for k, name := range names {
			if string(b[i+1:end-1]) == name {
				slot = k
				break
			}
		}
		if slot < 0 || vals[slot] != nil {
			return false
		}
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = SkipSpace(b, i+1)
		start := i
		i = validValue(b, i, 0)
		if i < 0 {
			return false
		}
		vals[slot] = b[start:i:i]
		i = SkipSpace(b, i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case '}':
			return SkipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// validValue returns the index just past the valid JSON value starting at
// b[i], or -1 when there is none (or it nests deeper than MaxScanDepth
// below depth).
func validValue(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		return validString(b, i)
	case c == '{':
		return validObject(b, i, depth+1)
	case c == '[':
		return validArray(b, i, depth+1)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return validNumber(b, i)
	}
	return -1
}

func literal(b []byte, i int, lit string) int {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit)
	}
	return -1
}

func validObject(b []byte, i, depth int) int {
	if depth > MaxScanDepth {
		return -1
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		if i = validString(b, i); i < 0 {
			return -1
		}
		i = SkipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return -1
		}
		if i = validValue(b, SkipSpace(b, i+1), depth); i < 0 {
			return -1
		}
		i = SkipSpace(b, i)
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case '}':
			return i + 1
		default:
			return -1
		}
	}
}

func validArray(b []byte, i, depth int) int {
	if depth > MaxScanDepth {
		return -1
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		if i = validValue(b, i, depth); i < 0 {
			return -1
		}
		i = SkipSpace(b, i)
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case ']':
			return i + 1
		default:
			return -1
		}
	}
}

// validString returns the index just past the valid JSON string starting
// at b[i] (a quote), or -1: control characters, bad escapes and invalid
// UTF-8 are refused.
func validString(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		c := b[j]
		switch {
		case c == '"':
			return j + 1
		case c == '\\':
			if j+1 >= len(b) {
				return -1
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(b) {
					return -1
				}
				for _, h := range b[j+2 : j+6] {
					if !isHex(h) {
						return -1
					}
				}
				j += 6
			default:
				return -1
			}
		case c < 0x20:
			return -1
		case c < utf8.RuneSelf:
			j++
		default:
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size == 1 {
				return -1
			}
			j += size
		}
	}
	return -1
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// validNumber returns the index just past the JSON number starting at
// b[i], or -1.
func validNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
