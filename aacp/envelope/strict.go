package envelope

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/mcprt/mcprt/core"
)

// MaxDepth bounds the nesting of arrays and objects in a message.
const MaxDepth = 64

// checkStrict returns an E_PROTOCOL_002 error unless data (named what, e.g.
// "envelope") is one well-formed JSON object in valid UTF-8, nested at most
// MaxDepth deep, with no key repeated within one object. Plain
// encoding/json keeps the last of duplicate keys, which would let two
// readers of the same line disagree about its content.
func checkStrict(what string, data []byte) *core.Error {
	if strictOK(data) {
		return nil
	}
	return checkStrictFull(what, data)
}

// checkStrictFull is checkStrict without its fast path.
func checkStrictFull(what string, data []byte) *core.Error {
	if !utf8.Valid(data) {
		return Errorf(CodeMalformedJSON, "%s is not valid UTF-8; send UTF-8 encoded JSON", what)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		object  bool
		wantKey bool
		keys    map[string]struct{}
	}
	var stack []frame
	first := true
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if len(stack) != 0 || first {
				return Errorf(CodeMalformedJSON, "%s is not complete JSON; send one JSON object", what)
			}
			return nil
		}
		if err != nil {
			return Errorf(CodeMalformedJSON, "%s is not well-formed JSON (%v); send one JSON object", what, err)
		}
		if first {
			if d, ok := tok.(json.Delim); !ok || d != '{' {
				return Errorf(CodeMalformedJSON, "%s is not a JSON object; send one JSON object ({...})", what)
			}
		} else if len(stack) == 0 {
			return Errorf(CodeMalformedJSON, "%s has data after its JSON object; send exactly one JSON object", what)
		}
		first = false
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:n-1]
				continue
			}
			key := tok.(string) // the decoder guarantees a string key here
			top := &stack[n-1]
			if top.keys == nil {
				top.keys = make(map[string]struct{}, 8)
			}
			if _, dup := top.keys[key]; dup {
				return Errorf(CodeMalformedJSON, "%s repeats the key %s in one object; send each key once", what, quoteClip(key))
			}
			top.keys[key] = struct{}{}
			top.wantKey = false
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true // this token starts the value; the next is a key
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if len(stack) >= MaxDepth {
					return Errorf(CodeMalformedJSON, "%s is nested more than %d levels deep; flatten it", what, MaxDepth)
				}
				stack = append(stack, frame{object: d == '{', wantKey: d == '{'})
			case ']':
				stack = stack[:len(stack)-1]
			}
		}
	}
}
