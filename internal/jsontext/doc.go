// Package jsontext is the module's one package of hand-written JSON-text
// code, shared by the protocol layers: the strict single-pass object
// scanner under the JSON-RPC engine's envelope fast path (ScanObject,
// which validates as it goes and gives up on anything unusual), the
// scanner (walking the members of
// an already validated object without decoding it, reading a string value,
// skipping a value, the compact length of a text), the one JSON string
// escaper (AppendString, byte for byte what encoding/json writes; QuotedLen), the
// spacing reader under the JSON-RPC engine's envelope decoder (Spaced),
// and clipping text that a client sent before it is echoed in an error
// message or a log. Wherever a hand copy would only mirror encoding/json,
// the callers use encoding/json instead; what is here is either faster on
// a hot path or does what encoding/json has no call for.
//
// It imports the standard library only, so the jsonrpc package may use it
// (the core package stays on the standard library alone). Every function
// is safe for concurrent use; none allocates on the paths the request hot
// path takes (plain keys, unescaped strings). A Spaced is one reader's.
//
// The walking helpers (EachMember, SkipValue, ScanString, CompactLen) must
// only ever see valid JSON: the callers have validated the whole message
// first. On invalid input they return without panicking, but their answers
// are unspecified.
package jsontext
