package jsontext

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string exactly as json.Marshal writes
// it: quotes, backslashes and control characters escaped (\b \f \n \r \t,
// else \u00xx), the HTML-sensitive <, > and & escaped, U+2028 and U+2029
// escaped, invalid UTF-8 replaced by U+FFFD. It is the module's one JSON
// string escaper.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s, true) }

// AppendStringNoHTML is AppendString without escaping <, > and &: what an
// encoding/json Encoder writes after SetEscapeHTML(false).
func AppendStringNoHTML(dst []byte, s string) []byte { return appendString(dst, s, false) }

// plainBytes tells, per byte, whether appendString copies it as it is:
// [0] without HTML escaping, [1] with. Bytes of multi-byte characters
// (0x80 and up) are not plain: the slow path decodes them. Never written
// after its initialisation.
var plainBytes = func() (t [2][256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[0][b] = b != '"' && b != '\\'
		t[1][b] = t[0][b] && b != '<' && b != '>' && b != '&'
	}
	return t
}()

func appendString(dst []byte, s string, html bool) []byte {
	plain := &plainBytes[0]
	if html {
		plain = &plainBytes[1]
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		for i < len(s) && plain[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		if b := s[i]; b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
