package mcp

import (
	"errors"

	"github.com/mcprt/mcprt/internal/jsontext"
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
// writes it without HTML escaping (jsontext.AppendStringNoHTML), or
// nothing: its quoted length is counted first, so a string too long for
// the limit fails without ever being encoded.
func (b *limitBuffer) writeJSONString(s string) error {
	if err := b.grow(jsontext.QuotedLenNoHTML(s)); err != nil {
		return err
	}
	b.buf = jsontext.AppendStringNoHTML(b.buf, s)
	return nil
}
