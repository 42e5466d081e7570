package mcp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSchemaCompile(t *testing.T) {
	// root (1) > properties (2) > a (3) > const arrays (4…)
	deep := `{"type":"object","properties":{"a":{"const":` + strings.Repeat(`[`, 61) + strings.Repeat(`]`, 61) + `}}}`
	tooDeep := `{"type":"object","properties":{"a":{"const":` + strings.Repeat(`[`, 62) + strings.Repeat(`]`, 62) + `}}}`
	big := `{"type":"object","description":"` + strings.Repeat("x", maxSchemaBytes) + `"}`
	tests := []struct {
		name, schema string
		wantErr      string // "" means it compiles
	}{
		{"minimal", `{"type":"object"}`, ""},
		{"non-object root", `[{"type":"object"}]`, `inputSchema must be a JSON object, got [{"type":"object"}]`},
		{"boolean root", `true`, `inputSchema must be a JSON object, got true`},
		{"missing type", `{"properties":{}}`, `inputSchema must have "type": "object" at its root, got no "type"`},
		{"type array", `{"type":["object","null"]}`, `inputSchema must have "type": "object" at its root, got ["object","null"]`},
		{"type string", `{"type":"string"}`, `inputSchema must have "type": "object" at its root, got "string"`},
		{"invalid JSON", `{"type":"object",}`, `inputSchema is not valid JSON`},
		{"trailing data", `{"type":"object"} {}`, `inputSchema is not valid JSON: invalid character '{' after top-level value`},
		{"empty", ``, `inputSchema is not valid JSON`},
		{"oversize", big, `bytes; the limit is 262144 bytes (256 KiB)`},
		{"64 levels", deep, ""},
		{"65 levels", tooDeep, `nesting is deeper than the limit of 64 levels`},
		{"huge number", `{"type":"object","properties":{"n":{"maximum":1e99999}}}`, `at "/properties/n/maximum": number 1e99999 is out of range`},
		{"unknown dialect", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`,
			`unsupported JSON Schema dialect "http://json-schema.org/draft-04/schema#": use 2020-12 (no $schema) or draft-07`},
		{"dialect without scheme", `{"$schema":"json-schema.org/draft-07/schema#","type":"object"}`, `unsupported JSON Schema dialect "json-schema.org/draft-07/schema#"`},
		{"draft-07 without scheme", `{"$schema":"json-schema.org/draft-07/schema","type":"object"}`, `unsupported JSON Schema dialect`},
		{"both schemes", `{"$schema":"https://http://json-schema.org/draft-07/schema","type":"object"}`, `unsupported JSON Schema dialect`},
		{"2020-12 over http with #", `{"$schema":"http://json-schema.org/draft/2020-12/schema#","type":"object"}`, ""},
		{"non-string dialect", `{"$schema":7,"type":"object"}`, `unsupported JSON Schema dialect 7`},
		{"nested unknown dialect", `{"type":"object","$defs":{"a":{"$id":"https://x.test/a","$schema":"https://json-schema.org/draft/2019-09/schema"}}}`,
			`unsupported JSON Schema dialect "https://json-schema.org/draft/2019-09/schema" in a subschema`},
		{"draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"a":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/a"}}}`, ""},
		{"draft-07 without #", `{"$schema":"http://json-schema.org/draft-07/schema","type":"object"}`, ""},
		{"draft-07 https", `{"$schema":"https://json-schema.org/draft-07/schema#","type":"object"}`, ""},
		{"2020-12 explicit", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, ""},
		{"$defs and $ref", `{"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n"}}}`, ""},
		{"$anchor", `{"type":"object","properties":{"a":{"$ref":"#num"}},"$defs":{"n":{"$anchor":"num","type":"integer"}}}`, ""},
		{"anchor defined after use", `{"type":"object","$defs":{"a":{"$ref":"#later"}},"properties":{"p":{"$anchor":"later","type":"string"},"q":{"$ref":"#/$defs/a"}}}`, ""},
		{"recursive $ref", `{"type":"object","properties":{"child":{"$ref":"#"}}}`, ""},
		{"allOf anyOf if-then-else", `{"type":"object","allOf":[{"required":["a"]}],"anyOf":[{"properties":{"a":{"type":"string"}}},{"properties":{"a":{"type":"integer"}}}],` +
			`"if":{"properties":{"a":{"const":1}}},"then":{"required":["b"]},"else":{"required":["c"]}}`, ""},
		{"unresolvable local $ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/nope"}}}`, `inputSchema: $ref "#/$defs/nope" cannot be resolved: the schema has no such location`},
		{"network $ref", `{"type":"object","properties":{"a":{"$ref":"http://example.com/s.json"}}}`,
			`inputSchema: $ref "http://example.com/s.json" cannot be resolved: mcprt never fetches schemas over the network; inline it under $defs`},
		{"two unresolved", `{"type":"object","properties":{"a":{"$ref":"https://b.test/x"},"b":{"$ref":"https://a.test/x"}}}`,
			`$ref "https://a.test/x" cannot be resolved: mcprt never fetches schemas over the network; inline it under $defs`},
		{"metaschema $ref", `{"type":"object","properties":{"s":{"$ref":"https://json-schema.org/draft/2020-12/schema"}}}`, `cannot be resolved: mcprt never fetches`},
		{"invalid regex", `{"type":"object","properties":{"a":{"pattern":"("}}}`, `inputSchema does not compile`},
		{"duplicate key", `{"type":"object","type":"object"}`, `inputSchema is not valid JSON: duplicate object member name "type"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newSchemaCompiler().compile("inputSchema", json.RawMessage(tt.schema))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("compile: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("compile succeeded, want an error containing %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("compile error\n got: %v\nwant: …%s…", err, tt.wantErr)
			}
		})
	}
}

func TestSchemaCompileRoleInErrors(t *testing.T) {
	_, err := newSchemaCompiler().compile("outputSchema", json.RawMessage(`{"type":"array"}`))
	if err == nil || !strings.HasPrefix(err.Error(), `outputSchema must have "type": "object" at its root, got "array"`) {
		t.Fatalf("err = %v", err)
	}
}

// TestSchemaCompileNeverFetches proves that no $ref reaches the network: a
// local server that would serve the referenced schema records no request.
func TestSchemaCompileNeverFetches(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/schema+json")
		fmt.Fprint(w, `{"type":"string"}`)
	}))
	defer srv.Close()
	schemas := map[string]string{
		"absolute":       `{"type":"object","properties":{"a":{"$ref":"` + srv.URL + `/x.json"}}}`,
		"with fragment":  `{"type":"object","properties":{"a":{"$ref":"` + srv.URL + `/x.json#/$defs/s"}}}`,
		"relative to id": `{"$id":"` + srv.URL + `/root.json","type":"object","properties":{"a":{"$ref":"x.json"}}}`,
		"dynamicRef":     `{"type":"object","properties":{"a":{"$dynamicRef":"` + srv.URL + `/x.json"}}}`,
		"draft-07":       `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"` + srv.URL + `/x.json"}}}`,
	}
	c := newSchemaCompiler()
	for name, schema := range schemas {
		_, err := c.compile("inputSchema", json.RawMessage(schema))
		if err == nil || !strings.Contains(err.Error(), "cannot be resolved: mcprt never fetches schemas over the network; inline it under $defs") {
			t.Errorf("%s: err = %v, want the never-fetches error", name, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the schema server saw %d requests, want 0", n)
	}
	// The server does answer, so zero hits means nothing tried.
	resp, err := http.Get(srv.URL + "/x.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if hits.Load() != 1 {
		t.Fatalf("control request not counted")
	}
}

func TestSchemaCompilations(t *testing.T) {
	c := newSchemaCompiler()
	s, err := c.compile("inputSchema", json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.compile("inputSchema", json.RawMessage(`{"type":"string"}`))
	if got := c.compilations(); got != 2 {
		t.Fatalf("compilations() = %d, want 2 (failed compiles count too)", got)
	}
	for range 10 {
		s.validate(json.RawMessage(`{"a":1}`))
	}
	if got := c.compilations(); got != 2 {
		t.Fatalf("compilations() = %d after validating, want 2", got)
	}
}

// TestSchemaSameIDIsolated: kaptinlin caches schemas by $id per Compiler;
// two tools declaring the same $id must still each get their own schema.
func TestSchemaSameIDIsolated(t *testing.T) {
	c := newSchemaCompiler()
	a, err := c.compile("inputSchema", json.RawMessage(`{"$id":"https://x.test/s","type":"object","required":["a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.compile("inputSchema", json.RawMessage(`{"$id":"https://x.test/s","type":"object","required":["b"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if p := a.validate(json.RawMessage(`{"a":1}`)); p != nil {
		t.Errorf("a: %v", p)
	}
	if p := b.validate(json.RawMessage(`{"b":1}`)); p != nil {
		t.Errorf("b validated with a's schema: %v", p)
	}
	// Nor can one tool's schema $ref another's.
	if _, err := c.compile("inputSchema", json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"https://x.test/s"}}}`)); err == nil {
		t.Errorf("a $ref to another tool's $id resolved")
	}
}

func mustCompile(t testing.TB, schema string) *compiledSchema {
	t.Helper()
	s, err := newSchemaCompiler().compile("inputSchema", json.RawMessage(schema))
	if err != nil {
		t.Fatalf("compile %s: %v", schema, err)
	}
	return s
}

func TestSchemaValidate(t *testing.T) {
	type P = schemaProblem
	person := `{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"a":{"type":"array","items":{"type":"object","properties":{"b":{"type":"integer"}}}}},"additionalProperties":false}`
	tests := []struct {
		name, schema, instance string
		want                   []P
	}{
		{"valid", person, `{"name":"x","a":[{"b":1}]}`, nil},
		{"missing required", person, `{}`, []P{{"", "Required property 'name' is missing"}}},
		{"wrong type nested", person, `{"name":"x","a":[{"b":"no"}]}`, []P{{"/a/0/b", "Value is string but should be integer"}}},
		{"additionalProperties false", person, `{"name":"x","zz":1,"b/c":2}`, []P{
			{"/b~1c", `property "b/c" is not allowed: the schema lists the allowed properties and additionalProperties is false`},
			{"/zz", `property "zz" is not allowed: the schema lists the allowed properties and additionalProperties is false`}}},
		{"root not an object", person, `[1]`, []P{{"", "Value is array but should be object"}}},
		{"enum", `{"type":"object","properties":{"c":{"enum":["red","green"]}}}`, `{"c":"blue"}`, []P{{"/c", "Value blue should be one of the allowed values: red, green"}}},
		{"big integer is an integer", `{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"n":9007199254740993}`, nil},
		{"big integer over maximum", `{"type":"object","properties":{"n":{"maximum":9007199254740992}}}`, `{"n":9007199254740993}`, []P{{"/n", "9007199254740993 should be at most 9007199254740992"}}},
		{"big integer at maximum", `{"type":"object","properties":{"n":{"maximum":9007199254740992}}}`, `{"n":9007199254740992}`, nil},
		{"fraction is not an integer", `{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"n":9007199254740993.5}`, []P{{"/n", "Value is number but should be integer"}}},
		{"$ref", `{"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n"}}}`, `{"a":"x"}`, []P{{"/a", "Value is string but should be integer"}}},
		{"allOf", `{"type":"object","allOf":[{"required":["a"]},{"required":["b"]}]}`, `{}`, []P{{"", "Required property 'a' is missing"}, {"", "Required property 'b' is missing"}}},
		{"anyOf", `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`, `{"v":true}`, []P{{"/v", "Value does not match anyOf schema"}}},
		{"if-then", `{"type":"object","if":{"properties":{"k":{"const":"a"}},"required":["k"]},"then":{"required":["a"]},"else":{"required":["z"]}}`, `{"k":"a"}`, []P{{"", "Required property 'a' is missing"}}},
		{"if-else", `{"type":"object","if":{"properties":{"k":{"const":"a"}},"required":["k"]},"then":{"required":["a"]},"else":{"required":["z"]}}`, `{"k":"b"}`, []P{{"", "Required property 'z' is missing"}}},
		{"draft-07 additionalItems", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"t":{"items":[{"type":"string"}],"additionalItems":false}}}`,
			`{"t":["x",1]}`, []P{{"/t/1", "item 1 is not allowed: the schema allows no further items"}}},
		{"dependentRequired", `{"type":"object","dependentRequired":{"b":["c","d"],"a":["c"]}}`, `{"a":1,"b":2}`,
			[]P{{"", `missing dependent properties: "a" requires ["c"]; "b" requires ["c" "d"]`}}},
		{"propertyNames", `{"type":"object","propertyNames":{"maxLength":2}}`, `{"abc":1,"ok":2}`, []P{{"", `property name "abc" is not allowed: Value should be at most 2 characters`}}},
		{"duplicate member", `{"type":"object"}`, `{"a":1,"a":2}`, []P{{"", `not valid JSON: duplicate object member name "a" (send well-formed UTF-8 JSON with unique member names)`}}},
		{"huge exponent", `{"type":"object","properties":{"n":{"type":"number"}}}`, `{"n":1e999999}`,
			[]P{{"/n", "number 1e999999 is out of range: mcprt accepts numbers of at most 1000 characters with exponents within ±1000"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustCompile(t, tt.schema).validate(json.RawMessage(tt.instance))
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("validate(%s)\n got: %q\nwant: %q", tt.instance, got, tt.want)
			}
		})
	}
}

func TestSchemaValidateInvalidJSON(t *testing.T) {
	s := mustCompile(t, `{"type":"object"}`)
	for _, in := range []string{``, `{`, `{"a":1,}`, "{\"a\":\"\xff\"}", `{} {}`} {
		p := s.validate(json.RawMessage(in))
		if len(p) != 1 || p[0].Path != "" || !strings.HasPrefix(p[0].Message, "not valid JSON: ") {
			t.Errorf("validate(%q) = %q, want one root problem saying the JSON is invalid", in, p)
		}
	}
}

// TestSchemaDraft07Semantics shows that a draft-07 schema gets draft-07
// rules where they differ from 2020-12: $ref overrides its siblings.
func TestSchemaDraft07Semantics(t *testing.T) {
	body := `"type":"object","definitions":{"min":{"minimum":3}},"properties":{"a":{"$ref":"#/definitions/min","type":"string"}}}`
	d7 := mustCompile(t, `{"$schema":"http://json-schema.org/draft-07/schema#",`+body)
	d2020 := mustCompile(t, `{`+body)
	if p := d7.validate(json.RawMessage(`{"a":5}`)); p != nil {
		t.Errorf("draft-07 applied a $ref sibling: %q", p)
	}
	if p := d2020.validate(json.RawMessage(`{"a":5}`)); len(p) != 1 || p[0].Path != "/a" {
		t.Errorf("2020-12 ignored a $ref sibling: %q", p)
	}
}

func TestSchemaValidateDeterministic(t *testing.T) {
	s := mustCompile(t, `{"type":"object","required":["r1","r2"],"properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"items":{"type":"integer"}}},`+
		`"additionalProperties":false,"dependentRequired":{"a":["x"],"b":["y"]},"propertyNames":{"maxLength":1}}`)
	in := json.RawMessage(`{"a":1,"b":2,"c":[1,"x",2,"y"],"zz":1,"yy":2,"xx":3}`)
	first := s.validate(in)
	if len(first) < 8 {
		t.Fatalf("expected many problems, got %q", first)
	}
	for i := 1; i < len(first); i++ {
		if first[i-1].Path > first[i].Path || (first[i-1].Path == first[i].Path && first[i-1].Message >= first[i].Message) {
			t.Fatalf("problems not sorted and unique at %d: %q", i, first)
		}
	}
	for range 50 {
		if got := s.validate(in); !reflect.DeepEqual(got, first) {
			t.Fatalf("validate is not deterministic:\n%q\n%q", first, got)
		}
	}
}

// manyMembers returns a JSON object of n members "k000000":value.
func manyMembers(n int, value string) json.RawMessage {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%06d":%s`, i, value)
	}
	b.WriteString("}")
	return json.RawMessage(b.String())
}

func TestSchemaValidateCap(t *testing.T) {
	stopped := schemaProblem{"", "validation stopped after 20 problems; there may be more"}
	tests := []struct {
		name, schema string
		instance     json.RawMessage
		first, last  schemaProblem
	}{
		{"screen stops", `{"type":"object","additionalProperties":false}`, manyMembers(150, "1"),
			schemaProblem{"/k000000", `property "k000000" is not allowed: the schema lists the allowed properties and additionalProperties is false`}, stopped},
		{"numbers stop", `{"type":"object"}`, manyMembers(150, "1e9999"),
			schemaProblem{"/k000000", "number 1e9999 is out of range: mcprt accepts numbers of at most 1000 characters with exponents within ±1000"}, stopped},
		// propertyNames is left to kaptinlin: every problem is counted.
		{"kaptinlin counts", `{"type":"object","propertyNames":{"maxLength":2}}`, manyMembers(150, "1"),
			schemaProblem{"", `property name "k000000" is not allowed: Value should be at most 2 characters`}, schemaProblem{"", "130 more problems not listed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustCompile(t, tt.schema).validate(tt.instance)
			if len(p) != maxSchemaProblems+1 || p[0] != tt.first || p[len(p)-1] != tt.last {
				t.Fatalf("got %d problems, first %q, last %q", len(p), p[0], p[len(p)-1])
			}
		})
	}
}

// TestSchemaValidateHugeNumbersFast guards against exact arithmetic on
// numbers like 1e999999, which would take seconds per number.
func TestSchemaValidateHugeNumbersFast(t *testing.T) {
	s := mustCompile(t, `{"type":"object","additionalProperties":{"type":"number","maximum":5}}`)
	in := `{"a":1e999999,"b":-1E+0999999,"c":` + strings.Repeat("9", 2000) + `,"d":1e-1000,"e":1e1000}`
	start := time.Now()
	p := s.validate(json.RawMessage(in))
	if len(p) != 3 || p[0].Path != "/a" || p[1].Path != "/b" || p[2].Path != "/c" {
		t.Fatalf("problems = %q", p)
	}
	p = s.validate(json.RawMessage(`{"d":1e-1000,"e":1e1000}`))
	if len(p) != 1 || p[0].Path != "/e" || len(p[0].Message) > 310 ||
		!strings.HasPrefix(p[0].Message, "1000000") || !strings.Contains(p[0].Message, "0…0") || !strings.HasSuffix(p[0].Message, "0 should be at most 5") {
		t.Fatalf("numbers within bounds are validated exactly: %q", p)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("validation took %v", d)
	}
}

func TestSchemaValidateConcurrent(t *testing.T) {
	s := mustCompile(t, `{"type":"object","required":["id"],"properties":{"id":{"type":"string","pattern":"^[a-z]+$"},`+
		`"n":{"type":"number","multipleOf":0.5,"maximum":100},"tags":{"type":"array","uniqueItems":true,"items":{"enum":["a","b","c"]}},`+
		`"ref":{"$ref":"#/$defs/r"}},"patternProperties":{"^x-":{"type":"integer"}},"additionalProperties":false,`+
		`"$defs":{"r":{"type":"object","properties":{"s":{"pattern":"^q"}},"unevaluatedProperties":false}}}`)
	inputs := []struct {
		in    string
		valid bool
	}{
		{`{"id":"abc","n":1.5,"tags":["a","b"],"x-1":3,"ref":{"s":"qq"}}`, true},
		{`{"id":"ABC","n":1.25,"tags":["a","a"],"x-1":"no","ref":{"s":"z","t":1},"other":1}`, false},
		{`{"n":101}`, false},
	}
	// Without patternProperties every evaluation shares the schema; its
	// patterns were compiled at compile time. With them each evaluation
	// running at once has a copy of its own.
	free := mustCompile(t, `{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]+$"},"n":{"multipleOf":0.5}}}`)
	if want := max(2, min(runtime.GOMAXPROCS(0), maxSchemaCopies)); s.copies == nil || cap(s.copies) != want || free.copies != nil {
		t.Fatalf("copies: patternProperties %d (want %d), pattern only %v", cap(s.copies), want, free.copies != nil)
	}
	// Not serialised: while one evaluation holds a copy, another runs.
	held := <-s.copies
	if p := s.validate(json.RawMessage(inputs[1].in)); p == nil {
		t.Fatalf("validate(%s) with a copy held = valid", inputs[1].in)
	}
	s.copies <- held
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 200 {
				c := inputs[(g+i)%len(inputs)]
				if p := s.validate(json.RawMessage(c.in)); (p == nil) != c.valid {
					t.Errorf("validate(%s) = %q, want valid=%v", c.in, p, c.valid)
					return
				}
				if p := free.validate(json.RawMessage(`{"id":"ABC","n":1.25}`)); len(p) != 2 {
					t.Errorf("lock-free validate = %q", p)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestNumberWithinBounds(t *testing.T) {
	for n, want := range map[string]bool{
		"0": true, "-12.5": true, "1e1000": true, "1E-1000": true, "1e+0001000": true, "1e00000000": true,
		"1e1001": false, "1e-1001": false, "1e99999": false, strings.Repeat("1", 1000): true, strings.Repeat("1", 1001): false,
	} {
		if got := numberWithinBounds(n); got != want {
			t.Errorf("numberWithinBounds(%.20s) = %v, want %v", n, got, want)
		}
	}
}

func BenchmarkSchemaValidate(b *testing.B) {
	s := mustCompile(b, `{"type":"object","required":["name"],"properties":{"name":{"type":"string","maxLength":64},"count":{"type":"integer","minimum":0},`+
		`"tags":{"type":"array","items":{"type":"string"}}},"additionalProperties":false}`)
	in := json.RawMessage(`{"name":"widget","count":3,"tags":["a","b"]}`)
	b.ReportAllocs()
	for b.Loop() {
		if p := s.validate(in); p != nil {
			b.Fatal(p)
		}
	}
}
