package mcp

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/mcprt/mcprt/internal/jsontext"
)

func TestEachMemberMatchesEncodingJSON(t *testing.T) {
	objects := []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":"x,}","b":[1,{"c":"]"}],"d":null}`,
		`{ "k" : { "n" : [ ] } , "e" : true , "f" : -1.5e3 }`,
		`{"esc\"aped":"\\","u":"\u0041"}`, `{"a":{"b":{"c":{"d":[[[]]]}}}}`,
	}
	// Random objects built by encoding/json.
	r := rand.New(rand.NewPCG(1, 2))
	var gen func(depth int) any
	gen = func(depth int) any {
		switch n := r.IntN(7); {
		case n == 0 || depth > 3:
			return r.Float64()
		case n == 1:
			return string(rune(r.IntN(0x3000))) + `"\,}]`
		case n == 2:
			return nil
		case n == 3:
			return []any{gen(depth + 1), gen(depth + 1)}
		default:
			m := map[string]any{}
			for i := range r.IntN(4) {
				m[string(rune('a'+i))+`"}`] = gen(depth + 1)
			}
			return m
		}
	}
	for range 500 {
		m := map[string]any{"x": gen(0), "y": gen(0)}
		b, _ := json.MarshalIndent(m, "", " ")
		objects = append(objects, string(b))
	}
	for _, obj := range objects {
		want := map[string]json.RawMessage{}
		if err := json.Unmarshal([]byte(obj), &want); err != nil {
			t.Fatalf("%s: %v", obj, err)
		}
		got := map[string]json.RawMessage{}
		if !jsontext.EachMember([]byte(obj), func(k, v []byte) bool {
			key, ok := jsontext.String(k)
			if !ok {
				t.Fatalf("%s: key %s is not a string", obj, k)
			}
			got[key] = append(json.RawMessage(nil), v...)
			return true
		}) {
			t.Fatalf("%s: not seen as an object", obj)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: got %d members, want %d", obj, len(got), len(want))
		}
		for k, w := range want {
			var a, b any
			_ = json.Unmarshal(w, &a)
			if err := json.Unmarshal(got[k], &b); err != nil || !reflect.DeepEqual(a, b) {
				t.Fatalf("%s: member %q = %s, want %s", obj, k, got[k], w)
			}
		}
	}
	for _, notObj := range []string{`[]`, `"x"`, `1`, `null`, ``} {
		if jsontext.EachMember([]byte(notObj), func(k, v []byte) bool { return true }) {
			t.Errorf("%q seen as an object", notObj)
		}
	}
}

func TestParseCallParams(t *testing.T) {
	for _, tc := range []struct {
		in      string
		name    string
		ok      bool
		hasArgs bool
	}{
		{`{"name":"a","arguments":{"x":1}}`, `"a"`, true, true},
		{`{"n\u0061me":"a"}`, `"a"`, true, false},
		{`{"Name":"a"}`, ``, true, false}, // exact names: "Name" is not "name"
		{`{"name":"a","name":"b"}`, `"a"`, false, false},
		{`[1]`, ``, false, false},
		{``, ``, true, false},
	} {
		p, err := parseCallParams(json.RawMessage(tc.in))
		if (err == nil) != tc.ok || string(p.Name) != tc.name || (p.Arguments != nil) != tc.hasArgs {
			t.Errorf("parseCallParams(%s) = %+v, %v", tc.in, p, err)
		}
	}
}

func TestClientCorrelationID(t *testing.T) {
	long := make([]byte, 129)
	for i := range long {
		long[i] = 'x'
	}
	for in, want := range map[string]string{
		`{"_meta":{"correlationId":"abc"}}`:                      "abc",
		`{"a":1,"_meta":{"x":[1],"correlationId":"a\"b"}}`:       `a"b`,
		`{"_meta":{"correlationId":""}}`:                         "",
		`{"_meta":{"correlationId":1}}`:                          "",
		`{"_meta":"x"}`:                                          "",
		`{"_meta":{"correlationId":"` + string(long) + `"}}`:     "",
		`{"_meta":{"correlationId":"` + string(long[1:]) + `"}}`: string(long[1:]),
		`[{"_meta":{"correlationId":"abc"}}]`:                    "",
		`{"\u005fmeta":{"correlation\u0049d":"esc"}}`:            "esc",
	} {
		if got := clientCorrelationID(json.RawMessage(in)); got != want {
			t.Errorf("clientCorrelationID(%.60s) = %q, want %q", in, got, want)
		}
	}
}

// The escaper that quotes a result as text round-trips every string.
func TestAppendBytesNoHTMLRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	inputs := []string{"", `"`, `\`, "a\nb\tc\r\x00\x1f\x7f", `{"k":"v\"q"}`, "héllo 🎉 <&>", "\u2028"}
	for range 2000 {
		b := make([]rune, r.IntN(20))
		for i := range b {
			b[i] = rune(r.IntN(0x250))
		}
		inputs = append(inputs, string(b))
	}
	for _, in := range inputs {
		out := jsontext.AppendBytesNoHTML(nil, []byte(in))
		var got string
		if err := json.Unmarshal(out, &got); err != nil || got != in {
			t.Fatalf("AppendBytesNoHTML(%q) = %s: decodes to %q, %v", in, out, got, err)
		}
	}
}
