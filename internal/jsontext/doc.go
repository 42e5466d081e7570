// Package jsontext holds the small JSON-text helpers that the protocol
// layers share: walking the members of an already validated object without
// decoding it, reading a string value, skipping a value, and clipping text
// that a client sent before it is echoed in an error message or a log.
//
// It imports the standard library only, so the jsonrpc and core packages
// may use it. Every function is safe for concurrent use; none allocates on
// the paths the request hot path takes (plain keys, unescaped strings).
//
// The walking helpers (EachMember, SkipValue) must only ever see valid JSON:
// the callers have validated the whole message first. On invalid input they
// return without panicking, but their answers are unspecified.
package jsontext
