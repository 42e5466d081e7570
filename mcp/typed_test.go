package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// AddTypedTool: schemas derived from In and Out, results checked against
// the derived output schema.

type typedIn struct {
	Name  string `json:"name"`
	Times int    `json:"times,omitempty"`
}

type typedOut struct {
	Greeting string `json:"greeting"`
	Count    int    `json:"count"`
}

func TestAddTypedToolOutputSchema(t *testing.T) {
	// An Out of *CallToolResult gets no output schema, and its results
	// pass through whatever their structuredContent.
	setup := func(s *Server) {
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(AddTypedTool(s, Tool{Name: "greet"}, func(_ context.Context, req *CallToolRequest, in typedIn) (typedOut, error) {
			return typedOut{Greeting: "hi " + in.Name, Count: max(in.Times, 1)}, nil
		}))
		must(AddTypedTool(s, Tool{Name: "ptr"}, func(context.Context, *CallToolRequest, struct{}) (*typedOut, error) {
			return &typedOut{Greeting: "p"}, nil
		}))
		must(AddTypedTool(s, Tool{Name: "text"}, func(context.Context, *CallToolRequest, struct{}) (string, error) {
			return "plain", nil
		}))
		must(AddTypedTool(s, Tool{Name: "full"}, func(context.Context, *CallToolRequest, struct{}) (*CallToolResult, error) {
			return &CallToolResult{Content: []Content{TextContent("own")}}, nil
		}))
		must(AddTypedTool(s, Tool{Name: "given", OutputSchema: json.RawMessage(`{"type":"object","required":["other"]}`)},
			func(context.Context, *CallToolRequest, struct{}) (typedOut, error) { return typedOut{}, nil }))
	}
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		for _, v := range []string{Version20250618, Version20251125, Version20250326} {
			listed := v >= Version20250618
			c := newTestClient(t, tr, testConfig(), Options{}, setup, v)
			schemas := map[string]map[string]any{}
			for _, tl := range c.request("1", MethodToolsList, "")["result"].(map[string]any)["tools"].([]any) {
				m := tl.(map[string]any)
				if os, ok := m["outputSchema"].(map[string]any); ok {
					schemas[m["name"].(string)] = os
				}
			}
			if !listed {
				if len(schemas) != 0 {
					t.Errorf("%s: outputSchema listed before 2025-06-18: %v", v, schemas)
				}
			} else {
				greet := schemas["greet"]
				props, _ := greet["properties"].(map[string]any)
				req, _ := json.Marshal(greet["required"])
				if greet["type"] != "object" || props["greeting"] == nil || props["count"] == nil ||
					!strings.Contains(string(req), `"greeting"`) || !strings.Contains(string(req), `"count"`) {
					t.Errorf("%s: derived outputSchema of greet: %v", v, greet)
				}
				if schemas["ptr"] == nil {
					t.Errorf("%s: no outputSchema for a *struct or struct Out: %v", v, schemas)
				}
				if schemas["text"] != nil || schemas["full"] != nil {
					t.Errorf("%s: an outputSchema for a string or *CallToolResult Out: %v", v, schemas)
				}
				if req, _ := json.Marshal(schemas["given"]["required"]); string(req) != `["other"]` {
					t.Errorf("%s: the tool's own outputSchema was replaced: %v", v, schemas["given"])
				}
			}
			// A result: structuredContent (from 2025-06-18) that satisfies
			// the derived schema, and its JSON as text.
			res := c.call("2", "greet", `{"name":"Ada","times":2}`)
			if res["isError"] != false {
				t.Fatalf("%s: greet: %v", v, res)
			}
			sc, has := res["structuredContent"].(map[string]any)
			if has != listed || listed && (sc["greeting"] != "hi Ada" || sc["count"] != float64(2)) {
				t.Errorf("%s: structuredContent %v", v, res)
			}
			text := res["content"].([]any)[0].(map[string]any)["text"].(string)
			if text != `{"greeting":"hi Ada","count":2}` {
				t.Errorf("%s: text %s", v, text)
			}
			if listed {
				schema, err := newSchemaCompiler().compile("outputSchema", mustMarshal(t, schemas["greet"]))
				if err != nil {
					t.Fatalf("the listed outputSchema does not compile: %v", err)
				}
				if p := schema.validate(mustMarshal(t, sc)); len(p) > 0 {
					t.Errorf("%s: structuredContent %v does not satisfy the listed outputSchema: %v", v, sc, p)
				}
				if p := schema.validate([]byte(`{"greeting":1}`)); len(p) == 0 {
					t.Errorf("%s: the listed outputSchema accepts anything", v)
				}
			}
			// A result that does not fit the tool's own schema is refused in
			// every revision.
			for _, name := range []string{"given"} {
				e := toolError(t, c.call("3", name, ""))
				if e == nil || e["code"] != "INTERNAL" || !strings.Contains(string(mustMarshal(t, e)), "output_schema_violation") {
					t.Errorf("%s: %s: want INTERNAL output_schema_violation, got %v", v, name, e)
				}
			}
			for _, name := range []string{"ptr", "text", "full"} {
				if res := c.call("4", name, ""); res["isError"] != false {
					t.Errorf("%s: %s: %v", v, name, res)
				}
			}
			// The input is checked against the derived input schema.
			if e := toolError(t, c.call("5", "greet", `{"times":1}`)); e == nil || e["code"] != "INVALID_ARGUMENT" {
				t.Errorf("%s: greet without name: %v", v, e)
			}
		}
	})
}
