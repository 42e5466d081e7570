package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Decoding a typed tool's arguments in the pass that builds the value
// kaptinlin validates. A schema the fast validator does not model is
// validated on the decoded instance; decodeTree builds that value exactly
// as kaptinlin's own decoder does (json v2 into an any: map[string]any,
// []any, string, bool, nil, and json.Number for numbers, through the same
// strict jsontext decoder: unique member names, valid UTF-8, one value and
// no trailing data; duplicate names are found with the maps), and on the way hands each top-level member of an
// object to an argsTarget, as the fast pass does. So the text is read
// once whichever validator decides, and the handler of a typed tool with a
// plain struct input gets its In without json.Unmarshal. A differential
// test (argsdecode_kaptinlin_test.go) holds decodeTree to kaptinlin's
// decoder, and what the handler gets to json.Unmarshal.

// decodeTree decodes instance as kaptinlin's decoder does, filling sink
// (nil: none) from the members of an object. It reports false when the
// text is not one value kaptinlin's decoder accepts; the caller then asks
// kaptinlin's decoder, for its error.
func decodeTree(instance []byte, sink *argsTarget) (any, bool) {
	r := rawReaders.Get().(*rawReader)
	defer rawReaders.Put(r)
	r.src.Reset(instance)
	// Duplicate names are found with the maps being built, as kaptinlin's
	// decoder (json v2 into a map) finds them: jsontext's own record of
	// the names would double the memory for an object with many members.
	r.dec.Reset(&r.src, jsontext.AllowDuplicateNames(true))
	v, ok := readTree(&r.dec, instance, sink)
	if !ok {
		return nil, false
	}
	_, err := r.dec.ReadToken()
	return v, err == io.EOF
}

// readTree reads the next value from d. With a sink, instance is the
// whole text d reads, and the members of the object read go to sink.
func readTree(d *jsontext.Decoder, instance []byte, sink *argsTarget) (any, bool) {
	switch d.PeekKind() {
	case '{':
		return readTreeObject(d, instance, sink)
	case '[':
		if _, err := d.ReadToken(); err != nil {
			return nil, false
		}
		a := []any{}
		for d.PeekKind() != ']' {
			e, ok := readTree(d, nil, nil)
			if !ok {
				return nil, false
			}
			a = append(a, e)
		}
		_, err := d.ReadToken()
		return a, err == nil
	}
	v, err := d.ReadValue()
	if err != nil {
		return nil, false
	}
	switch v.Kind() {
	case 'n':
		return nil, true
	case 't':
		return true, true
	case 'f':
		return false, true
	case '"':
		s, ok := rawString(v)
		return string(s), ok
	case '0':
		return json.Number(v), true
	}
	return nil, false
}

// readTreeObject reads an object, handing its members to sink if any.
func readTreeObject(d *jsontext.Decoder, instance []byte, sink *argsTarget) (any, bool) {
	if _, err := d.ReadToken(); err != nil {
		return nil, false
	}
	m := map[string]any{}
	for d.PeekKind() != '}' {
		name, err := d.ReadValue()
		if err != nil {
			return nil, false
		}
		key, ok := rawString(name)
		if !ok {
			return nil, false
		}
		k := string(key)
		if _, dup := m[k]; dup {
			return nil, false
		}
		var field argsField
		into := false
		if sink != nil {
			field, into = sink.field(key)
		}
		start := d.InputOffset()
		v, ok := readTree(d, nil, nil)
		if !ok {
			return nil, false
		}
		if into && !sink.setDecoded(field, v) {
			sink.set(field, bytes.TrimLeft(instance[start:d.InputOffset()], " \t\r\n:"))
		}
		m[k] = v
	}
	_, err := d.ReadToken()
	return m, err == nil
}

// setDecoded sets field f from v, the member's decoded value, where f is a
// scalar or a slice of scalars, as json.Unmarshal sets it from the text
// (strings are the tree's own, not copied again). It reports false when
// it did not set f, to be set from the text instead; a value json.Unmarshal
// refuses makes the target give up.
func (t *argsTarget) setDecoded(f argsField, v any) bool {
	if !t.ok {
		return true
	}
	fv := t.ptr.Elem().Field(f.index)
	switch {
	case v == nil: // null leaves a fresh field as it is
		return true
	case f.kind != reflect.Invalid:
		t.ok = setScalar(fv, f.kind, f.bits, v)
		return true
	case f.elem != reflect.Invalid:
		a, ok := v.([]any)
		if !ok {
			t.ok = false
			return true
		}
		s := reflect.MakeSlice(fv.Type(), len(a), len(a))
		for i, e := range a {
			if e != nil && !setScalar(s.Index(i), f.elem, f.bits, e) {
				t.ok = false
				return true
			}
		}
		fv.Set(s)
		return true
	}
	return false
}

// setScalar sets v, of kind k (bits in size), from a decoded value that is
// not null, reporting false where json.Unmarshal would fail.
func setScalar(v reflect.Value, k reflect.Kind, bits int, x any) bool {
	switch x := x.(type) {
	case string:
		if k != reflect.String {
			return false
		}
		v.SetString(x)
		return true
	case bool:
		if k != reflect.Bool {
			return false
		}
		v.SetBool(x)
		return true
	case json.Number:
		switch k {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			n, err := strconv.ParseInt(string(x), 10, bits)
			v.SetInt(n)
			return err == nil
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			n, err := strconv.ParseUint(string(x), 10, bits)
			v.SetUint(n)
			return err == nil
		case reflect.Float32, reflect.Float64:
			f, err := strconv.ParseFloat(string(x), bits)
			v.SetFloat(f)
			return err == nil
		}
	}
	return false
}
