package mcp

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// lookup20SlowSchema is lookup20's schema with one keyword the fast
// validator does not model ("format"), so that kaptinlin validates it.
var lookup20SlowSchema = strings.Replace(lookup20Schema, `"created":{"type":"string","maxLength":40}`,
	`"created":{"type":"string","format":"date-time"}`, 1)

// lookup20Args are valid arguments of both lookup20 schemas, every
// property set.
const lookup20Args = `{"id":"u-1","name":"Ada Lovelace","email":"ada@example.org","age":36,"role":"dev","active":true,` +
	`"score":99.5,"tags":["math","engines"],"address":{"street":"1 Main St","city":"London","zip":"10115"},` +
	`"phone":"+44 20 1234","team":"core","manager":"babbage","level":7,"locale":"en","timezone":"Europe/London",` +
	`"created":"2026-01-01T00:00:00Z","notes":"first programmer","quota":10,"flags":[true,false],"project":"engine"}`

// typedLookup20 registers a typed tool taking lookup20In under schema and
// returns it, with a handler that records what it got in *got.
func typedLookup20(tb testing.TB, schema string, got *lookup20In) *registeredTool {
	tb.Helper()
	srv, err := NewServer(Options{})
	if err != nil {
		tb.Fatal(err)
	}
	err = AddTypedTool(srv, Tool{Name: "lookup", InputSchema: json.RawMessage(schema)},
		func(_ context.Context, _ *CallToolRequest, in lookup20In) (struct{}, error) {
			*got = in
			return struct{}{}, nil
		})
	if err != nil {
		tb.Fatal(err)
	}
	return srv.tool("lookup")
}

// BenchmarkTypedArgsKaptinlin is a typed tool's arguments validated (by
// kaptinlin: the schema has a keyword the fast validator does not model)
// and handed to its handler as its input type.
func BenchmarkTypedArgsKaptinlin(b *testing.B) {
	var got lookup20In
	rt := typedLookup20(b, lookup20SlowSchema, &got)
	if rt.input.fast != nil {
		b.Fatal("the schema is one the fast validator models")
	}
	args := json.RawMessage(lookup20Args)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		req := CallToolRequest{Arguments: args}
		if e := inputError(rt, &req, len(args), "the tool's inputSchema"); e != nil {
			b.Fatal(e)
		}
		if _, err := rt.def.Handler(ctx, &req); err != nil {
			b.Fatal(err)
		}
	}
	if got.Project != "engine" {
		b.Fatalf("the handler got %+v", got)
	}
}

// lookup20Instances are instances of the lookup20 schema: generated ones,
// mostly near-valid, and hand-written ones that test the decoder's edges
// (escapes, whitespace, duplicates, invalid UTF-8, trailing data, numbers
// a field cannot hold, members named like fields but for case).
func lookup20Instances(t *testing.T, n int) []string {
	t.Helper()
	var schema any
	if err := json.Unmarshal([]byte(lookup20Schema), &schema); err != nil {
		t.Fatal(err)
	}
	out := []string{lookup20Args, `{}`, `[]`, `null`, `"x"`, `1`, ``, ` `, `{`, `{"id":"a"} x`, `{"id":"a"}{}`,
		`{"id":"u","name":"A","email":"a@b","age":1,"role":"dev"}`,
		` { "id" : "u\u0041\n" , "name":"\ud83d\ude00","email":"a@b","age":1 ,"role":"dev" } `,
		`{"id":"u","id":"v","name":"A","email":"a@b","age":1,"role":"dev"}`,
		`{"id":"u","\u0069d":"v","name":"A","email":"a@b","age":1,"role":"dev"}`,
		`{"id":"u","name":"A","email":"a@b","age":1,"role":"dev","address":{"city":"a","city":"b"}}`,
		`{"id":"u","name":"A","email":"a@b","age":1,"role":"dev","tags":[{"a":1,"a":2}]}`,
		"{\"id\":\"\xff\",\"name\":\"A\",\"email\":\"a@b\",\"age\":1,\"role\":\"dev\"}",
		`{"id":"\ud800","name":"A","email":"a@b","age":1,"role":"dev"}`,
		`{"id":"u","name":"A","email":"a@b","age":1.0,"role":"dev","level":300,"quota":-1}`,
		`{"id":"u","name":"A","email":"a@b","age":1e2,"role":"dev","score":1e400}`,
		`{"id":"u","name":"A","email":"a@b","age":9007199254740993,"role":"dev"}`,
		`{"ID":"u","name":"A","email":"a@b","age":1,"role":"dev"}`,
		`{"id":"u","name":"A","email":"a@b","age":1,"role":"dev","tags":null,"flags":[true,null,false],"address":null}`,
		`{"id":"u","name":"A","email":"a@b","age":1,"role":"dev","tags":["a",1],"flags":"no"}`,
		`{"id":"u","name":"A","email":"a@b","age":1,"role":"dev","address":{"City":"x","street":"s","zip":"12345"}}`,
		`{"id":null,"name":"A","email":"a@b","age":"1","role":"dev","active":1}`,
	}
	g := fastGen{r: newPropRand(fastDiffSeed)}
	props := schema.(map[string]any)["properties"].(map[string]any)
	names := slices.Sorted(maps.Keys(props))
	for i := range n {
		if i%4 == 0 {
			out = append(out, g.instance(schema, 4))
			continue
		}
		// The required members, mostly valid, then some of the others.
		members := []string{`"id":` + g.strLit(), `"name":"Ada ` + g.pick(fastStrings) + `"`, `"email":"a@b"`,
			`"age":` + g.pick([]string{"0", "36", "150", "1.0", "1e1"}), `"role":"` + g.pick([]string{"admin", "dev", "ops"}) + `"`}
		for _, name := range names {
			if g.r.Intn(6) == 0 {
				members = append(members, strconv.Quote(name)+":"+g.instance(props[name], 3))
			}
		}
		g.r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		out = append(out, "{"+strings.Join(members, ",")+"}")
	}
	return out
}

// TestDecodeTreeAgreesWithKaptinlin: decodeTree accepts exactly the texts
// kaptinlin's decoder accepts, and builds the same value.
func TestDecodeTreeAgreesWithKaptinlin(t *testing.T) {
	cs, err := newSchemaCompiler().compile("inputSchema", json.RawMessage(lookup20SlowSchema))
	if err != nil {
		t.Fatal(err)
	}
	target := newArgsDecoder(reflect.TypeFor[lookup20In]()).newTarget()
	for _, inst := range lookup20Instances(t, 3000) {
		want, werr := cs.decode([]byte(inst))
		for _, sink := range []*argsTarget{nil, target} {
			if sink != nil {
				sink.reset()
			}
			got, ok := decodeTree([]byte(inst), sink)
			if ok != (werr == nil) {
				t.Fatalf("%q: decodeTree accepts it: %v; kaptinlin's decoder: %v", inst, ok, werr)
			}
			if ok && !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: decodeTree made %#v, kaptinlin's decoder %#v", inst, got, want)
			}
		}
	}
}

// TestTypedArgsKaptinlinDecodedOnce: the handler of a typed tool whose
// schema only kaptinlin validates gets, for every instance the schema
// accepts, exactly what json.Unmarshal makes of it (or json.Unmarshal's
// error) — and gets it from the pass that built the value kaptinlin
// validated, not from a second decode, whenever json.Unmarshal accepts
// the arguments.
func TestTypedArgsKaptinlinDecodedOnce(t *testing.T) {
	var got lookup20In
	rt := typedLookup20(t, lookup20SlowSchema, &got)
	if rt.input.fast != nil {
		t.Fatal("the schema is one the fast validator models")
	}
	valid, decoded := 0, 0
	for _, inst := range lookup20Instances(t, 3000) {
		req := CallToolRequest{Arguments: json.RawMessage(inst)}
		if e := inputError(rt, &req, len(inst), "the tool's inputSchema"); e != nil {
			continue
		}
		valid++
		if req.decoded != nil {
			decoded++
		}
		got = lookup20In{}
		_, herr := rt.def.Handler(context.Background(), &req)
		var want lookup20In
		werr := json.Unmarshal([]byte(inst), &want)
		switch {
		case werr != nil:
			if herr == nil || !strings.Contains(herr.Error(), werr.Error()) {
				t.Fatalf("%s: json.Unmarshal fails (%v), the handler got %+v, %v", inst, werr, got, herr)
			}
		case herr != nil:
			t.Fatalf("%s: %v", inst, herr)
		case req.decoded == nil:
			t.Fatalf("%s: json.Unmarshal decodes it, but the validating pass did not", inst)
		case !reflect.DeepEqual(got, want):
			t.Fatalf("%s: the handler got %+v, json.Unmarshal makes %+v", inst, got, want)
		}
	}
	if valid < 100 || decoded < valid/2 {
		t.Fatalf("%d valid instances, %d of them decoded in the validating pass: the generator needs more valid ones", valid, decoded)
	}
	req := CallToolRequest{Arguments: json.RawMessage(lookup20Args)}
	if e := inputError(rt, &req, len(lookup20Args), "the tool's inputSchema"); e != nil || req.decoded == nil {
		t.Fatalf("lookup20's arguments: error %v, decoded %v", e, req.decoded)
	}
}
