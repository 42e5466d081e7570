package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// Role has a method set of its own but no unmarshaler: set directly.
type argsRole string

// argsStamp decodes itself: always through json.Unmarshal.
type argsStamp struct{ s string }

func (a *argsStamp) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '1' {
		return json.Unmarshal([]byte(`"bad"`), new(int)) // an error json.Unmarshal words itself
	}
	a.s = string(b)
	return nil
}

// argsAll has a field of every kind argsdecode.go sets.
type argsAll struct {
	S      string            `json:"s"`
	Role   argsRole          `json:"role,omitempty"`
	B      bool              `json:"b"`
	I8     int8              `json:"i8"`
	I      int               `json:"i"`
	U16    uint16            `json:"u16"`
	F32    float32           `json:"f32"`
	F      float64           `json:"f"`
	P      *string           `json:"p"`
	L      []string          `json:"l"`
	M      map[string]int    `json:"m"`
	N      struct{ X int }   `json:"n"`
	A      any               `json:"a"`
	St     argsStamp         `json:"st"`
	Raw    json.RawMessage   `json:"raw"`
	Skip   string            `json:"-"`
	Plain  int               // named by its Go name
	Nested map[string][]bool `json:"nested"`
}

// argsInstances are arguments for argsAll: ones the validation pass
// decodes and ones where it must leave decoding to json.Unmarshal.
var argsInstances = []struct {
	args    string
	decoded bool // the validation pass decodes them itself
}{
	{`{}`, true},
	{`{"s":"x","role":"admin","b":true,"i8":-128,"i":42,"u16":65535,"f32":1.5,"f":-2e-3,"p":"q","l":["a"],` +
		`"m":{"k":1},"n":{"X":3},"a":{"z":[1,"2"]},"st":"t","raw":{"r" : 1},"Plain":7,"nested":{"a":[true]}}`, true},
	{`{"s":null,"i":null,"p":null,"l":null,"a":null}`, true},
	{`{"unknown":1,"other":{"deep":[1,2]}}`, true},
	{` { "s" : "spaced" , "i" : 1 } `, true},
	{`{"n":{"x":4}}`, true},               // nested: json.Unmarshal's own rules, case-insensitive there
	{`{"S":"x"}`, false},                  // a name matching only case-insensitively
	{`{"PLAIN":1}`, false},                // likewise
	{`{"Skip":"x"}`, true},                // json:"-": json.Unmarshal ignores it
	{`{"s":"a\"b"}`, true},                // escapes: json.Unmarshal on the member
	{`{"s":1}`, false},                    // kinds that do not fit: json.Unmarshal's error
	{`{"i":"1"}`, false},                  //
	{`{"i":1.5}`, false},                  //
	{`{"i8":128}`, false},                 // out of range
	{`{"u16":-1}`, false},                 //
	{`{"f32":1e39}`, false},               //
	{`{"f":1e400}`, false},                //
	{`{"b":"true"}`, false},               //
	{`{"st":1}`, false},                   // its own UnmarshalJSON fails
	{`{"l":"x"}`, false},                  //
	{`{"s":"é😀","i":-0,"f":0.1e1}`, true}, //
	// Members after containers, in a text longer than the decoder's first
	// read: a name must be matched before its value is read.
	{`{"i":1,"n":{"X":2,"pad":"` + strings.Repeat("p", 5000) + `"},` + "\n\t\t" + `"s":"after","l":["x","y"],` +
		`"nested":{"k":[true,false]},"u16":7,"a":{"z":"` + strings.Repeat("q", 3000) + `"},"b":true}`, true},
}

// checkArgsDecode validates args against schema with an argsAll target and
// compares what the pass decoded with json.Unmarshal, reporting whether it
// decoded.
func checkArgsDecode(t testing.TB, cs *compiledSchema, args []byte) bool {
	t.Helper()
	target := newArgsDecoder(reflect.TypeFor[argsAll]()).newTarget()
	valid := cs.validateInto(args, target) == nil
	if valid != (cs.validate(args) == nil) {
		t.Fatalf("%s: validating with a target says valid=%v, without %v", args, valid, !valid)
	}
	got := target.value()
	if !valid {
		if got != nil {
			t.Fatalf("%s: invalid arguments, yet a decoded value", args)
		}
		return false
	}
	if got == nil {
		return false
	}
	var want argsAll
	if err := json.Unmarshal(args, &want); err != nil {
		t.Fatalf("%s: decoded while validated, but json.Unmarshal fails: %v", args, err)
	}
	if !reflect.DeepEqual(*got.(*argsAll), want) {
		t.Fatalf("%s: decoded while validated %+v, json.Unmarshal %+v", args, *got.(*argsAll), want)
	}
	return true
}

// The validation pass decodes typed arguments into exactly what
// json.Unmarshal makes of them, or leaves them to json.Unmarshal.
func TestArgsDecodeMatchesUnmarshal(t *testing.T) {
	cs := mustCompile(t, `{"type":"object"}`)
	if cs.fast == nil {
		t.Fatal(`{"type":"object"} is not compiled fast`)
	}
	for _, tc := range argsInstances {
		if got := checkArgsDecode(t, cs, []byte(tc.args)); got != tc.decoded {
			t.Errorf("%s: decoded while validated = %v, want %v", tc.args, got, tc.decoded)
		}
	}
	// Arguments that fail validation are never handed on.
	strict := mustCompile(t, `{"type":"object","properties":{"i":{"type":"integer","maximum":3}}}`)
	if checkArgsDecode(t, strict, []byte(`{"i":4}`)) {
		t.Error(`{"i":4} is invalid, yet decoded`)
	}
	// A schema the fast validator does not model: decoded in the pass
	// that builds the value kaptinlin validates (argsdecode_tree.go).
	slow := mustCompile(t, `{"type":"object","properties":{"s":{"type":"string","format":"email"}}}`)
	if slow.fast != nil || !checkArgsDecode(t, slow, []byte(`{"s":"a@b"}`)) {
		t.Error("a schema validated by kaptinlin alone: its arguments were not decoded in passing")
	}
	if checkArgsDecode(t, slow, []byte(`{"s":1}`)) {
		t.Error(`{"s":1} is invalid, yet decoded`)
	}
}

func FuzzArgsDecode(f *testing.F) {
	for _, tc := range argsInstances {
		f.Add([]byte(tc.args))
	}
	cs, err := newSchemaCompiler().compile("inputSchema", json.RawMessage(`{"type":"object"}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, args []byte) { checkArgsDecode(t, cs, args) })
}

// Types encoding/json maps by other than plain rules get no decoder.
func TestNewArgsDecoderRefuses(t *testing.T) {
	type inner struct{ A int }
	for _, tc := range []struct {
		typ  reflect.Type
		want bool
	}{
		{reflect.TypeFor[argsAll](), true},
		{reflect.TypeFor[struct{}](), true},
		{reflect.TypeFor[map[string]any](), false},
		{reflect.TypeFor[struct{ inner }](), false},
		{reflect.TypeFor[argsStamp](), false}, // its own UnmarshalJSON
		{reflect.TypeFor[time.Time](), false}, // its own UnmarshalJSON and UnmarshalText
		{reflect.TypeFor[struct {
			N int `json:"n,string"`
		}](), false},
		{reflect.TypeFor[struct {
			A int `json:"a.b"`
		}](), false},
		{reflect.TypeFor[struct {
			A int `json:"name"`
			B int `json:"Name"`
		}](), false},
	} {
		if got := newArgsDecoder(tc.typ) != nil; got != tc.want {
			t.Errorf("%v: a decoder = %v, want %v", tc.typ, got, tc.want)
		}
	}
}

// Through a server: the handler gets what json.Unmarshal makes of the
// arguments, decoded in the validation pass or not, and a value that does
// not fit the input type is the same error as ever.
func TestTypedToolDecodesOnce(t *testing.T) {
	var mu sync.Mutex
	var seen []argsAll
	setup := func(s *Server) {
		if err := AddTypedTool(s, Tool{Name: "all", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(_ context.Context, req *CallToolRequest, in argsAll) (map[string]any, error) {
				mu.Lock()
				seen = append(seen, in)
				mu.Unlock()
				return map[string]any{"ok": true}, nil
			}); err != nil {
			t.Fatal(err)
		}
	}
	c := newTestClient(t, transportMemory, testConfig(), Options{}, setup, LatestVersion)
	for i, tc := range argsInstances {
		var want argsAll
		werr := json.Unmarshal([]byte(tc.args), &want)
		res := c.call(itoa(i+1), "all", tc.args)
		mu.Lock()
		got := seen
		seen = nil
		mu.Unlock()
		if werr != nil {
			e := toolError(t, res)
			if e == nil || e["code"] != "INVALID_ARGUMENT" ||
				e["message"] != "arguments do not fit the tool's input type: "+werr.Error() {
				t.Errorf("%s: want INVALID_ARGUMENT %q, got %v", tc.args, werr, res)
			}
			continue
		}
		if res["isError"] != false || len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("%s: the handler saw %+v, want %+v (%v)", tc.args, got, want, res)
		}
	}
}

// lookup20In is the lookup20 fixture's whole input as a Go type.
type lookup20In struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Email   string   `json:"email"`
	Age     int      `json:"age"`
	Role    string   `json:"role"`
	Active  bool     `json:"active"`
	Score   float64  `json:"score"`
	Tags    []string `json:"tags"`
	Address *struct {
		Street, City, Zip string
	} `json:"address"`
	Phone    string `json:"phone"`
	Team     string `json:"team"`
	Manager  string `json:"manager"`
	Level    int8   `json:"level"`
	Locale   string `json:"locale"`
	Timezone string `json:"timezone"`
	Created  string `json:"created"`
	Notes    string `json:"notes"`
	Quota    uint32 `json:"quota"`
	Flags    []bool `json:"flags"`
	Project  string `json:"project"`
}

// checkLookup20Decode is FuzzFastSchemaLookup20's check of the pass that
// decodes while it validates: the same verdict as the pass alone, and,
// when it decoded, what json.Unmarshal makes of the instance.
func checkLookup20Decode(t *testing.T, cs *compiledSchema, instance []byte, valid bool) {
	target := newArgsDecoder(reflect.TypeFor[lookup20In]()).newTarget()
	if got := cs.fast.validRawInto(instance, target); got != valid {
		t.Fatalf("instance %s: decoding while validating says valid=%v, validating alone %v", instance, got, valid)
	}
	if !valid || target.value() == nil {
		return
	}
	var want lookup20In
	if err := json.Unmarshal(instance, &want); err != nil {
		t.Fatalf("instance %s: decoded while validated, but json.Unmarshal fails: %v", instance, err)
	}
	if got := *target.value().(*lookup20In); !reflect.DeepEqual(got, want) {
		t.Fatalf("instance %s: decoded %+v, json.Unmarshal %+v", instance, got, want)
	}
}

// BenchmarkLookup20Args compares the two ways a typed tool's arguments
// are validated and decoded: validating the text, then json.Unmarshal
// (the handler's fallback), and decoding in the validation pass.
func BenchmarkLookup20Args(b *testing.B) {
	cs, err := newSchemaCompiler().compile("inputSchema", json.RawMessage(lookup20Schema))
	if err != nil {
		b.Fatal(err)
	}
	args := []byte(`{"id":"u-1","name":"Ada Lovelace","email":"ada@example.org","age":36,"role":"dev","active":true,` +
		`"score":99.5,"tags":["math","engines"],"address":{"street":"1 Main St","city":"London","zip":"10115"},` +
		`"phone":"+44 20 1234","team":"core","manager":"babbage","level":7,"locale":"en","timezone":"Europe/London",` +
		`"created":"2026-01-01T00:00:00Z","notes":"first programmer","quota":10,"flags":[true,false],"project":"engine"}`)
	dec := newArgsDecoder(reflect.TypeFor[lookup20In]())
	b.Run("validate+unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var in lookup20In
			if cs.validate(args) != nil || json.Unmarshal(args, &in) != nil {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("validate+decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			t := dec.newTarget()
			if cs.validateInto(args, t) != nil || t.value() == nil {
				b.Fatal("invalid or not decoded")
			}
		}
	})
}
