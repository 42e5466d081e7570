// Package check holds the input checks the domain packages share. Each
// returns nil or an INVALID_ARGUMENT *core.Error whose message names the
// field, says what was wrong and what would be right, and whose details
// carry "field".
package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcprt/mcprt/core"
)

// Stamp formats t as the domains write times: RFC 3339 with nanoseconds,
// UTC; the zero time is "".
func Stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// Invalid returns an INVALID_ARGUMENT error about field.
func Invalid(field, format string, args ...any) *core.Error {
	return core.NewError(core.CodeInvalidArgument, field+": "+fmt.Sprintf(format, args...)).WithDetail("field", field)
}

// Text checks a string field: at most max bytes of valid UTF-8 without
// control characters; non-empty when required.
func Text(field, s string, max int, required bool) error {
	if s == "" {
		if required {
			return Invalid(field, "is missing or empty; give a non-empty string")
		}
		return nil
	}
	if len(s) > max {
		return Invalid(field, "is %d bytes long; the limit is %d", len(s), max).WithDetail("limit", max)
	}
	if !utf8.ValidString(s) {
		return Invalid(field, "is not valid UTF-8")
	}
	for i, r := range s {
		if unicode.IsControl(r) {
			return Invalid(field, "contains the control character %U at byte %d; remove it", r, i)
		}
	}
	return nil
}

// Depth returns how deeply arrays and objects nest in JSON text, without
// recursion (any depth is safe to measure). It stops counting past limit,
// so the result is at most limit+1.
func Depth(b []byte, limit int) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > limit {
					return deepest
				}
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// JSON checks a JSON value and returns it compact: valid, not null, at most
// maxDepth deep, and (as compact JSON) at most maxBytes long. When
// objectOnly, it must be an object. An oversized value is
// RESOURCE_EXHAUSTED (reason "value_too_large", not retryable), other
// failures INVALID_ARGUMENT.
func JSON(field string, raw json.RawMessage, maxBytes, maxDepth int, objectOnly bool) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil, Invalid(field, "is missing or null; give a JSON value")
	}
	if objectOnly && trimmed[0] != '{' {
		return nil, Invalid(field, "must be a JSON object ({...})")
	}
	if d := Depth(trimmed, maxDepth); d > maxDepth {
		return nil, Invalid(field, "nests arrays and objects more than %d deep; the limit is %d", maxDepth, maxDepth).
			WithDetail("limit", maxDepth)
	}
	if !utf8.Valid(trimmed) {
		return nil, Invalid(field, "is not valid UTF-8")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, trimmed); err != nil {
		return nil, Invalid(field, "is not valid JSON: %v", err)
	}
	if b.Len() > maxBytes {
		e := core.NewError(core.CodeResourceExhausted,
			fmt.Sprintf("%s: is %d bytes as compact JSON; the limit is %d bytes: send a smaller value", field, b.Len(), maxBytes)).
			WithDetail("field", field).WithDetail("reason", "value_too_large").
			WithDetail("limit", maxBytes).WithDetail("size", b.Len())
		e.Retryable = false // the same value will never fit
		return nil, e
	}
	return json.RawMessage(b.Bytes()), nil
}

// Limit applies a default to a zero n and checks 1 ≤ n ≤ max.
func Limit(field string, n, def, max int) (int, error) {
	switch {
	case n == 0:
		return def, nil
	case n < 0 || n > max:
		return 0, Invalid(field, "is %d; give a number from 1 to %d", n, max).WithDetail("limit", max)
	}
	return n, nil
}
