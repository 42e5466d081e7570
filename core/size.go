package core

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// CompactLen returns the length in bytes of the compact form of the JSON
// text raw (what json.Compact would produce: whitespace outside strings
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
			end := stringEnd(raw, i+1)
			n += end - i
			i = end - 1
		default:
			n++
		}
	}
	return n
}

// stringEnd returns the index just past the closing quote of the JSON
// string whose contents start at raw[start], or len(raw) when it is not
// closed. It skips to each quote with bytes.IndexByte and counts the
// backslashes before it: an odd number means the quote is escaped.
func stringEnd(raw []byte, start int) int {
	i := start
	for {
		j := bytes.IndexByte(raw[i:], '"')
		if j < 0 {
			return len(raw)
		}
		q := i + j
		bs := 0
		for p := q - 1; p >= start && raw[p] == '\\'; p-- {
			bs++
		}
		if bs%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

// byteCounter is an io.Writer that only counts.
type byteCounter struct{ n int }

// Write counts p.
func (c *byteCounter) Write(p []byte) (int, error) {
	c.n += len(p)
	return len(p), nil
}

// JSONSize returns the UTF-8 byte length of v encoded as compact JSON as
// mcprt writes it (like json.Marshal, but <, > and & are not escaped),
// without keeping the encoding, or an error when v cannot be encoded.
func JSONSize(v any) (int, error) {
	var c byteCounter
	enc := json.NewEncoder(&c)
	enc.SetEscapeHTML(false) // measure what the wire carries: < > & as themselves
	if err := enc.Encode(v); err != nil {
		return 0, fmt.Errorf("measure JSON size: %w", err)
	}
	return c.n - 1, nil // Encode ends the text with a newline
}
