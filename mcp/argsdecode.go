package mcp

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// Decoding a typed tool's arguments while they are validated. The
// validator (schemafast_raw.go) reads the arguments' text once; for a tool
// registered with AddTypedTool whose input type is a plain struct, it hands
// each top-level member to an argsTarget, which sets the matching field of
// a fresh In. When the text is valid and every member was set exactly as
// json.Unmarshal would set it, the handler gets that In
// (CallToolRequest.decoded) and the arguments are not decoded again.
// Whenever the result could differ from json.Unmarshal's — a member whose
// name matches a field only case-insensitively, a value of another kind
// than its field, a number out of the field's range, anything whose error
// json.Unmarshal would word — the target gives up and the handler decodes
// the arguments with json.Unmarshal as before, so what a handler sees, and
// every error text, stays exactly what it was.

// argsDecoder sets the fields of one struct type from JSON members. It is
// immutable once built and safe for concurrent use.
type argsDecoder struct {
	typ    reflect.Type
	fields map[string]argsField // by the exact JSON name
	names  []string             // every JSON name, for the case-insensitive check
}

// argsField is one settable field: its index and how its value is set.
type argsField struct {
	index int
	kind  reflect.Kind // a scalar kind set directly, else reflect.Invalid: json.Unmarshal into the field
	bits  int
	// elem is the scalar kind of the elements of a slice field (bits
	// theirs), set from a decoded value (argsdecode_tree.go); else
	// reflect.Invalid.
	elem reflect.Kind
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// newArgsDecoder returns the decoder of struct type t, or nil when t is not
// a struct whose fields encoding/json maps by plain rules: no unmarshaler
// method of its own, no embedded
// fields, no ",string" option, names of letters, digits, _ and -, and no
// two names equal but for case.
func newArgsDecoder(t reflect.Type) *argsDecoder {
	if pt := reflect.PointerTo(t); t.Kind() != reflect.Struct || pt.Implements(jsonUnmarshalerType) || pt.Implements(textUnmarshalerType) {
		return nil // json.Unmarshal would call its own method
	}
	d := &argsDecoder{typ: t, fields: map[string]argsField{}}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",string,") || !plainName(name) {
			return nil
		}
		if name == "" {
			name = f.Name
		}
		for _, n := range d.names {
			if strings.EqualFold(n, name) {
				return nil
			}
		}
		d.names = append(d.names, name)
		af := argsField{index: i}
		af.kind, af.bits = scalarKind(f.Type)
		if f.Type.Kind() == reflect.Slice && !unmarshals(f.Type) {
			if k, bits := scalarKind(f.Type.Elem()); k != reflect.Uint8 { // []byte is base64
				af.elem, af.bits = k, bits
			}
		}
		d.fields[name] = af
	}
	return d
}

// unmarshals reports whether json.Unmarshal calls a method of t's to
// decode it.
func unmarshals(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return pt.Implements(jsonUnmarshalerType) || pt.Implements(textUnmarshalerType)
}

// scalarKind returns t's kind when json.Unmarshal sets it as a plain
// string, boolean or number (with its size in bits), else reflect.Invalid.
func scalarKind(t reflect.Type) (reflect.Kind, int) {
	if unmarshals(t) {
		return reflect.Invalid, 0
	}
	switch k := t.Kind(); k {
	case reflect.String, reflect.Bool:
		return k, 0
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return k, t.Bits()
	}
	return reflect.Invalid, 0
}

// plainName reports whether a json tag's name is "" or made of letters,
// digits, _ and - only (names encoding/json takes as they are).
func plainName(name string) bool {
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// argsTarget is one call's In being filled by the validator.
type argsTarget struct {
	dec *argsDecoder
	ptr reflect.Value // *In
	ok  bool          // every member so far was set as json.Unmarshal sets it
}

// newTarget returns a target holding a fresh zero In.
func (d *argsDecoder) newTarget() *argsTarget {
	return &argsTarget{dec: d, ptr: reflect.New(d.typ), ok: true}
}

// reset makes the target hold a fresh zero In again.
func (t *argsTarget) reset() {
	t.ptr.Elem().SetZero()
	t.ok = true
}

// value returns the *In filled, or nil when the target gave up.
func (t *argsTarget) value() any {
	if t == nil || !t.ok {
		return nil
	}
	return t.ptr.Interface()
}

// field returns the field a member named key sets, or false when none
// does (json.Unmarshal ignores the member) or the target gave up. It is
// asked before the member's value is read: key is only valid until then.
func (t *argsTarget) field(key []byte) (argsField, bool) {
	if !t.ok {
		return argsField{}, false
	}
	f, found := t.dec.fields[string(key)]
	if !found {
		for _, n := range t.dec.names { // json.Unmarshal would match it case-insensitively
			if strings.EqualFold(n, string(key)) {
				t.ok = false
				break
			}
		}
	}
	return f, found
}

// set sets field f from raw, its member's JSON value (valid JSON: the
// validator has read it), or gives up.
func (t *argsTarget) set(f argsField, raw []byte) {
	if !t.ok || raw[0] == 'n' { // null leaves a fresh field as it is
		return
	}
	t.ok = setField(t.ptr.Elem().Field(f.index), f, raw)
}

// setField sets v from raw as json.Unmarshal would, reporting false where
// it cannot tell that it did (the caller then uses json.Unmarshal).
func setField(v reflect.Value, f argsField, raw []byte) bool {
	switch f.kind {
	case reflect.String:
		if raw[0] != '"' || bytes.IndexByte(raw, '\\') >= 0 {
			break
		}
		v.SetString(string(raw[1 : len(raw)-1]))
		return true
	case reflect.Bool:
		if raw[0] != 't' && raw[0] != 'f' {
			return false
		}
		v.SetBool(raw[0] == 't')
		return true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(string(raw), 10, f.bits)
		if err != nil {
			return false
		}
		v.SetInt(n)
		return true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := strconv.ParseUint(string(raw), 10, f.bits)
		if err != nil {
			return false
		}
		v.SetUint(n)
		return true
	case reflect.Float32, reflect.Float64:
		if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
			return false
		}
		x, err := strconv.ParseFloat(string(raw), f.bits)
		if err != nil {
			return false
		}
		v.SetFloat(x)
		return true
	}
	return json.Unmarshal(raw, v.Addr().Interface()) == nil
}
