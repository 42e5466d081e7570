package mcp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Types as users of the official MCP Go SDK write them.
type sdkIn struct {
	Name  string   `json:"name" jsonschema:"the name of the person to greet"`
	Times int      `json:"times,omitempty" jsonschema:"how many times; a = b is fine after a space"`
	Tags  []string `json:"tags,omitempty" description:"labels"`
}

type sdkOut struct {
	Greeting string            `json:"greeting" jsonschema:"the greeting"`
	Count    int               `json:"count,omitempty"`
	When     time.Time         `json:"when"`
	Parts    []string          `json:"parts"`
	Extra    map[string]int    `json:"extra"`
	Ref      *deriveInner      `json:"ref"`
	Text     deriveText        `json:"text"`
	Raw      json.RawMessage   `json:"raw,omitzero"`
	Nested   deriveInner       `json:"nested"`
	Opt      *string           `json:"opt,omitempty"`
	ByName   map[string]sdkOut `json:"-"`
	Quoted   int               `json:"quoted,string"`
	Embedded string
}

func TestDeriveSchemaTypedInputs(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"jsonschema tag is the description", reflect.TypeFor[sdkIn](),
			`{"type":"object","properties":{"name":{"type":"string","description":"the name of the person to greet"},` +
				`"times":{"type":"integer","description":"how many times; a = b is fine after a space"},` +
				`"tags":{"type":"array","items":{"type":"string"},"description":"labels"}},"required":["name"],"additionalProperties":false}`},
		{"map[string]any", reflect.TypeFor[map[string]any](), `{"type":"object"}`},
		{"map[string]int", reflect.TypeFor[map[string]int](), `{"type":"object","additionalProperties":{"type":"integer"}}`},
		{"map[string]struct", reflect.TypeFor[map[string]deriveInner](),
			`{"type":"object","additionalProperties":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false}}`},
		{"named map", reflect.TypeFor[map[string][]bool](), `{"type":"object","additionalProperties":{"type":"array","items":{"type":"boolean"}}}`},
		{"json.RawMessage", reflect.TypeFor[json.RawMessage](), `{"type":"object"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := deriveSchema(tt.typ)
			if err != nil || string(got) != tt.want {
				t.Fatalf("deriveSchema(%s) = %s, %v\nwant %s", tt.typ, got, err, tt.want)
			}
			mustCompile(t, string(got))
		})
	}
}

// TestDeriveSchemaMapInputValidates: what a map input type decodes is what
// its schema accepts.
func TestDeriveSchemaMapInputValidates(t *testing.T) {
	c := mustCompileDerived(t, reflect.TypeFor[map[string]int]())
	for in, valid := range map[string]bool{`{}`: true, `{"a":1,"b":-2}`: true, `{"a":"x"}`: false, `{"a":1.5}`: false} {
		var m map[string]int
		decodes := json.Unmarshal([]byte(in), &m) == nil
		if got := c.validate(json.RawMessage(in)) == nil; got != valid || decodes != valid {
			t.Errorf("%s: valid %v, decodes %v, want %v", in, got, decodes, valid)
		}
	}
}

func TestDeriveOutputSchema(t *testing.T) {
	tests := []struct {
		name   string
		typ    reflect.Type
		want   string // "" when no schema is derived
		errSub string
	}{
		{"struct", reflect.TypeFor[sdkOut](),
			`{"type":"object","properties":{"greeting":{"type":"string","description":"the greeting"},"count":{"type":"integer"},` +
				`"when":{"type":"string","format":"date-time"},"parts":{"type":["null","array"],"items":{"type":"string"}},` +
				`"extra":{"type":["null","object"],"additionalProperties":{"type":"integer"}},` +
				`"ref":{"type":["null","object"],"properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false},` +
				`"text":{"type":"string"},"raw":{},"nested":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false},` +
				`"opt":{"type":["null","string"]},"quoted":{"type":"string"},"Embedded":{"type":"string"}},` +
				`"required":["greeting","when","parts","extra","ref","text","nested","quoted","Embedded"],"additionalProperties":false}`, ""},
		{"pointer to struct", reflect.TypeFor[*deriveInner](),
			`{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false}`, ""},
		{"string", reflect.TypeFor[string](), "", ""},
		{"map", reflect.TypeFor[map[string]any](), "", ""},
		{"any", reflect.TypeFor[any](), "", ""},
		{"nil", nil, "", ""},
		{"encodes itself", reflect.TypeFor[time.Time](), "", ""},
		{"bad field", reflect.TypeFor[struct{ C chan int }](), "", "which JSON cannot represent"},
		{"bad tag", reflect.TypeFor[struct {
			A int `jsonschema:"maximum=3"`
		}](), "", "looks like key=value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := deriveOutputSchema(tt.typ)
			switch {
			case tt.errSub != "":
				if err == nil || ok || !strings.Contains(err.Error(), tt.errSub) {
					t.Fatalf("got %s, %v, %v; want an error containing %q", got, ok, err, tt.errSub)
				}
			case tt.want == "":
				if got != nil || ok || err != nil {
					t.Fatalf("got %s, %v, %v; want no schema", got, ok, err)
				}
			default:
				if !ok || err != nil || string(got) != tt.want {
					t.Fatalf("got %s, %v, %v\nwant %s", got, ok, err, tt.want)
				}
				mustCompile(t, string(got))
			}
		})
	}
}

// TestDeriveOutputSchemaAcceptsEncodedValues: what encoding/json writes for
// the zero value and for a full value satisfies the derived schema.
func TestDeriveOutputSchemaAcceptsEncodedValues(t *testing.T) {
	raw, ok, err := deriveOutputSchema(reflect.TypeFor[sdkOut]())
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	c := mustCompile(t, string(raw))
	s := "s"
	for _, v := range []sdkOut{{}, {Greeting: "hi", Count: 2, Parts: []string{"a"}, Extra: map[string]int{"k": 1},
		Ref: &deriveInner{X: 1}, Text: deriveText{"t"}, Raw: json.RawMessage(`[1]`), Opt: &s, Quoted: 7}} {
		js, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if p := c.validate(js); p != nil {
			t.Errorf("%s: %q", js, p)
		}
	}
}
