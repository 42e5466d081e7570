package mcp

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

type deriveInner struct {
	X int `json:"x"`
}

type deriveBase struct {
	ID   string `json:"id" description:"the id"`
	Note string `json:"note,omitempty"`
}

type derivePtrBase struct {
	Extra int `json:"extra"`
}

type deriveAll struct {
	deriveBase
	*derivePtrBase
	S        string          `json:"s"`
	B        bool            `json:"b"`
	I        int             `json:"i"`
	I8       int8            `json:"i8"`
	U16      uint16          `json:"u16"`
	U        uint64          `json:"u"`
	F        float64         `json:"f"`
	Bytes    []byte          `json:"bytes"`
	List     []string        `json:"list"`
	Arr      [2]int          `json:"arr"`
	Map      map[string]*int `json:"map"`
	Inner    deriveInner     `json:"inner"`
	Ptr      *deriveInner    `json:"ptr"`
	When     time.Time       `json:"when"`
	Raw      json.RawMessage `json:"raw"`
	Any      any             `json:"any"`
	Num      json.Number     `json:"num"`
	Quoted   int64           `json:"quoted,string"`
	Opt      string          `json:"opt,omitzero"`
	Untagged string
	Skip     string `json:"-"`
	//lint:ignore SA5008 a field named "-" is what this case tests
	Dash string `json:"-,"`
	//lint:ignore U1000 unexported fields are not part of the schema: that is tested
	hidden string
	Nested map[string][]bool `json:"nested"`
}

// deriveConflict mirrors encoding/json's rules for colliding promoted
// names: equal depth and tagging annihilate (Name), a tagged field beats an
// untagged one (X), a shallower field beats deeper ones (Shadow).
type deriveConflictA struct {
	Name   string
	X      int `json:"X"`
	Shadow int
}
type deriveConflictB struct {
	Name string
	X    string
}
type deriveConflict struct {
	deriveConflictA
	deriveConflictB
	Shadow string
}

type deriveNode struct {
	Children []deriveNode `json:"children"`
}

type deriveSelfPtr struct {
	Next *deriveSelfPtr `json:"next"`
}

type deriveText struct{ v string }

func (d *deriveText) UnmarshalText(b []byte) error { d.v = string(b); return nil }
func (d deriveText) MarshalText() ([]byte, error)  { return []byte(d.v), nil }

func TestDeriveSchema(t *testing.T) {
	one := 1
	tests := []struct {
		name   string
		typ    reflect.Type
		want   string // the expected schema (compared semantically)
		sample any    // a value whose encoding/json encoding must validate
	}{
		{"empty struct", reflect.TypeFor[struct{}](), `{"type":"object","properties":{},"additionalProperties":false}`, struct{}{}},
		{"pointer to struct", reflect.TypeFor[*deriveInner](),
			`{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false}`, &deriveInner{X: 3}},
		{"all kinds", reflect.TypeFor[deriveAll](), `{"type":"object","properties":{
			"id":{"type":"string","description":"the id"},"note":{"type":"string"},"extra":{"type":"integer"},
			"s":{"type":"string"},"b":{"type":"boolean"},"i":{"type":"integer"},
			"i8":{"type":"integer","minimum":-128,"maximum":127},"u16":{"type":"integer","minimum":0,"maximum":65535},
			"u":{"type":"integer","minimum":0},"f":{"type":"number"},"bytes":{"type":"string","contentEncoding":"base64"},
			"list":{"type":"array","items":{"type":"string"}},"arr":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2},
			"map":{"type":"object","additionalProperties":{"type":"integer"}},
			"inner":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false},
			"ptr":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false},
			"when":{"type":"string","format":"date-time"},"raw":{},"any":{},"num":{"type":"number"},"quoted":{"type":"string"},
			"opt":{"type":"string"},"Untagged":{"type":"string"},"-":{"type":"string"},
			"nested":{"type":"object","additionalProperties":{"type":"array","items":{"type":"boolean"}}}},
			"required":["id","s","b","i","i8","u16","u","f","bytes","list","arr","map","inner","when","raw","any","num","quoted","Untagged","-","nested"],
			"additionalProperties":false}`,
			deriveAll{deriveBase: deriveBase{ID: "a", Note: "n"}, derivePtrBase: &derivePtrBase{Extra: 2}, S: "s", B: true, I: -1, I8: -128, U16: 65535,
				U: 1 << 63, F: 1.5, Bytes: []byte{0, 255}, List: []string{"x"}, Map: map[string]*int{"k": &one}, Ptr: &deriveInner{},
				When: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Raw: json.RawMessage(`{"z":[1]}`), Any: []any{1, "x"}, Num: "12.5",
				Quoted: 7, Opt: "o", Untagged: "u", Dash: "d", Nested: map[string][]bool{"k": {true}}}},
		{"name conflicts", reflect.TypeFor[deriveConflict](),
			`{"type":"object","properties":{"X":{"type":"integer"},"Shadow":{"type":"string"}},"required":["X","Shadow"],"additionalProperties":false}`,
			deriveConflict{deriveConflictA{"a", 1, 2}, deriveConflictB{"b", "x"}, "s"}},
		{"text unmarshaler", reflect.TypeFor[struct {
			T deriveText `json:"t"`
		}](), `{"type":"object","properties":{"t":{"type":"string"}},"required":["t"],"additionalProperties":false}`,
			struct {
				T deriveText `json:"t"`
			}{deriveText{"v"}}},
	}
	c := newSchemaCompiler()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := deriveSchema(tt.typ)
			if err != nil {
				t.Fatalf("deriveSchema: %v", err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("derived schema is not JSON: %v\n%s", err, got)
			}
			if err := json.Unmarshal([]byte(tt.want), &w); err != nil {
				t.Fatalf("bad test: %v", err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("deriveSchema(%s)\n got: %s\nwant: %s", tt.typ, got, compactString(tt.want))
			}
			cs, err := c.compile("inputSchema", got)
			if err != nil {
				t.Fatalf("derived schema does not compile: %v", err)
			}
			sample, err := json.Marshal(tt.sample)
			if err != nil {
				t.Fatal(err)
			}
			if p := cs.validate(sample); p != nil {
				t.Fatalf("encoding/json's encoding %s of a sample does not validate: %q", sample, p)
			}
			// The properties are exactly the members encoding/json writes.
			var members map[string]any
			if json.Unmarshal(sample, &members) == nil {
				props := g.(map[string]any)["properties"].(map[string]any)
				if a, b := slices.Sorted(maps.Keys(props)), slices.Sorted(maps.Keys(members)); !slices.Equal(a, b) {
					t.Fatalf("properties %q, encoding/json members %q", a, b)
				}
			}
		})
	}
}

func compactString(s string) string {
	var b strings.Builder
	for _, f := range strings.Fields(s) {
		b.WriteString(f)
	}
	return b.String()
}

// TestDeriveSchemaOrder pins the byte output: properties in field order,
// keywords in a fixed order.
func TestDeriveSchemaOrder(t *testing.T) {
	type args struct {
		Zeta  string `json:"zeta" description:"last letter"`
		Alpha []int  `json:"alpha,omitempty"`
	}
	got, err := deriveSchema(reflect.TypeFor[args]())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"zeta":{"type":"string","description":"last letter"},"alpha":{"type":"array","items":{"type":"integer"}}},"required":["zeta"],"additionalProperties":false}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestDeriveSchemaRequired(t *testing.T) {
	type args struct {
		Plain     string  `json:"plain"`
		OmitEmpty string  `json:"omit_empty,omitempty"`
		OmitZero  int     `json:"omit_zero,omitzero"`
		Pointer   *string `json:"pointer"`
		Slice     []int   `json:"slice"`
		deriveBase
		*derivePtrBase
	}
	c := mustCompileDerived(t, reflect.TypeFor[args]())
	if p := c.validate(json.RawMessage(`{}`)); len(p) != 1 ||
		p[0].Message != "Required properties 'plain', 'slice', 'id' are missing" {
		t.Fatalf("validate({}) = %q", p)
	}
	if p := c.validate(json.RawMessage(`{"plain":"","slice":[],"id":""}`)); p != nil {
		t.Fatalf("optional fields are required: %q", p)
	}
	if p := c.validate(json.RawMessage(`{"plain":"","slice":[],"id":"","unknown":1}`)); len(p) != 1 || p[0].Path != "/unknown" {
		t.Fatalf("unknown member accepted: %q", p)
	}
}

func mustCompileDerived(t *testing.T, typ reflect.Type) *compiledSchema {
	t.Helper()
	raw, err := deriveSchema(typ)
	if err != nil {
		t.Fatal(err)
	}
	return mustCompile(t, string(raw))
}

func TestDeriveSchemaErrors(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"nil", nil, "no type given"},
		{"not a struct", reflect.TypeFor[[]int](), "[]int is a slice: a tool's input type must be a struct, a pointer to a struct, a map with string keys or json.RawMessage"},
		{"pointer to pointer", reflect.TypeFor[**deriveInner](), "is a ptr"},
		{"chan", reflect.TypeFor[struct{ C chan int }](), "field struct { C chan int }.C has type chan int, which JSON cannot represent"},
		{"func", reflect.TypeFor[struct {
			In struct{ F func() }
		}](), ".In.F has type func(), which JSON cannot represent"},
		{"complex", reflect.TypeFor[struct {
			Z []complex128 `json:"z"`
		}](), ".Z[] has type complex128, which JSON cannot represent"},
		{"int keys", reflect.TypeFor[struct{ M map[int]string }](), "has type map[int]string: JSON object keys are strings"},
		{"recursive struct", reflect.TypeFor[deriveNode](), "field mcp.deriveNode.Children[]: type mcp.deriveNode contains itself"},
		{"recursive pointer", reflect.TypeFor[deriveSelfPtr](), "type mcp.deriveSelfPtr contains itself"},
		{"decodes itself", reflect.TypeFor[time.Time](), "time.Time decodes itself from JSON"},
		{"map with int keys", reflect.TypeFor[map[int]string](), "has type map[int]string: JSON object keys are strings"},
		{"map of channels", reflect.TypeFor[map[string]chan int](), "has type chan int, which JSON cannot represent"},
		{"empty jsonschema tag", reflect.TypeFor[struct {
			A string `jsonschema:""`
		}](), ".A: empty jsonschema tag"},
		{"jsonschema key=value", reflect.TypeFor[struct {
			A int `json:"a" jsonschema:"minimum=1"`
		}](), `jsonschema tag "minimum=1" looks like key=value: the tag holds only the property's description`},
		{"jsonschema WORD= with text", reflect.TypeFor[struct {
			A int `json:"a" jsonschema:"description=the count"`
		}](), `looks like key=value`},
		{"invopop-style tag", reflect.TypeFor[struct {
			A int `json:"a" jsonschema_description:"count"`
		}](), `tag "jsonschema_description" is not understood`},
		{"both tags differ", reflect.TypeFor[struct {
			A int `json:"a" jsonschema:"one" description:"two"`
		}](), `has both a jsonschema and a description tag`},
		{"json option typo", reflect.TypeFor[struct {
			//lint:ignore SA5008 an unknown option is what this case tests
			A int `json:"a,omitemtpy"`
		}](), `json tag option "omitemtpy" is not understood: encoding/json knows omitempty, omitzero and string`},
		{"nested field tag", reflect.TypeFor[struct {
			In struct {
				B []int `json:"b" jsonschema:"minItems=1"`
			} `json:"in"`
		}](), `field struct { In struct { B []int`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := deriveSchema(tt.typ)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestDeriveSchemaSiblingsNotRecursive(t *testing.T) {
	type args struct {
		A deriveInner   `json:"a"`
		B *deriveInner  `json:"b"`
		C []deriveInner `json:"c"`
	}
	c := mustCompileDerived(t, reflect.TypeFor[args]())
	if p := c.validate(json.RawMessage(`{"a":{"x":1},"c":[{"x":2},{"x":"no"}]}`)); len(p) != 1 || p[0].Path != "/c/1/x" {
		t.Fatalf("validate = %q", p)
	}
}
