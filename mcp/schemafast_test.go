package mcp

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// The fast validator against kaptinlin: over generated schemas (every
// keyword fastSchema models, nested) and instances generated from them
// (mostly near-valid, mutated one way or another), both must give the same
// answer. The iteration counts bound the test; the seed fixes the cases.

const (
	fastDiffSeed      = 20261126
	fastDiffSchemas   = 400
	fastDiffInstances = 40
)

// fastGen generates schemas and instances as JSON text.
type fastGen struct{ r *propRand }

var (
	fastStrings = []string{"", "a", "ab", "abc", "é", "日本", "a@b", "x@y.z", "12345", "1234", "-", "admin", "dev", "😀😀", "A B"}
	fastNumbers = []string{"0", "1", "-1", "2", "7", "10", "100", "150", "151", "0.5", "1.0", "2.50", "1e2", "-0", "1E1",
		"9007199254740993", "9007199254740992", "0.1", "99.99999999999999999", "3.0000000000000001", "1e-2"}
	fastPatterns = []string{"^[a-z]+$", "^[^@]+@[^@]+$", "^[0-9]{5}$", "b", "^$", "é", "^.{2}$"}
)

func (g fastGen) pick(list []string) string { return list[g.r.Intn(len(list))] }

func (g fastGen) strLit() string { b, _ := json.Marshal(g.pick(fastStrings)); return string(b) }

// schema returns a schema of depth at most depth.
func (g fastGen) schema(depth int) string {
	switch g.r.Intn(12) {
	case 0:
		return []string{"true", "false"}[g.r.Intn(2)]
	case 1:
		return `{}`
	}
	var m []string
	add := func(k, v string) { m = append(m, strconv.Quote(k)+":"+v) }
	kinds := []string{"string", "integer", "number", "boolean", "null", "object", "array"}
	kind := kinds[g.r.Intn(len(kinds))]
	if depth <= 0 && (kind == "object" || kind == "array") {
		kind = "string"
	}
	switch g.r.Intn(6) {
	case 0: // no type
	case 1:
		add("type", `["`+kind+`","`+kinds[g.r.Intn(len(kinds))]+`"]`)
	default:
		add("type", strconv.Quote(kind))
	}
	if g.r.Intn(4) == 0 {
		add("description", `"d"`)
	}
	switch kind {
	case "string":
		if g.r.Intn(3) == 0 {
			add("minLength", strconv.Itoa(g.r.Intn(4)))
		}
		if g.r.Intn(3) == 0 {
			add("maxLength", strconv.Itoa(g.r.Intn(5)))
		}
		if g.r.Intn(3) == 0 {
			add("pattern", strconv.Quote(g.pick(fastPatterns)))
		}
		switch g.r.Intn(5) {
		case 0:
			add("enum", "["+g.strLit()+","+g.strLit()+","+g.strLit()+"]")
		case 1:
			add("const", g.strLit())
		}
	case "integer", "number":
		lo := []string{"minimum", "exclusiveMinimum"}[g.r.Intn(2)]
		hi := []string{"maximum", "exclusiveMaximum"}[g.r.Intn(2)]
		if g.r.Intn(2) == 0 {
			add(lo, g.pick(fastNumbers))
		}
		if g.r.Intn(2) == 0 {
			add(hi, g.pick(fastNumbers))
		}
	case "array":
		if g.r.Intn(2) == 0 {
			add("items", g.schema(depth-1))
		}
		if g.r.Intn(3) == 0 {
			add("minItems", strconv.Itoa(g.r.Intn(3)))
		}
		if g.r.Intn(3) == 0 {
			add("maxItems", strconv.Itoa(g.r.Intn(4)))
		}
	case "object":
		var props, req []string
		for i := range g.r.Intn(4) {
			name := "p" + strconv.Itoa(i)
			props = append(props, strconv.Quote(name)+":"+g.schema(depth-1))
			if g.r.Intn(2) == 0 {
				req = append(req, strconv.Quote(name))
			}
		}
		if len(props) > 0 || g.r.Intn(2) == 0 {
			add("properties", "{"+strings.Join(props, ",")+"}")
		}
		if len(req) > 0 || g.r.Intn(4) == 0 {
			add("required", "["+strings.Join(req, ",")+"]")
		}
		switch g.r.Intn(4) {
		case 0:
			add("additionalProperties", "false")
		case 1:
			add("additionalProperties", g.schema(depth-1))
		}
		if g.r.Intn(5) == 0 {
			add("minProperties", strconv.Itoa(g.r.Intn(3)))
		}
		if g.r.Intn(5) == 0 {
			add("maxProperties", strconv.Itoa(g.r.Intn(4)))
		}
	}
	return "{" + strings.Join(m, ",") + "}"
}

// instance returns a value for schema (decoded), often close to valid.
func (g fastGen) instance(schema any, depth int) string {
	s, _ := schema.(map[string]any)
	if g.r.Intn(6) == 0 || depth <= 0 || s == nil {
		return g.anyValue(depth)
	}
	if e, ok := s["enum"].([]any); ok && g.r.Intn(3) > 0 {
		b, _ := json.Marshal(e[g.r.Intn(len(e))])
		return string(b)
	}
	if c, ok := s["const"]; ok && g.r.Intn(3) > 0 {
		b, _ := json.Marshal(c)
		return string(b)
	}
	kind, _ := s["type"].(string)
	if ks, ok := s["type"].([]any); ok {
		kind, _ = ks[g.r.Intn(len(ks))].(string)
	}
	switch kind {
	case "string":
		return g.strLit()
	case "integer", "number":
		return g.pick(fastNumbers)
	case "boolean":
		return "true"
	case "null":
		return "null"
	case "array":
		var items []string
		for range g.r.Intn(4) {
			items = append(items, g.instance(s["items"], depth-1))
		}
		return "[" + strings.Join(items, ",") + "]"
	case "object":
		props, _ := s["properties"].(map[string]any)
		var members []string
		for name, sub := range props {
			if g.r.Intn(4) > 0 {
				members = append(members, strconv.Quote(name)+":"+g.instance(sub, depth-1))
			}
		}
		if g.r.Intn(4) == 0 {
			members = append(members, `"extra":`+g.instance(s["additionalProperties"], depth-1))
		}
		return "{" + strings.Join(members, ",") + "}"
	}
	return g.anyValue(depth)
}

// anyValue is a value of any kind.
func (g fastGen) anyValue(depth int) string {
	switch g.r.Intn(7) {
	case 0:
		return "null"
	case 1:
		return []string{"true", "false"}[g.r.Intn(2)]
	case 2:
		return g.pick(fastNumbers)
	case 3:
		if depth > 0 {
			return "[" + g.anyValue(depth-1) + "]"
		}
	case 4:
		if depth > 0 {
			return `{"p0":` + g.anyValue(depth-1) + "}"
		}
	}
	return g.strLit()
}

// kaptinlinValid is the reference: kaptinlin alone on the decoded value.
func kaptinlinValid(t testing.TB, cs *compiledSchema, v any) bool {
	t.Helper()
	res, failure := cs.evaluate(v)
	if failure != "" {
		t.Fatalf("kaptinlin failed: %s", failure)
	}
	return res.IsValid()
}

func TestFastSchemaAgreesWithKaptinlin(t *testing.T) {
	c := newSchemaCompiler()
	g := fastGen{newPropRand(fastDiffSeed)}
	compiled, valid, invalid := 0, 0, 0
	for i := range fastDiffSchemas {
		sch := `{"type":"object","properties":{"v":` + g.schema(3) + `}}`
		if g.r.Intn(2) == 0 {
			sch = `{"type":"object","properties":{"v":` + g.schema(3) + `},"required":["v"],"additionalProperties":false}`
		}
		cs, err := c.compile("inputSchema", json.RawMessage(sch))
		if err != nil {
			t.Fatalf("schema %d does not compile: %v\n%s", i, err, sch)
		}
		if cs.fast == nil {
			t.Fatalf("schema %d uses only modelled keywords but was not compiled fast:\n%s", i, sch)
		}
		compiled++
		doc, _ := cs.decode([]byte(sch))
		sub := doc.(map[string]any)["properties"].(map[string]any)["v"]
		for range fastDiffInstances {
			inst := `{"v":` + g.instance(sub, 3) + `}`
			v, err := cs.decode([]byte(inst))
			if err != nil {
				t.Fatalf("generated instance is not JSON: %v\n%s", err, inst)
			}
			want := kaptinlinValid(t, cs, v)
			if got := cs.fast.valid(v); got != want {
				t.Fatalf("schema %s\ninstance %s\nfast says valid=%v, kaptinlin says %v", sch, inst, got, want)
			}
			if got := cs.fast.validRaw([]byte(inst)); got != want {
				t.Fatalf("schema %s\ninstance %s\nfast on the text says valid=%v, kaptinlin says %v", sch, inst, got, want)
			}
			if want {
				valid++
			} else {
				invalid++
			}
		}
	}
	if valid < fastDiffSchemas || invalid < fastDiffSchemas {
		t.Fatalf("the generator is lopsided: %d valid, %d invalid instances", valid, invalid)
	}
	t.Logf("%d schemas, %d valid and %d invalid instances: fast and kaptinlin agree", compiled, valid, invalid)
}

// TestFastSchemaFallsBack: a schema with a keyword fastSchema does not
// model is not compiled fast (kaptinlin validates it, whole); the
// validator's answer is kaptinlin's either way.
func TestFastSchemaFallsBack(t *testing.T) {
	c := newSchemaCompiler()
	for _, tc := range []struct {
		schema string
		fast   bool
	}{
		{`{"type":"object"}`, true},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A","title":"t"}}}`, true},
		{`{"type":"object","properties":{"a":{"type":"string","format":"email"}}}`, false},
		{`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`, false},
		{`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"}]}}}`, false},
		{`{"type":"object","properties":{"a":{"enum":[1,2]}}}`, false},
		{`{"type":"object","properties":{"a":{"type":"number","multipleOf":2}}}`, false},
		{`{"type":"object","patternProperties":{"^a":{"type":"string"}}}`, false},
		{`{"type":"object","properties":{"a":{"type":"string","maxLength":2.5}}}`, false},
		{`{"type":"object","properties":{"a":{"type":"string","pattern":"(?<=a)b"}}}`, false},
	} {
		cs, err := c.compile("inputSchema", json.RawMessage(tc.schema))
		if err != nil {
			if tc.fast {
				t.Fatalf("%s: %v", tc.schema, err)
			}
			continue
		}
		if (cs.fast != nil) != tc.fast {
			t.Errorf("%s: compiled fast = %v, want %v", tc.schema, cs.fast != nil, tc.fast)
		}
	}
}

// lookup20Schema is the lookup20 fixture's input schema, the realistic case.
const lookup20Schema = `{"type":"object","properties":{"id":{"type":"string","maxLength":64},
"name":{"type":"string","minLength":1,"maxLength":100},"email":{"type":"string","maxLength":254,"pattern":"^[^@]+@[^@]+$"},
"age":{"type":"integer","minimum":0,"maximum":150},"role":{"type":"string","enum":["admin","dev","ops","guest"]},
"active":{"type":"boolean"},"score":{"type":"number","minimum":0,"maximum":100},
"tags":{"type":"array","maxItems":20,"items":{"type":"string","maxLength":32}},
"address":{"type":"object","properties":{"street":{"type":"string","maxLength":200},"city":{"type":"string","maxLength":100},
"zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["city"]},"phone":{"type":"string","maxLength":32},
"team":{"type":"string","maxLength":64},"manager":{"type":"string","maxLength":64},"level":{"type":"integer","minimum":1,"maximum":10},
"locale":{"type":"string","enum":["en","de","fr","ja"]},"timezone":{"type":"string","maxLength":64},
"created":{"type":"string","maxLength":40},"notes":{"type":"string","maxLength":2000},"quota":{"type":"integer","minimum":0},
"flags":{"type":"array","maxItems":10,"items":{"type":"boolean"}},"project":{"type":"string","maxLength":128}},
"required":["id","name","email","age","role"],"additionalProperties":false}`

// FuzzFastSchemaLookup20 checks the fast validator against kaptinlin on
// any instance of the lookup20 schema (make fuzz bounds it by iterations),
// and its pass that decodes typed arguments while it validates against
// json.Unmarshal.
func FuzzFastSchemaLookup20(f *testing.F) {
	for _, seed := range []string{
		`{"id":"u","name":"A","email":"a@b","age":1,"role":"dev"}`,
		`{"id":"u","name":"","email":"a@b","age":1.0,"role":"dev","address":{"city":"x","zip":"12345"}}`,
		`{"id":"u","name":"A","email":"ab","age":151,"role":"boss","tags":["a"],"flags":[true,1]}`,
		`{"id":"u","name":"A","email":"a@b","age":1e2,"role":"ops","score":100.0000000000000001,"x":1}`,
		`[]`, `null`, `{"address":{}}`, `{"id":"\u0061","name":"\ud83d\ude00","email":"a@b","age":0,"role":"admin"} `,
		`{"id":"u","id":"v","name":"A","email":"a@b","age":1,"role":"dev"}`, "{\"id\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	cs, err := newSchemaCompiler().compile("inputSchema", json.RawMessage(lookup20Schema))
	if err != nil || cs.fast == nil {
		f.Fatalf("lookup20 schema: fast=%v err=%v", cs != nil && cs.fast != nil, err)
	}
	f.Fuzz(func(t *testing.T, instance []byte) {
		raw := cs.fast.validRaw(instance)
		checkLookup20Decode(t, cs, instance, raw)
		v, err := cs.decode(instance)
		if err != nil {
			if raw {
				t.Fatalf("instance %q: kaptinlin's decoder refuses it (%v) but the text path says valid", instance, err)
			}
			return
		}
		bad := false
		checkTree(v, nil, maxSchemaDepth, func([]pathToken, string) bool { bad = true; return false })
		if bad {
			if raw {
				t.Fatalf("instance %q: out of bounds, but the text path says valid", instance)
			}
			return // refused before any validator runs
		}
		want := kaptinlinValid(t, cs, v)
		if got := cs.fast.valid(v); got != want {
			t.Fatalf("instance %s: fast says valid=%v, kaptinlin says %v", instance, got, want)
		}
		if raw != want {
			t.Fatalf("instance %s: fast on the text says valid=%v, kaptinlin says %v", instance, raw, want)
		}
	})
}

// TestFastValidateReportsKaptinlinProblems: an invalid value gets
// kaptinlin's problems whether or not the schema was compiled fast.
func TestFastValidateReportsKaptinlinProblems(t *testing.T) {
	c := newSchemaCompiler()
	cs, err := c.compile("inputSchema", json.RawMessage(lookup20Schema))
	if err != nil || cs.fast == nil {
		t.Fatalf("lookup20 schema: %v", err)
	}
	slow := *cs
	slow.fast = nil
	for _, inst := range []string{
		`{"id":"u","name":"A","email":"a@b","age":1,"role":"dev"}`,
		`{"id":"u","name":"","email":"ab","age":151,"role":"boss","x":1}`,
		`{"name":"A","address":{"zip":"1"},"tags":[1,2]}`,
	} {
		got, want := cs.validate(json.RawMessage(inst)), slow.validate(json.RawMessage(inst))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\nfast path %v\nkaptinlin %v", inst, got, want)
		}
	}
}
