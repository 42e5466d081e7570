package mcp

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestAddTools(t *testing.T) {
	type in struct {
		N int `json:"n"`
	}
	typed := Typed(Tool{Name: "typed", Essential: true}, func(context.Context, *CallToolRequest, in) (in, error) { return in{}, nil })
	untyped := Untyped(Tool{Name: "untyped", Handler: func(context.Context, *CallToolRequest) (any, error) { return "ok", nil }})
	for _, tc := range []struct {
		name    string
		mode    string
		defs    []ToolDef
		added   []string
		wantErr string // "" for none
	}{
		{"both", ModeFull, []ToolDef{typed, untyped}, []string{"typed", "untyped"}, ""},
		{"the mode skips one", ModeMinimal, []ToolDef{typed, untyped}, []string{"typed"}, ""},
		{"a clash stops", ModeFull, []ToolDef{typed, typed, untyped}, []string{"typed"}, `register tool "typed"`},
		{"a zero ToolDef", ModeFull, []ToolDef{{Tool: Tool{Name: "z"}}}, nil, `tool "z": a ToolDef must be made with Typed or Untyped`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := NewServer(Options{Mode: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			added, err := srv.AddTools(tc.defs...)
			if !slices.Equal(added, tc.added) {
				t.Errorf("added %v, want %v", added, tc.added)
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}
