package mcp

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
)

// deriveSchema returns a JSON Schema (2020-12, no "$schema" member) for
// arguments decoded into the Go type t:
//   - a struct or a pointer to one:
//     {"type":"object","properties":{...},"required":[...],"additionalProperties":false};
//   - map[string]T: {"type":"object","additionalProperties":<T's schema>},
//     without additionalProperties when T is an interface (any value);
//   - json.RawMessage: {"type":"object"} (any arguments object).
//
// The schema describes what encoding/json reads into t:
//   - Fields: the exported fields encoding/json sees, embedded structs
//     flattened with its rules for name conflicts; names from `json` tags,
//     "-" skipped. A field is required unless it has omitempty or omitzero,
//     is a pointer, or is promoted from an embedded pointer to a struct.
//   - A `jsonschema:"..."` tag (the convention of the official MCP Go SDK
//     and github.com/google/jsonschema-go) or a `description:"..."` tag sets
//     the property's "description". Like jsonschema-go, a jsonschema tag
//     must not be empty nor begin with "WORD=" (key=value forms are
//     reserved); unlike it, mcprt also refuses other tags it does not
//     understand rather than ignore them: tags whose key begins with
//     "jsonschema" (e.g. jsonschema_description), and json tag options
//     other than omitempty, omitzero and string.
//   - string → string; bool → boolean; integers → integer (unsigned ones
//     with "minimum": 0; 8-, 16- and 32-bit ones bounded to their range);
//     floats → number; []byte → base64 string; slices → array, arrays →
//     array of exactly their length; map[string]T → object whose
//     additionalProperties is T; struct → object, by the same rules, with
//     additionalProperties false; pointer → its element's schema;
//     time.Time → date-time string; json.Number → number; a type with a
//     JSONType() string method (on its value) → {"type": JSONType()};
//     json.RawMessage,
//     interfaces and other types with their own UnmarshalJSON → {} (any
//     value); other encoding.TextUnmarshaler types → string; a field tagged
//     `json:",string"` → string.
//   - Channels, functions, complex numbers, unsafe pointers, maps with
//     non-string keys and recursive types are errors naming the field.
//
// Members are written in a fixed order: properties in field order (as
// encoding/json writes them), keywords in the order listed above.
func deriveSchema(t reflect.Type) (json.RawMessage, error) {
	if t == nil {
		return nil, fmt.Errorf("no type given: a tool's input type must be a struct, a pointer to a struct, a map with string keys or json.RawMessage")
	}
	switch {
	case t == rawMessageType:
		return json.RawMessage(`{"type":"object"}`), nil
	case t.Kind() == reflect.Map && !implements(t, unmarshalerType):
		g := schemaGen{active: map[reflect.Type]bool{}}
		s, err := g.schemaOf(t, t.String())
		if err != nil {
			return nil, err
		}
		if t.Elem().Kind() == reflect.Interface {
			s = orderedSchema{{"type", "object"}}
		}
		return json.Marshal(s)
	}
	st := t
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%s is a %s: a tool's input type must be a struct, a pointer to a struct, a map with string keys or json.RawMessage", t, t.Kind())
	}
	g := schemaGen{active: map[reflect.Type]bool{}}
	s, err := g.schemaOf(st, st.String())
	if err != nil {
		return nil, err
	}
	if len(s) == 0 || s[0].value != "object" { // st decodes itself (UnmarshalJSON or UnmarshalText)
		return nil, fmt.Errorf("%s decodes itself from JSON, so its schema cannot be derived: give the tool an explicit InputSchema", st)
	}
	return json.Marshal(s)
}

// deriveOutputSchema returns an outputSchema for results of the Go type t
// when t is a struct or a pointer to one, and ok false (no schema, no
// error) for any other type or for a struct with its own MarshalJSON or
// MarshalText. The rules are deriveSchema's, turned to what encoding/json
// writes: a field is required unless omitempty or omitzero may leave it
// out; a pointer, slice or map (encoded as null when nil) also admits
// null; types with MarshalJSON → {}, with MarshalText → string.
func deriveOutputSchema(t reflect.Type) (schema json.RawMessage, ok bool, err error) {
	if t == nil {
		return nil, false, nil
	}
	st := t
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() != reflect.Struct {
		return nil, false, nil
	}
	g := schemaGen{active: map[reflect.Type]bool{}, output: true}
	s, err := g.schemaOf(st, st.String())
	if err != nil {
		return nil, false, err
	}
	if len(s) == 0 || s[0].value != "object" { // st encodes itself
		return nil, false, nil
	}
	schema, err = json.Marshal(s)
	return schema, err == nil, err
}

// orderedSchema is a JSON object whose members encode in slice order.
type orderedSchema []schemaMember

type schemaMember struct {
	key   string
	value any
}

// MarshalJSON writes the members in order.
func (o orderedSchema) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	jsonNumberType  = reflect.TypeFor[json.Number]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textType        = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonTyperType   = reflect.TypeFor[jsonTyper]()
	// reservedTagPrefix is jsonschema-go's test for tags it reserves.
	reservedTagPrefix = regexp.MustCompile("^[^ \t\n]*=")
)

// jsonTyper is a type that states its JSON Schema type: a raw JSON value
// that must be an object, say (see toolspec.Object), gets {"type":"object"}
// where json.RawMessage would get {} (any value). JSONType is called on the
// zero value.
type jsonTyper interface{ JSONType() string }

// schemaGen derives schemas; active holds the composite types being derived,
// to detect recursion; output says the schema describes what encoding/json
// writes (a result) rather than what it reads (arguments).
type schemaGen struct {
	active map[reflect.Type]bool
	output bool
}

// implements reports whether t or *t implements iface.
func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(iface))
}

// schemaOf derives the schema of t; where names the field (Type.Field.Sub)
// for errors.
func (g *schemaGen) schemaOf(t reflect.Type, where string) (orderedSchema, error) {
	custom, text := unmarshalerType, textType
	if g.output {
		custom, text = marshalerType, textMarshalerType
	}
	switch {
	case t == timeType:
		return orderedSchema{{"type", "string"}, {"format", "date-time"}}, nil
	case t == jsonNumberType:
		return orderedSchema{{"type", "number"}}, nil
	case implements(t, jsonTyperType):
		return orderedSchema{{"type", reflect.New(t).Elem().Interface().(jsonTyper).JSONType()}}, nil
	case t == rawMessageType, t.Kind() == reflect.Interface, implements(t, custom):
		return orderedSchema{}, nil
	case implements(t, text):
		return orderedSchema{{"type", "string"}}, nil
	}
	if g.output {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map: // nil encodes as null
			s, err := g.valueSchema(t, where)
			if err == nil && len(s) > 0 && s[0].key == "type" {
				if name, ok := s[0].value.(string); ok {
					s = slices.Clone(s)
					s[0].value = []string{"null", name}
				}
			}
			return s, err
		}
	}
	return g.valueSchema(t, where)
}

// valueSchema derives the schema of t by its kind.
func (g *schemaGen) valueSchema(t reflect.Type, where string) (orderedSchema, error) {
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.Pointer, reflect.Struct:
		if g.active[t] {
			return nil, fmt.Errorf("field %s: type %s contains itself: recursive types are not derived; give the tool an explicit InputSchema (with $defs and $ref)", where, t)
		}
		g.active[t] = true
		defer delete(g.active, t)
	}
	switch t.Kind() {
	case reflect.Bool:
		return orderedSchema{{"type", "boolean"}}, nil
	case reflect.String:
		return orderedSchema{{"type", "string"}}, nil
	case reflect.Float32, reflect.Float64:
		return orderedSchema{{"type", "number"}}, nil
	case reflect.Int8, reflect.Int16, reflect.Int32:
		bits := t.Bits()
		return orderedSchema{{"type", "integer"}, {"minimum", int64(-1) << (bits - 1)}, {"maximum", int64(1)<<(bits-1) - 1}}, nil
	case reflect.Int, reflect.Int64:
		return orderedSchema{{"type", "integer"}}, nil
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return orderedSchema{{"type", "integer"}, {"minimum", 0}, {"maximum", uint64(math.MaxUint64) >> (64 - t.Bits())}}, nil
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return orderedSchema{{"type", "integer"}, {"minimum", 0}}, nil
	case reflect.Pointer:
		return g.schemaOf(t.Elem(), where)
	case reflect.Slice, reflect.Array:
		if e := t.Elem(); t.Kind() == reflect.Slice && e.Kind() == reflect.Uint8 && !implements(e, unmarshalerType) && !implements(e, textType) &&
			!implements(e, marshalerType) && !implements(e, textMarshalerType) {
			return orderedSchema{{"type", "string"}, {"contentEncoding", "base64"}}, nil
		}
		items, err := g.schemaOf(t.Elem(), where+"[]")
		if err != nil {
			return nil, err
		}
		s := orderedSchema{{"type", "array"}, {"items", items}}
		if t.Kind() == reflect.Array {
			s = append(s, schemaMember{"minItems", t.Len()}, schemaMember{"maxItems", t.Len()})
		}
		return s, nil
	case reflect.Map:
		if k := t.Key(); k.Kind() != reflect.String && !implements(k, textType) {
			return nil, fmt.Errorf("field %s has type %s: JSON object keys are strings, so only maps with string keys derive a schema; use map[string]%s", where, t, t.Elem())
		}
		values, err := g.schemaOf(t.Elem(), where+"[]")
		if err != nil {
			return nil, err
		}
		return orderedSchema{{"type", "object"}, {"additionalProperties", values}}, nil
	case reflect.Struct:
		return g.structSchema(t, where)
	}
	return nil, fmt.Errorf("field %s has type %s, which JSON cannot represent: change its type, or leave it out of the input with the tag json:\"-\"", where, t)
}

// structSchema derives the object schema of the struct type t.
func (g *schemaGen) structSchema(t reflect.Type, where string) (orderedSchema, error) {
	props := orderedSchema{}
	required := []string{}
	for _, f := range jsonFields(t) {
		fieldWhere := where + "." + f.goPath
		if err := checkTags(f, fieldWhere); err != nil {
			return nil, err
		}
		s, err := g.schemaOf(f.typ, fieldWhere)
		if err != nil {
			return nil, err
		}
		if f.quoted {
			s = orderedSchema{{"type", "string"}}
		}
		if f.desc != "" {
			s = append(slices.Clip(s), schemaMember{"description", f.desc})
		}
		props = append(props, schemaMember{f.name, s})
		if f.required || (g.output && !f.omitEmpty && !f.omitZero) {
			required = append(required, f.name)
		}
	}
	s := orderedSchema{{"type", "object"}, {"properties", props}}
	if len(required) > 0 {
		s = append(s, schemaMember{"required", required})
	}
	return append(s, schemaMember{"additionalProperties", false}), nil
}

// jsonField is a struct field as encoding/json sees it.
type jsonField struct {
	name     string       // the JSON member name
	goPath   string       // Go field names from the struct, for errors
	index    []int        // reflect index sequence
	typ      reflect.Type //
	tagged   bool         // the name comes from a tag
	required bool         // not omitempty/omitzero, not a pointer, not promoted through an embedded pointer
	quoted   bool         // `json:",string"` on a scalar field
	desc     string       // the description, from the jsonschema or description tag
	tag      reflect.StructTag
	// omitEmpty and omitZero are the tag's omitempty and omitzero options.
	omitEmpty, omitZero bool
}

// jsonFields returns the fields encoding/json encodes for the struct type t,
// in its order, resolving embedded structs and name conflicts by its rules
// (shallowest wins, then a tagged one; otherwise all conflicting are dropped).
func jsonFields(t reflect.Type) []jsonField {
	type queued struct {
		typ    reflect.Type
		index  []int
		goPath string
		viaPtr bool
	}
	var fields []jsonField
	next := []queued{{typ: t}}
	nextCount := map[reflect.Type]int{t: 1}
	var count map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	for len(next) > 0 {
		current := next
		next = nil
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, q := range current {
			if visited[q.typ] {
				continue
			}
			visited[q.typ] = true
			for i := range q.typ.NumField() {
				sf := q.typ.Field(i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if (!sf.Anonymous || ft.Kind() != reflect.Struct) && !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validJSONTagName(name) {
					name = ""
				}
				index := append(slices.Clone(q.index), i)
				goPath := strings.TrimPrefix(q.goPath+"."+sf.Name, ".")
				viaPtr := q.viaPtr || (sf.Anonymous && sf.Type.Kind() == reflect.Pointer)
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					nextCount[ft]++
					if nextCount[ft] == 1 {
						next = append(next, queued{typ: ft, index: index, goPath: goPath, viaPtr: viaPtr})
					}
					continue
				}
				omitEmpty, omitZero := hasTagOption(opts, "omitempty"), hasTagOption(opts, "omitzero")
				optional := omitEmpty || omitZero
				f := jsonField{
					omitEmpty: omitEmpty, omitZero: omitZero,
					name: cmp.Or(name, sf.Name), goPath: goPath, index: index, typ: sf.Type, tagged: name != "",
					required: !optional && !q.viaPtr && sf.Type.Kind() != reflect.Pointer,
					desc:     cmp.Or(sf.Tag.Get("jsonschema"), sf.Tag.Get("description")),
					tag:      sf.Tag,
				}
				switch ft.Kind() {
				case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
					reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
					reflect.Float32, reflect.Float64, reflect.String:
					f.quoted = hasTagOption(opts, "string")
				}
				fields = append(fields, f)
				if count[q.typ] > 1 { // embedded twice at this depth: make the duplicate annihilate
					fields = append(fields, f)
				}
			}
		}
	}
	slices.SortFunc(fields, func(a, b jsonField) int {
		return cmp.Or(strings.Compare(a.name, b.name), cmp.Compare(len(a.index), len(b.index)),
			-cmpBool(a.tagged, b.tagged), slices.Compare(a.index, b.index))
	})
	var out []jsonField
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		if j-i == 1 || len(fields[i].index) < len(fields[i+1].index) || fields[i].tagged != fields[i+1].tagged {
			out = append(out, fields[i])
		}
		i = j
	}
	slices.SortFunc(out, func(a, b jsonField) int { return slices.Compare(a.index, b.index) })
	return out
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// hasTagOption reports whether the comma-separated tag options include opt.
func hasTagOption(opts, opt string) bool {
	return slices.Contains(strings.Split(opts, ","), opt)
}

// validJSONTagName reports whether encoding/json accepts name as a member
// name from a tag (otherwise it falls back to the Go field name).
func validJSONTagName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// checkTags refuses the tags of field f (where names it) that the schema
// generator does not understand, so that a constraint a tool author wrote
// is never silently dropped.
func checkTags(f jsonField, where string) error {
	if js, ok := f.tag.Lookup("jsonschema"); ok {
		switch {
		case js == "":
			return fmt.Errorf("field %s: empty jsonschema tag: write the property's description in it, or remove it", where)
		case reservedTagPrefix.MatchString(js):
			return fmt.Errorf("field %s: jsonschema tag %q looks like key=value: the tag holds only the property's description "+
				"(as in github.com/google/jsonschema-go, which reserves the WORD= form); for constraints, give the tool an explicit schema", where, js)
		}
		if d, ok := f.tag.Lookup("description"); ok && d != js {
			return fmt.Errorf("field %s has both a jsonschema and a description tag: keep one", where)
		}
	}
	for _, key := range tagKeys(f.tag) {
		if strings.HasPrefix(key, "jsonschema") && key != "jsonschema" {
			return fmt.Errorf("field %s: tag %q is not understood: mcprt reads only `jsonschema:\"<description>\"` (and `description:\"...\"`); "+
				"for anything more, give the tool an explicit schema", where, key)
		}
	}
	if _, opts, _ := strings.Cut(f.tag.Get("json"), ","); opts != "" {
		for opt := range strings.SplitSeq(opts, ",") {
			switch opt {
			case "omitempty", "omitzero", "string":
			default:
				return fmt.Errorf("field %s: json tag option %q is not understood: encoding/json knows omitempty, omitzero and string", where, opt)
			}
		}
	}
	return nil
}

// tagKeys returns the keys of a struct tag in the conventional
// `key:"value" key2:"value2"` form, stopping at the first malformed pair.
func tagKeys(tag reflect.StructTag) []string {
	var keys []string
	for s := string(tag); ; {
		s = strings.TrimLeft(s, " ")
		i := strings.Index(s, `:"`)
		if i <= 0 {
			return keys
		}
		keys = append(keys, s[:i])
		rest := s[i+2:]
		end := -1
		for j := 0; j < len(rest); j++ {
			if rest[j] == '\\' {
				j++
			} else if rest[j] == '"' {
				end = j
				break
			}
		}
		if end < 0 {
			return keys
		}
		s = rest[end+1:]
	}
}
