package mcp

import (
	"errors"
	"unicode/utf8"
)

// errOverLimit is the error of a limitBuffer asked to grow past its limit.
var errOverLimit = errors.New("the encoded result is over the limit")

// limitBuffer is an append-only byte buffer that refuses to grow past
// limit bytes: a write that would pass it writes nothing and fails with
// errOverLimit. Its capacity never exceeds the larger of limit and the
// capacity it was given, so memory for what it holds stays within the
// limit however large the value being encoded.
type limitBuffer struct {
	buf   []byte
	limit int
}

// reset empties b (keeping its memory) and sets its limit.
func (b *limitBuffer) reset(limit int) {
	b.buf, b.limit = b.buf[:0], limit
}

// grow makes room for n more bytes, or reports errOverLimit.
func (b *limitBuffer) grow(n int) error {
	if n > b.limit-len(b.buf) {
		return errOverLimit
	}
	if need := len(b.buf) + n; need > cap(b.buf) {
		nb := make([]byte, len(b.buf), min(max(2*cap(b.buf), need, 512), b.limit))
		copy(nb, b.buf)
		b.buf = nb
	}
	return nil
}

// Write appends p whole, or nothing.
func (b *limitBuffer) Write(p []byte) (int, error) {
	if err := b.grow(len(p)); err != nil {
		return 0, err
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// writeString appends s whole, or nothing.
func (b *limitBuffer) writeString(s string) error {
	if err := b.grow(len(s)); err != nil {
		return err
	}
	b.buf = append(b.buf, s...)
	return nil
}

// writeByte appends c.
func (b *limitBuffer) writeByte(c byte) error {
	if err := b.grow(1); err != nil {
		return err
	}
	b.buf = append(b.buf, c)
	return nil
}

// writeJSONString appends s as a JSON string exactly as encoding/json
// writes it without HTML escaping: quotes, backslashes and control
// characters escaped (\b \f \n \r \t, else \u00XX), invalid UTF-8 as
// \ufffd, U+2028 and U+2029 as \u2028 and \u2029. It writes in pieces, so
// a string too long for the limit fails when it reaches it, without ever
// being encoded whole.
func (b *limitBuffer) writeJSONString(s string) error {
	const hex = "0123456789abcdef"
	if err := b.writeByte('"'); err != nil {
		return err
	}
	start := 0
	flush := func(end int, esc ...byte) error {
		if err := b.writeString(s[start:end]); err != nil {
			return err
		}
		_, err := b.Write(esc)
		return err
	}
	for i := 0; i < len(s); {
		if i-start >= 16<<10 { // write long runs as they go, to fail early
			if err := b.writeString(s[start:i]); err != nil {
				return err
			}
			start = i
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			var err error
			switch c {
			case '"', '\\':
				err = flush(i, '\\', c)
			case '\b':
				err = flush(i, '\\', 'b')
			case '\f':
				err = flush(i, '\\', 'f')
			case '\n':
				err = flush(i, '\\', 'n')
			case '\r':
				err = flush(i, '\\', 'r')
			case '\t':
				err = flush(i, '\\', 't')
			default:
				err = flush(i, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			if err != nil {
				return err
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		var err error
		switch {
		case r == utf8.RuneError && size == 1:
			err = flush(i, '\\', 'u', 'f', 'f', 'f', 'd')
		case r == '\u2028' || r == '\u2029':
			err = flush(i, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		if err != nil {
			return err
		}
		i += size
		start = i
	}
	if err := b.writeString(s[start:]); err != nil {
		return err
	}
	return b.writeByte('"')
}

// quotedLen returns the length of appendJSONString(nil, s).
func quotedLen(s []byte) int {
	n := len(s) + 2
	for _, c := range s {
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n
}
