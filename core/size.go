package core

import (
	"encoding/json"
	"fmt"
)

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
