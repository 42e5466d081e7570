package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// validRaw is fastSchema.valid on the instance's JSON text, read with a
// strict streaming decoder (jsontext, the library kaptinlin's own decoder
// is built on: unique member names, valid UTF-8, one value and no trailing
// data) instead of decoding it into maps first. It reports true only when
// the text is a value kaptinlin's decoder accepts, within the bounds
// validate checks (nesting, number size), that satisfies s; anything else,
// invalid or merely unusual, reports false, and the caller takes the full
// path, which decodes the value and reports its problems. Strings without
// escapes and member names are read without copying; a number's literal is
// one small allocation.
func (s *fastSchema) validRaw(instance []byte) bool { return s.validRawInto(instance, nil) }

// validRawInto is validRaw that, when sink is not nil and the instance is
// an object, hands each of its members to sink as it is read (sink keeps
// nothing of the bytes), so that a typed tool's arguments are decoded in
// the same pass (argsdecode.go); what sink got counts only when it reports
// true.
func (s *fastSchema) validRawInto(instance []byte, sink *argsTarget) bool {
	r := rawReaders.Get().(*rawReader)
	defer rawReaders.Put(r)
	r.src.Reset(instance)
	r.dec.Reset(&r.src)
	if sink != nil && r.dec.PeekKind() == '{' {
		if !s.validRawObject(&r.dec, instance, sink) {
			return false
		}
	} else if !s.validNext(&r.dec) {
		return false
	}
	_, err := r.dec.ReadToken()
	return err == io.EOF
}

// rawReader is a decoder with its source, pooled: decoders keep buffers.
type rawReader struct {
	src bytes.Reader
	dec jsontext.Decoder
}

var rawReaders = sync.Pool{New: func() any { return new(rawReader) }}

// validNext reads the next value from d and reports whether it satisfies s
// (false on any error, as validRaw says).
func (s *fastSchema) validNext(d *jsontext.Decoder) bool {
	if s.never {
		return false
	}
	switch d.PeekKind() {
	case '{':
		return s.validRawObject(d, nil, nil)
	case '[':
		return s.validRawArray(d)
	}
	v, err := d.ReadValue()
	if err != nil {
		return false
	}
	switch v.Kind() {
	case 'n':
		return s.always || (s.allows(kindNull) && !s.hasEnum)
	case 't', 'f':
		return s.always || (s.allows(kindBoolean) && !s.hasEnum)
	case '"':
		str, ok := rawString(v)
		return ok && (s.always || (s.allows(kindString) && s.validStringBytes(str)))
	case '0':
		lit := string(v)
		if !numberWithinBounds(lit) {
			return false
		}
		return s.always || s.validNumber(json.Number(lit))
	}
	return false
}

// validStringBytes is validString on the string's UTF-8 bytes.
func (s *fastSchema) validStringBytes(x []byte) bool {
	if s.hasEnum {
		found := false
		for _, e := range s.enum {
			if string(x) == e {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if s.minLen >= 0 || s.maxLen >= 0 {
		n := utf8.RuneCount(x)
		if (s.minLen >= 0 && n < s.minLen) || (s.maxLen >= 0 && n > s.maxLen) {
			return false
		}
	}
	return s.pattern == nil || s.pattern.Match(x)
}

// validRawObject reads an object; with a sink, instance is the whole text
// d reads, and each member's name and value go to sink.
func (s *fastSchema) validRawObject(d *jsontext.Decoder, instance []byte, sink *argsTarget) bool {
	if _, err := d.ReadToken(); err != nil || d.StackDepth() > maxSchemaDepth {
		return false
	}
	kind := s.always || s.allows(kindObject) && !s.hasEnum
	var seen uint64 // required members met, by their index in s.required
	n := 0
	for d.PeekKind() != '}' {
		name, err := d.ReadValue()
		if err != nil {
			return false
		}
		key, ok := rawString(name)
		if !ok {
			return false
		}
		n++
		sub := s.additional
		if p, ok := s.props[string(key)]; ok {
			sub = p
		}
		for i, r := range s.required {
			if string(key) == r {
				seen |= 1 << i
			}
		}
		if sub == nil {
			sub = anySchema
		}
		var field argsField
		into := false
		if sink != nil { // key is valid only until the value is read
			field, into = sink.field(key)
		}
		start := d.InputOffset()
		if !sub.validNext(d) {
			return false
		}
		if into {
			sink.set(field, bytes.TrimLeft(instance[start:d.InputOffset()], " \t\r\n:"))
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return false
	}
	if s.always {
		return true
	}
	return kind && seen == 1<<len(s.required)-1 &&
		(s.minProps < 0 || n >= s.minProps) && (s.maxProps < 0 || n <= s.maxProps)
}

func (s *fastSchema) validRawArray(d *jsontext.Decoder) bool {
	if _, err := d.ReadToken(); err != nil || d.StackDepth() > maxSchemaDepth {
		return false
	}
	items := s.items
	if items == nil || s.always {
		items = anySchema
	}
	n := 0
	for d.PeekKind() != ']' {
		if !items.validNext(d) {
			return false
		}
		n++
	}
	if _, err := d.ReadToken(); err != nil {
		return false
	}
	return s.always || (s.allows(kindArray) && !s.hasEnum &&
		(s.minItems < 0 || n >= s.minItems) && (s.maxItems < 0 || n <= s.maxItems))
}

// anySchema is the schema true: it still reads (and so checks) the value.
var anySchema = &fastSchema{always: true}

// rawString returns the UTF-8 content of a JSON string: the bytes between
// the quotes when it has no escapes (no copy), else the unquoted text.
func rawString(v []byte) ([]byte, bool) {
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner, true
	}
	b, err := jsontext.AppendUnquote(nil, v)
	return b, err == nil
}
