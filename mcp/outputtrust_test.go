package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// Which results are trusted to satisfy the outputSchema and which are
// checked: only a non-nil value of the very type the schema was derived
// from is trusted.
func TestTrustsOutput(t *testing.T) {
	s, err := NewServer(Options{Name: "t", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	add := func(name string, schema json.RawMessage, h func(context.Context, *CallToolRequest, struct{}) (*typedOut, error)) *registeredTool {
		if err := AddTypedTool(s, Tool{Name: name, OutputSchema: schema}, h); err != nil {
			t.Fatal(err)
		}
		return s.tool(name)
	}
	none := func(context.Context, *CallToolRequest, struct{}) (*typedOut, error) { return nil, nil }
	derived := add("derived", nil, none)
	given := add("given", json.RawMessage(`{"type":"object"}`), none)
	for _, tc := range []struct {
		rt   *registeredTool
		v    any
		want bool
	}{
		{derived, &typedOut{}, true},
		{derived, (*typedOut)(nil), false}, // null is no object
		{derived, typedOut{}, false},       // another type than Out
		{derived, map[string]any{}, false}, //
		{given, &typedOut{}, false},        // a hand-written schema is always checked
	} {
		if got := tc.rt.trustsOutput(tc.v); got != tc.want {
			t.Errorf("%s: trustsOutput(%#v) = %v, want %v", tc.rt.def.Name, tc.v, got, tc.want)
		}
	}
	// Through InvokeTool: a nil *Out is checked, and refused.
	if _, err := s.InvokeTool(context.Background(), "derived", nil); err == nil ||
		!strings.Contains(err.Error(), "does not match its outputSchema") {
		t.Errorf("InvokeTool: a nil *Out result: err = %v, want an outputSchema violation", err)
	}
}

// Through tools/call: a nil *Out is checked against the derived schema
// and refused, a non-nil one is answered.
func TestNilTypedResultIsChecked(t *testing.T) {
	setup := func(s *Server) {
		for name, v := range map[string]*typedOut{"nil": nil, "some": {Greeting: "g"}} {
			if err := AddTypedTool(s, Tool{Name: name}, func(context.Context, *CallToolRequest, struct{}) (*typedOut, error) {
				return v, nil
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := newTestClient(t, transportMemory, testConfig(), Options{}, setup, LatestVersion)
	if e := toolError(t, c.call("1", "nil", "")); e == nil || e["code"] != "INTERNAL" ||
		!strings.Contains(string(mustMarshal(t, e)), "output_schema_violation") {
		t.Errorf("a nil *Out: want INTERNAL output_schema_violation, got %v", e)
	}
	if res := c.call("2", "some", ""); res["isError"] != false {
		t.Errorf("a non-nil *Out: %v", res)
	}
}
