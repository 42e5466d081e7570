package mcp

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// A tool's result is encoded into a limitBuffer, so that a result larger
// than tools.maxResultBytes fails when the limit is reached instead of
// after being encoded whole (encoding/json marshals a value completely in
// memory before writing any of it). encodeLimited walks the value itself
// for what can be large — strings, []byte, slices, arrays, maps with string
// keys, structs, pointers, interfaces — and hands the rest to
// encoding/json: numbers, booleans, and values with their own MarshalJSON
// or MarshalText (whose output is as large as they make it). The output is
// byte for byte what encoding/json writes without HTML escaping.

// maxEncodeDepth bounds nesting while encoding: a cyclic value fails
// instead of recursing forever (encoding/json reports such a cycle too).
const maxEncodeDepth = 10000

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	isZeroerType      = reflect.TypeFor[interface{ IsZero() bool }]()
)

// errTooDeep reports a value nested deeper than maxEncodeDepth.
var errTooDeep = errors.New("json: unsupported value: nested more than 10000 levels deep (a cycle?)")

// encodeLimited returns v's compact JSON, as encoding/json writes it
// without HTML escaping, or errOverLimit as soon as it passes limit bytes.
// The slice is valid until the encoder's next use.
func (e *pooledEncoder) encodeLimited(v any, limit int) ([]byte, error) {
	e.out.reset(limit)
	if err := e.value(reflect.ValueOf(v), 0); err != nil {
		return nil, err
	}
	return e.out.buf, nil
}

// delegate encodes v with encoding/json and appends it. An addressable v
// goes by pointer, so that encoding/json still sees its pointer methods.
func (e *pooledEncoder) delegate(v reflect.Value) error {
	x := v.Interface()
	if v.CanAddr() {
		x = v.Addr().Interface()
	}
	js, err := e.encode(x)
	if err != nil {
		return err
	}
	_, err = e.out.Write(js)
	return err
}

// marshals reports whether encoding/json calls a method of t to encode it.
func marshals(t reflect.Type) bool {
	return t.Implements(marshalerType) || t.Implements(textMarshalerType)
}

// value appends v at nesting depth.
func (e *pooledEncoder) value(v reflect.Value, depth int) error {
	if !v.IsValid() {
		return e.out.writeString("null")
	}
	if depth > maxEncodeDepth {
		return errTooDeep
	}
	t := v.Type()
	if t == jsonNumberType || marshals(t) || (v.CanAddr() && marshals(reflect.PointerTo(t))) {
		return e.delegate(v)
	}
	switch t.Kind() {
	case reflect.String:
		return e.out.writeJSONString(v.String())
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return e.out.writeString("null")
		}
		return e.value(v.Elem(), depth+1)
	case reflect.Slice:
		if v.IsNil() {
			return e.out.writeString("null")
		}
		if el := t.Elem(); el.Kind() == reflect.Uint8 && !marshals(reflect.PointerTo(el)) {
			return e.base64(v.Bytes())
		}
		return e.array(v, depth)
	case reflect.Array:
		return e.array(v, depth)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return e.delegate(v)
		}
		if v.IsNil() {
			return e.out.writeString("null")
		}
		return e.object(v, depth)
	case reflect.Struct:
		fields, ok := encFieldsOf(t)
		if !ok {
			return e.delegate(v)
		}
		return e.structValue(v, fields, depth)
	}
	return e.delegate(v)
}

// base64 appends b as a standard base64 JSON string, in pieces.
func (e *pooledEncoder) base64(b []byte) error {
	if err := e.out.grow(base64.StdEncoding.EncodedLen(len(b)) + 2); err != nil {
		return err
	}
	e.out.buf = append(e.out.buf, '"')
	e.out.buf = base64.StdEncoding.AppendEncode(e.out.buf, b)
	e.out.buf = append(e.out.buf, '"')
	return nil
}

// array appends the slice or array v.
func (e *pooledEncoder) array(v reflect.Value, depth int) error {
	if err := e.out.writeByte('['); err != nil {
		return err
	}
	for i := range v.Len() {
		if i > 0 {
			if err := e.out.writeByte(','); err != nil {
				return err
			}
		}
		if err := e.value(v.Index(i), depth+1); err != nil {
			return err
		}
	}
	return e.out.writeByte(']')
}

// object appends the map v, whose keys are strings, in key order.
func (e *pooledEncoder) object(v reflect.Value, depth int) error {
	type entry struct {
		key string
		val reflect.Value
	}
	entries := make([]entry, 0, v.Len())
	for it := v.MapRange(); it.Next(); {
		entries = append(entries, entry{it.Key().String(), it.Value()})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	if err := e.out.writeByte('{'); err != nil {
		return err
	}
	for i, en := range entries {
		if i > 0 {
			if err := e.out.writeByte(','); err != nil {
				return err
			}
		}
		if err := e.member(en.key, en.val, depth); err != nil {
			return err
		}
	}
	return e.out.writeByte('}')
}

// member appends "name":value.
func (e *pooledEncoder) member(name string, v reflect.Value, depth int) error {
	if err := e.out.writeJSONString(name); err != nil {
		return err
	}
	if err := e.out.writeByte(':'); err != nil {
		return err
	}
	return e.value(v, depth+1)
}

// encField is a struct field as encoding/json encodes it.
type encField struct {
	name      string
	index     []int
	omitEmpty bool
	omitZero  bool
}

// encFields caches encFieldsOf; it holds facts about Go types only, the
// same for every server.
var encFields sync.Map // reflect.Type → []encField, or nil when not walked

// encFieldsOf returns the fields of the struct type t, or false when the
// walk leaves t to encoding/json: a field with the ",string" option, an
// "omitzero" field whose type has an IsZero method, or a field promoted
// through an unexported embedded struct (reflect cannot hand it over).
func encFieldsOf(t reflect.Type) ([]encField, bool) {
	if f, ok := encFields.Load(t); ok {
		fields := f.([]encField)
		return fields, fields != nil
	}
	list := jsonFields(t)
	fields := make([]encField, 0, len(list))
	for _, f := range list {
		ok := !f.quoted && !(f.omitZero && (f.typ.Implements(isZeroerType) || reflect.PointerTo(f.typ).Implements(isZeroerType)))
		for i, st := 0, t; ok && i < len(f.index)-1; i++ {
			sf := st.Field(f.index[i])
			ok = sf.IsExported()
			if st = sf.Type; st.Kind() == reflect.Pointer {
				st = st.Elem()
			}
		}
		if !ok {
			fields = nil
			break
		}
		fields = append(fields, encField{name: f.name, index: f.index, omitEmpty: f.omitEmpty, omitZero: f.omitZero})
	}
	encFields.Store(t, fields)
	return fields, fields != nil
}

// structValue appends the struct v.
func (e *pooledEncoder) structValue(v reflect.Value, fields []encField, depth int) error {
	if err := e.out.writeByte('{'); err != nil {
		return err
	}
	first := true
	for _, f := range fields {
		fv, err := v.FieldByIndexErr(f.index)
		if err != nil || (f.omitEmpty && isEmptyValue(fv)) || (f.omitZero && fv.IsZero()) {
			continue // promoted through a nil embedded pointer, or omitted
		}
		if !first {
			if err := e.out.writeByte(','); err != nil {
				return err
			}
		}
		first = false
		if err := e.member(f.name, fv, depth); err != nil {
			return err
		}
	}
	return e.out.writeByte('}')
}

// isEmptyValue is encoding/json's test for omitempty.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
