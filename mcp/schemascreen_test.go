package mcp

import (
	"encoding/json"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// libraryProblems returns kaptinlin's problems for raw, without the screen.
func libraryProblems(t *testing.T, s *compiledSchema, raw string) []schemaProblem {
	t.Helper()
	v, err := s.decode([]byte(raw))
	if err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	var f problemCollector
	if res, failure := s.evaluate(v); failure != "" || !res.IsValid() {
		f.walk(res, "", v)
	}
	return f.problems
}

// TestScreen lists what the screen finds, and shows that each problem it
// finds is one kaptinlin finds too (the screen never rejects a valid
// instance, nor invents a problem).
func TestScreen(t *testing.T) {
	type P = schemaProblem
	const notAllowed = `the schema lists the allowed properties and additionalProperties is false`
	tests := []struct {
		name, schema, instance string
		want                   []P // what the screen finds
	}{
		{"valid", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, `{"a":"x"}`, nil},
		{"additionalProperties false", `{"type":"object","properties":{"a":{}},"additionalProperties":false}`, `{"b/c":1,"a":2,"z":3}`,
			[]P{{"/b~1c", `property "b/c" is not allowed: ` + notAllowed}, {"/z", `property "z" is not allowed: ` + notAllowed}}},
		{"patternProperties match", `{"type":"object","patternProperties":{"^x-":{"type":"integer"}},"additionalProperties":false}`, `{"x-a":"s","y":1}`,
			[]P{{"/x-a", "Value is string but should be integer"}, {"/y", `property "y" is not allowed: ` + notAllowed}}},
		{"property schema false", `{"type":"object","properties":{"a":false}}`, `{"a":1}`, []P{{"/a", `property "a" is not allowed: its schema is false`}}},
		{"root type", `{"type":"object"}`, `[1]`, []P{{"", "Value is array but should be object"}}},
		{"nested types", `{"type":"object","properties":{"a":{"type":"array","items":{"type":["string","null"]}}}}`, `{"a":["x",null,true,{}]}`,
			[]P{{"/a/2", "Value is boolean but should be string, null"}, {"/a/3", "Value is object but should be string, null"}}},
		{"number types", `{"type":"object","additionalProperties":{"type":"string"}}`, `{"a":1,"b":1.5,"c":1e2,"d":2.50e-1}`,
			[]P{{"/a", "Value is integer but should be string"}, {"/b", "Value is number but should be string"},
				{"/c", "Value is integer but should be string"}, {"/d", "Value is number but should be string"}}},
		{"integer left to kaptinlin", `{"type":"object","additionalProperties":{"type":"integer"}}`, `{"a":1.0,"b":1.5,"c":7}`, nil},
		{"items after prefixItems", `{"type":"object","properties":{"t":{"prefixItems":[{"type":"string"}],"items":false}}}`, `{"t":[1,2]}`,
			[]P{{"/t/0", "Value is integer but should be string"}, {"/t/1", "item 1 is not allowed: the schema allows no further items"}}},
		{"draft-07 additionalItems", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"t":{"items":[{}],"additionalItems":false}}}`,
			`{"t":["x",1]}`, []P{{"/t/1", "item 1 is not allowed: the schema allows no further items"}}},
		{"$ref and allOf", `{"type":"object","$defs":{"s":{"type":"string"}},"allOf":[{"properties":{"a":{"$ref":"#/$defs/s"}}}]}`, `{"a":1}`,
			[]P{{"/a", "Value is integer but should be string"}}},
		{"recursive $ref", `{"type":"object","properties":{"c":{"$ref":"#"},"n":{"type":"integer"}},"additionalProperties":false}`, `{"c":{"c":{"x":1}}}`,
			[]P{{"/c/c/x", `property "x" is not allowed: ` + notAllowed}}},
		{"unevaluatedProperties false", `{"type":"object","allOf":[{"properties":{"a":{}}}],"anyOf":[{"patternProperties":{"^p":{}}}],"unevaluatedProperties":false}`,
			`{"a":1,"p1":2,"q":3}`, []P{{"/q", `property "q" is not allowed: unevaluatedProperties is false`}}},
		{"unevaluatedProperties beside additionalProperties: left to kaptinlin", `{"type":"object","allOf":[{"additionalProperties":true}],"unevaluatedProperties":false}`,
			`{"q":3}`, nil},
		{"conditional keywords left to kaptinlin", `{"type":"object","anyOf":[{"additionalProperties":false},{"properties":{"a":{"type":"string"}}}],"not":{"type":"object"},` +
			`"if":{"type":"object"},"then":{"additionalProperties":false}}`, `{"a":1}`, nil},
		{"draft-07 $ref siblings left alone", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"o":{"type":"object"}},` +
			`"properties":{"a":{"$ref":"#/definitions/o","type":"string"}}}`, `{"a":{}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, tt.schema)
			v, err := s.decode([]byte(tt.instance))
			if err != nil {
				t.Fatal(err)
			}
			got := s.screen(v, 1<<20)
			slices.SortFunc(got, compareProblems)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("screen(%s)\n got: %q\nwant: %q", tt.instance, got, tt.want)
			}
			lib := libraryProblems(t, s, tt.instance)
			for _, p := range got {
				if !slices.Contains(lib, p) {
					t.Errorf("the screen found %q, kaptinlin did not: %q", p, lib)
				}
			}
		})
	}
}

// TestScreenStopsAtTheBudget: a schema whose $refs loop on the same value,
// and a budget of visits, end the screen without a verdict.
func TestScreenStopsAtTheBudget(t *testing.T) {
	s := mustCompile(t, `{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"},{"$ref":"#/$defs/a"}]}},"allOf":[{"$ref":"#/$defs/a"}]}`)
	if p := s.validate(json.RawMessage(`{}`)); p != nil {
		t.Fatalf("validate = %q", p)
	}
	big := mustCompile(t, `{"type":"object","additionalProperties":{"type":"string"}}`)
	v, _ := big.decode(manyMembers(100, "1"))
	if p := big.screen(v, 10); len(p) != 9 {
		t.Fatalf("a budget of 10 visits (the root and 9 members) found %d problems", len(p))
	}
}

// allocation measures the bytes and objects f allocates.
func allocation(f func()) (bytes, objects uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs
}

// TestSchemaValidateCostBounded: validating an instance with 100,000
// members or items that fail the schema (about 1.2 MB, under the default
// payload limit) costs no more than decoding it plus a fixed amount —
// before the screen, kaptinlin built a result and an error per member: 150
// MB and 2.4 million allocations for one call.
func TestSchemaValidateCostBounded(t *testing.T) {
	const n = 100_000
	items := json.RawMessage(`{"t":[` + strings.Repeat(`1,`, n-1) + `1]}`)
	tests := []struct {
		name, schema string
		instance     json.RawMessage
	}{
		{"additionalProperties false", `{"type":"object","additionalProperties":false}`, manyMembers(n, "0")},
		{"derived struct schema", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`, manyMembers(n, "0")},
		{"member type", `{"type":"object","additionalProperties":{"type":"string"}}`, manyMembers(n, "0")},
		{"unevaluatedProperties false", `{"type":"object","unevaluatedProperties":false}`, manyMembers(n, "0")},
		{"item type", `{"type":"object","properties":{"t":{"type":"array","items":{"type":"string"}}}}`, items},
		{"numbers out of bounds", `{"type":"object"}`, manyMembers(n, "1e9999")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, tt.schema)
			var p []schemaProblem
			decodeBytes, decodeObjects := allocation(func() { s.decode(tt.instance) })
			gotBytes, gotObjects := allocation(func() { p = s.validate(tt.instance) })
			if len(p) != maxSchemaProblems+1 || !strings.HasPrefix(p[maxSchemaProblems].Message, "validation stopped after 20") {
				t.Fatalf("want %d problems and a note, got %d: %q", maxSchemaProblems, len(p), p[len(p)-1])
			}
			// The bound: decoding, two sorted lists of member names (16
			// bytes a name: the number check and the screen each sort),
			// and 1 MiB and 1000 objects for the problems found.
			maxBytes := decodeBytes + 2*16*n + 1<<20
			maxObjects := decodeObjects + 1000
			t.Logf("decode %d B %d objects; validate %d B %d objects", decodeBytes, decodeObjects, gotBytes, gotObjects)
			if gotBytes > maxBytes || gotObjects > maxObjects {
				t.Errorf("validation allocated %d bytes in %d objects, over the bound of %d bytes in %d objects",
					gotBytes, gotObjects, maxBytes, maxObjects)
			}
		})
	}
}

func BenchmarkSchemaValidateHostile(b *testing.B) {
	for _, bc := range []struct{ name, schema string }{
		{"additionalPropertiesFalse", `{"type":"object","additionalProperties":false}`},
		{"objectOnly", `{"type":"object"}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := mustCompile(b, bc.schema)
			in := manyMembers(100_000, "0")
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				s.validate(in)
			}
		})
	}
}
