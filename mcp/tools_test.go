package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
)

// Registration, modes, tools/list and notifications/tools/list_changed.

func nopHandler(context.Context, *CallToolRequest) (any, error) { return nil, nil }

func TestListChangedAndToolsList(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		c := newTestClient(t, tr, testConfig(), Options{}, newFixture().setup(t), Version20250618)
		if err := c.srv.AddTool(Tool{Name: "added", Title: "Added", Version: "1.2", Handler: nopHandler}); err != nil {
			t.Fatal(err)
		}
		if m := c.expect(); m["method"] != NotifyToolsListChanged {
			t.Fatalf("want list_changed, got %v", m)
		}
		if err := c.srv.AddTool(Tool{Name: "added", Handler: nopHandler}); err == nil {
			t.Fatal("duplicate accepted")
		}
		c.quiet() // a refused registration changes nothing and announces nothing
		tools := c.request("1", MethodToolsList, "")["result"].(map[string]any)["tools"].([]any)
		var names []string
		for _, tl := range tools {
			m := tl.(map[string]any)
			names = append(names, m["name"].(string))
			if m["name"] == "added" && (m["title"] != "Added" || m["version"] != "1.2") {
				t.Errorf("listing of added: %v", m)
			}
		}
		for i := 1; i < len(names); i++ {
			if names[i-1] >= names[i] {
				t.Fatalf("not sorted: %v", names)
			}
		}
		if err := c.srv.RemoveTool("added"); err != nil {
			t.Fatal(err)
		}
		if m := c.expect(); m["method"] != NotifyToolsListChanged {
			t.Fatalf("want list_changed after remove, got %v", m)
		}
		var ce *core.Error
		if err := c.srv.RemoveTool("added"); !errors.As(err, &ce) || ce.Code != core.CodeNotFound {
			t.Fatalf("removing an absent tool: %v, want NOT_FOUND", err)
		}
		c.quiet()
	})
}

func TestToolsListPagination(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		cfg := testConfig()
		cfg.Limits.PageSize = 4
		c := newTestClient(t, tr, cfg, Options{}, newFixture().setup(t), Version20251125)
		var all []string
		cursor := ""
		for page := 0; page < 20; page++ {
			params := `{}`
			if cursor != "" {
				params = `{"cursor":` + quoteString(cursor) + `}`
			}
			res := c.request("1", MethodToolsList, params)["result"].(map[string]any)
			tools := res["tools"].([]any)
			if len(tools) > 4 {
				t.Fatalf("page of %d", len(tools))
			}
			for _, tl := range tools {
				all = append(all, tl.(map[string]any)["name"].(string))
			}
			next, ok := res["nextCursor"].(string)
			if !ok {
				break
			}
			cursor = next
		}
		if want := toolNames(c.srv); strings.Join(all, ",") != strings.Join(want, ",") {
			t.Fatalf("paged %v, registered %v", all, want)
		}
		e := rpcError(t, c.request("2", MethodToolsList, `{"cursor":"garbage!"}`))
		if e["code"] != float64(-32602) {
			t.Fatalf("invalid cursor: %v", e)
		}
	})
}

func TestRegistrationRules(t *testing.T) {
	srv, err := NewServer(Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := nopHandler
	bad := []Tool{
		{Name: "", Handler: h},
		{Name: strings.Repeat("a", 129), Handler: h},
		{Name: "sp ace", Handler: h},
		{Name: "nohandler"},
		{Name: "arr", Handler: h, InputSchema: json.RawMessage(`{"type":"array"}`)},
		{Name: "notype", Handler: h, InputSchema: json.RawMessage(`{"properties":{}}`)},
		{Name: "dialect", Handler: h, InputSchema: json.RawMessage(`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`)},
		{Name: "netref", Handler: h, InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"http://127.0.0.1:1/x.json"}}}`)},
		{Name: "badout", Handler: h, OutputSchema: json.RawMessage(`{"type":"string"}`)},
	}
	for _, tl := range bad {
		err := srv.AddTool(tl)
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Code != core.CodeInvalidArgument {
			t.Errorf("AddTool(%q): got %v, want INVALID_ARGUMENT", clip(tl.Name, 20), err)
		}
	}
	if n := len(toolNames(srv)); n != 0 {
		t.Fatalf("%d tools registered after refused registrations", n)
	}
	good := Tool{Name: "A-z_0.9", Handler: h, InputSchema: json.RawMessage(
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"x":{"type":"string"}},"properties":{"x":{"$ref":"#/definitions/x"}}}`)}
	if err := srv.AddTool(good); err != nil {
		t.Fatalf("draft-07 tool: %v", err)
	}
	if got := string(srv.tool("A-z_0.9").inRaw); !strings.Contains(got, `"$schema":"http://json-schema.org/draft-07/schema#"`) {
		t.Errorf("listed schema changed: %s", got)
	}
	if d, ok := srv.LookupTool("A-z_0.9"); !ok || d.Name != good.Name {
		t.Errorf("LookupTool: %v %v", d.Name, ok)
	}
	if _, ok := srv.LookupTool("absent"); ok {
		t.Error("LookupTool found an absent tool")
	}
}

func TestModesAdmission(t *testing.T) {
	ro := &ToolAnnotations{ReadOnlyHint: Bool(true)}
	// Admission is decided by Essential and readOnlyHint, never by name:
	// "health" without Essential is not kept by MINIMAL, "keeper" with it
	// is.
	tools := []Tool{
		{Name: "server_ping", Annotations: ro, Essential: true, Observer: true, Handler: nopHandler},
		{Name: "keeper", Essential: true, Handler: nopHandler},
		{Name: "health", Annotations: ro, Handler: nopHandler},
		{Name: "reader", Annotations: ro, Handler: nopHandler},
		{Name: "writer", Handler: nopHandler},
	}
	for _, tc := range []struct {
		mode, want, admits string
	}{
		{ModeFull, "health,keeper,reader,server_ping,writer", ""},
		{ModeTest, "health,keeper,reader,server_ping,writer", ""},
		{ModeReadOnly, "health,reader,server_ping", "readOnlyHint"},
		{ModeMinimal, "keeper,server_ping", "Essential"},
	} {
		cfg := testConfig()
		cfg.Mode = tc.mode
		srv, err := NewServer(withConfig(Options{}, cfg))
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range tools {
			admitted := srv.Admitted(&tl)
			err := srv.AddTool(tl)
			switch {
			case admitted && err != nil:
				t.Fatalf("mode %s: %s: %v", tc.mode, tl.Name, err)
			case !admitted && !errors.Is(err, ErrNotAdmitted):
				t.Fatalf("mode %s: %s not admitted, AddTool returned %v, want ErrNotAdmitted", tc.mode, tl.Name, err)
			case !admitted:
				msg := err.Error()
				if !strings.Contains(msg, tc.mode) || !strings.Contains(msg, tc.admits) || !strings.Contains(msg, tl.Name) {
					t.Errorf("mode %s: the error %q does not say which tool and what the mode admits (%q)", tc.mode, msg, tc.admits)
				}
				var ce *core.Error
				if errors.As(err, &ce) {
					t.Errorf("mode %s: a refusal by mode is not an INVALID_ARGUMENT: %v", tc.mode, err)
				}
			}
		}
		if got := strings.Join(toolNames(srv), ","); got != tc.want {
			t.Errorf("mode %s: %s, want %s", tc.mode, got, tc.want)
		}
	}
}
