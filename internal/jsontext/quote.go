package jsontext

import (
	"unicode/utf8"
	"unsafe"
)

// QuotedLen returns len(AppendString(nil, s)) without writing anything,
// so that a caller can check a bound or size a buffer before escaping.
func QuotedLen(s string) int { return quotedLen(s, true) }

// QuotedLenNoHTML returns len(AppendStringNoHTML(nil, s)).
func QuotedLenNoHTML(s string) int { return quotedLen(s, false) }

// AppendBytesNoHTML is AppendStringNoHTML on the UTF-8 text b (typically
// JSON just encoded, quoted again as a string): b is read, never kept.
func AppendBytesNoHTML(dst, b []byte) []byte {
	return AppendStringNoHTML(dst, bytesView(b))
}

// QuotedLenBytesNoHTML is QuotedLenNoHTML on b.
func QuotedLenBytesNoHTML(b []byte) int { return quotedLen(bytesView(b), false) }

// bytesView is b as a string without copying. The callers only read it
// during their call and never keep it, and b is not written meanwhile.
func bytesView(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// quotedLen counts what appendString writes, rule for rule.
func quotedLen(s string, html bool) int {
	plain := &plainBytes[0]
	if html {
		plain = &plainBytes[1]
	}
	n := 2
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && plain[s[j]] {
			j++
		}
		n, i = n+j-i, j
		if i == len(s) {
			break
		}
		if b := s[i]; b < utf8.RuneSelf {
			switch {
			case b >= 0x20 && b != '"' && b != '\\' && (!html || b != '<' && b != '>' && b != '&'):
				n++
			case b == '\\' || b == '"' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
				n += 2
			default:
				n += 6 // \u00xx
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6 // \ufffd
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}
