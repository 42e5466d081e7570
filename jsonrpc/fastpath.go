package jsonrpc

import (
	"bytes"
	"encoding/json"

	"github.com/mcprt/mcprt/internal/jsontext"
)

// decodeFast decodes the common well-formed envelope in one strict pass
// (jsontext.ScanObject): one object, member names among memberNames spelled
// exactly and each once, the whole line valid JSON and UTF-8. ok is false
// for anything else, and the caller decodes the line with the reference
// decoder, which earns it the same answer either way (the differential
// fuzz test FuzzDecodeFastPath holds the two paths to that).
func (d *Decoder) decodeFast(line []byte) (msg Message, derr *DecodeError, ok bool) {
	var raw [len(memberNames)][]byte
	if !jsontext.ScanObject(line, memberNames[:], raw[:]) {
		return nil, nil, false
	}
	var vals [len(memberNames)]json.RawMessage
	seen, idCount := 0, 0
	for i, v := range raw {
		if v != nil {
			vals[i] = v
			seen |= 1 << i
		}
	}
	if seen&memID != 0 {
		idCount = 1
	}
	msg, derr = d.classify(&vals, seen, idCount, "")
	if derr == nil && !d.inPlace {
		detach(msg)
	}
	return msg, derr, true
}

// keptMethods is how many method names a Decoder remembers.
const keptMethods = 4

// method returns the value of the method member raw when it is a string.
// A name without escapes that the decoder saw lately is returned as the
// same string, not a new copy: a connection's requests repeat a few method
// names.
func (d *Decoder) method(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || bytes.IndexByte(raw, '\\') >= 0 {
		return unquote(raw)
	}
	name := raw[1 : len(raw)-1]
	for _, m := range d.methods {
		if m == string(name) && m != "" {
			return m, true
		}
	}
	m := string(name)
	d.methods[d.nextMethod] = m
	d.nextMethod = (d.nextMethod + 1) % keptMethods
	return m, true
}
