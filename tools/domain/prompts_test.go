package domain

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/mcp"
)

// TestSearchMemoryNamespace: search_memory declares an optional namespace
// argument, completes it from the stored namespaces, and names it in the
// message only when it is given.
func TestSearchMemoryNamespace(t *testing.T) {
	c, _ := setup(t, mcp.ModeFull, true)
	c.tool("memory_store", map[string]any{"key": "k", "value": 1, "namespace": "proj/a"})
	c.tool("memory_store", map[string]any{"key": "k", "value": 2, "namespace": "ops"})

	var list struct {
		Prompts []struct {
			Name      string
			Arguments []struct {
				Name     string
				Required bool
			}
		}
	}
	c.result("prompts/list", map[string]any{}, &list)
	i := slices.IndexFunc(list.Prompts, func(p struct {
		Name      string
		Arguments []struct {
			Name     string
			Required bool
		}
	}) bool {
		return p.Name == PromptSearchMemory
	})
	if i < 0 {
		t.Fatalf("no %s prompt in %+v", PromptSearchMemory, list.Prompts)
	}
	args := list.Prompts[i].Arguments
	if len(args) != 2 || args[0].Name != "query" || !args[0].Required || args[1].Name != "namespace" || args[1].Required {
		t.Fatalf("%s arguments %+v, want query (required) and namespace (optional)", PromptSearchMemory, args)
	}

	ref := map[string]any{"type": "ref/prompt", "name": PromptSearchMemory}
	if got := c.complete(ref, "namespace", "pr", nil); !slices.Equal(got, []string{"proj/a"}) {
		t.Errorf("namespace completion of %q = %v, want [proj/a]", "pr", got)
	}
	if got := c.complete(ref, "namespace", "", nil); !slices.Equal(got, []string{"ops", "proj/a"}) {
		t.Errorf("namespace completion of \"\" = %v, want [ops proj/a]", got)
	}
	if got := c.complete(ref, "query", "k", nil); len(got) != 0 {
		t.Errorf("query completion = %v, want none", got)
	}

	cases := []struct {
		name    string
		args    map[string]string
		want    []string
		wantNot []string
	}{
		{"all namespaces", map[string]string{"query": "deploy"}, []string{`query "deploy"`}, []string{"namespace \""}},
		{"one namespace", map[string]string{"query": "deploy", "namespace": "proj/a"},
			[]string{`query "deploy" and namespace "proj/a"`}, nil},
		{"empty namespace is all", map[string]string{"query": "deploy", "namespace": ""}, []string{`query "deploy"`},
			[]string{"namespace \""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var res struct {
				Description string
				Messages    []struct{ Content struct{ Text string } }
			}
			c.result("prompts/get", map[string]any{"name": PromptSearchMemory, "arguments": tc.args}, &res)
			if len(res.Messages) != 1 {
				t.Fatalf("messages %+v, want one", res.Messages)
			}
			text := res.Messages[0].Content.Text
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("%q does not contain %q", text, w)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(text, w) || strings.Contains(res.Description, w) {
					t.Errorf("%q (description %q) contains %q", text, res.Description, w)
				}
			}
		})
	}
}
