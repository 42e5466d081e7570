package mcp

import (
	"context"
	"errors"
	"fmt"
)

// ToolDef is a tool ready to be registered: its definition and its
// handler, typed or not. Make one with Typed or Untyped; register a list
// with Server.AddTools. It is the one way mcprt's own packages declare
// their tools.
type ToolDef struct {
	// Tool is the tool's definition (its Handler is set by Untyped).
	Tool Tool
	add  func(*Server) error
}

// Typed returns the ToolDef of t run by h, registered as AddTypedTool
// registers it: the input schema is derived from In unless t.InputSchema
// is set, the output schema from Out when Out is a struct unless
// t.OutputSchema is set.
func Typed[In, Out any](t Tool, h func(ctx context.Context, req *CallToolRequest, in In) (Out, error)) ToolDef {
	return ToolDef{Tool: t, add: func(s *Server) error { return AddTypedTool(s, t, h) }}
}

// Untyped returns the ToolDef of t, whose Handler takes the raw request,
// registered as AddTool registers it.
func Untyped(t Tool) ToolDef {
	return ToolDef{Tool: t, add: func(s *Server) error { return s.AddTool(t) }}
}

// AddTools registers defs in order. A tool the server's mode does not
// admit (ErrNotAdmitted) is skipped; any other error stops the
// registration and is returned naming the tool (what was registered
// before stays). It returns the names of the tools it registered.
func (s *Server) AddTools(defs ...ToolDef) ([]string, error) {
	var added []string
	for _, d := range defs {
		if d.add == nil {
			return added, fmt.Errorf("mcp: tool %q: a ToolDef must be made with Typed or Untyped", d.Tool.Name)
		}
		err := d.add(s)
		switch {
		case err == nil:
			added = append(added, d.Tool.Name)
		case errors.Is(err, ErrNotAdmitted):
		default:
			return added, fmt.Errorf("register tool %q: %w", d.Tool.Name, err)
		}
	}
	return added, nil
}
