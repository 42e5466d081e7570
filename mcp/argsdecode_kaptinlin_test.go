package mcp

import (
	"context"
	"encoding/json"
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
