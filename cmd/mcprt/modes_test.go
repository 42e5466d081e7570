package main

// Modes, tools/list, pagination and revisions.

import (
	"slices"
	"sort"
	"strings"
	"testing"
)

// ---------------------------------------------------------------------------
// modes, tools/list, pagination, revisions.

// listNames returns the names of every tool tools/list lists, walking the
// pages, after checking that each page is sorted and no name repeats.
func (c *toolClient) listNames() []string {
	c.t.Helper()
	var names []string
	cursor := ""
	for page := 0; ; page++ {
		if page > 100 {
			c.t.Fatal("tools/list pagination does not end")
		}
		id := c.newID()
		params := `{}`
		if cursor != "" {
			params = `{"cursor":` + jsonString(cursor) + `}`
		}
		c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":` + params + `}`)
		res := c.result(id)
		tools, isArray := res["tools"].([]any)
		if !isArray {
			c.t.Fatalf("tools/list result has no tools array: %v", res)
		}
		for _, tl := range tools {
			m, _ := tl.(map[string]any)
			name, _ := m["name"].(string)
			names = append(names, name)
		}
		next, hasNext := res["nextCursor"]
		if !hasNext {
			break
		}
		if s, _ := next.(string); s == "" {
			c.t.Fatalf("nextCursor %v is not a non-empty string", next)
		}
		cursor = next.(string)
	}
	if !sort.StringsAreSorted(names) {
		c.t.Errorf("tools/list is not sorted by name: %v", names)
	}
	if len(slices.Compact(slices.Clone(names))) != len(names) {
		c.t.Errorf("tools/list repeats a name: %v", names)
	}
	return names
}

var (
	baseTools = sortedUnion([]string{"agent_get_state", "agent_list", "agent_send_message", "health", "server_ping"}, aacpTools, aacpReadOnly,
		domainReadOnlyTools, domainWriteTools)
	aacpReadOnly = []string{"aacp_agents", "aacp_dead_letters", "aacp_peek", "aacp_search", "aacp_status", "aacp_thread", "aacp_view"}
	aacpTools    = []string{"aacp_ack", "aacp_heartbeat", "aacp_nack", "aacp_receive", "aacp_register_agent", "aacp_reply", "aacp_requeue", "aacp_send"}
	adminNames   = []string{"admin_register_tool", "admin_unregister_tool"}
	fixtureNames = []string{"big_result", "clock_advance", "demo_elicit", "demo_log", "demo_progress", "demo_roots", "demo_sample", "demo_touch",
		"echo", "fail", "lookup20", "noop", "panic", "sleep", "unserializable"}
)

func sortedUnion(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.Sort(out)
	return out
}

const (
	adminOn1 = "MCPRT_TOOLS_ADMIN_REGISTRATION_ENABLED=true"
	adminOn2 = "MCPRT_SECURITY_DYNAMIC_REGISTRATION_ENABLED=true"
)

func TestModesListExactlyTheirTools(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     []string
		want    []string
		missing []string // tools that must be NOT_FOUND when called
	}{
		{"FULL", []string{"MCPRT_SERVER_MODE=FULL"}, baseTools, sortedUnion(adminNames, []string{"noop", "echo"})},
		{"FULL admin", []string{"MCPRT_SERVER_MODE=FULL", adminOn1, adminOn2}, sortedUnion(baseTools, adminNames), []string{"noop"}},
		{"FULL admin registration only", []string{adminOn1}, baseTools, adminNames},
		{"FULL dynamic registration only", []string{adminOn2}, baseTools, adminNames},
		{"READONLY", []string{"MCPRT_SERVER_MODE=READONLY", adminOn1, adminOn2},
			sortedUnion([]string{"agent_get_state", "agent_list", "health", "server_ping"}, aacpReadOnly, domainReadOnlyTools),
			sortedUnion(adminNames, aacpTools, domainWriteTools, []string{"agent_send_message", "noop"})},
		{"MINIMAL", []string{"MCPRT_SERVER_MODE=MINIMAL", adminOn1, adminOn2}, []string{"health", "server_ping"},
			sortedUnion(adminNames, []string{"agent_send_message", "agent_list", "agent_get_state", "sleep"})},
		{"TEST", []string{testMode}, sortedUnion(baseTools, fixtureNames), adminNames},
		{"TEST admin", []string{testMode, adminOn1, adminOn2}, sortedUnion(baseTools, fixtureNames, adminNames), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newToolClient(t, tt.env...)
			if got := c.listNames(); !slices.Equal(got, tt.want) {
				t.Errorf("tools/list names\n got  %v\n want %v", got, tt.want)
			}
			for _, name := range tt.missing {
				args := `{}`
				if name == "agent_get_state" {
					args = `{"agentId":"echo"}`
				}
				c.fails(name, args, "NOT_FOUND")
			}
			mode := "FULL"
			for _, kv := range tt.env {
				if m, found := strings.CutPrefix(kv, "MCPRT_SERVER_MODE="); found {
					mode = m
				}
			}
			if r := c.ok("server_ping", `{}`); r["mode"] != mode {
				t.Errorf("server_ping mode %v, want %s", r["mode"], mode)
			}
			c.close()
		})
	}
}

func TestToolsListPagination(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode, adminOn1, adminOn2, "MCPRT_TOOLS_PAGE_SIZE=3")
	all := sortedUnion(baseTools, fixtureNames, adminNames)
	var got []string
	cursor := ""
	pages := 0
	for {
		id := c.newID()
		params := `{}`
		if cursor != "" {
			params = `{"cursor":` + jsonString(cursor) + `}`
		}
		c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":` + params + `}`)
		res := c.result(id)
		tools, _ := res["tools"].([]any)
		pages++
		next, hasNext := res["nextCursor"].(string)
		if hasNext && len(tools) != 3 || !hasNext && (len(tools) == 0 || len(tools) > 3) {
			t.Fatalf("page %d has %d tools (nextCursor %v), want 3 per page but the last", pages, len(tools), res["nextCursor"])
		}
		for _, tl := range tools {
			got = append(got, tl.(map[string]any)["name"].(string))
		}
		if !hasNext {
			break
		}
		cursor = next
	}
	if !slices.Equal(got, all) {
		t.Errorf("the pages list\n %v\nwant every tool once, sorted:\n %v", got, all)
	}
	if want := (len(all) + 2) / 3; pages != want {
		t.Errorf("%d pages, want %d", pages, want)
	}
	if got2 := c.listNames(); !slices.Equal(got2, all) {
		t.Errorf("a second walk lists %v", got2)
	}
	for _, bad := range []string{`"not a cursor"`, `"AAAA"`, `""`, `7`} {
		id := c.newID()
		c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{"cursor":` + bad + `}}`)
		c.protoError(id, -32602)
	}
	c.close()
}

func TestRevisionsShapeListingAndResults(t *testing.T) {
	t.Parallel()
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			c := newToolClientRev(t, rev, testMode)
			modern := rev >= "2025-06-18"
			// success checks structuredContent against the revision.
			if v := c.ok("echo", `{"message":"m"}`); v["message"] != "m" {
				t.Errorf("echo returned %v", v)
			}
			if v := c.successText(c.send("big_result", `{"bytes":3}`)); v != "xxx" {
				t.Errorf("big_result returned %q, want xxx, unquoted (a string result is its text; no structuredContent)", v)
			}
			id := c.newID()
			c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`)
			res := c.result(id)
			tools, _ := res["tools"].([]any)
			byName := map[string]map[string]any{}
			for _, tl := range tools {
				m := tl.(map[string]any)
				byName[m["name"].(string)] = m
				if _, has := m["inputSchema"]; !has {
					t.Errorf("%v has no inputSchema", m["name"])
				}
				if _, has := m["title"]; has && !modern {
					t.Errorf("%s lists title %v under %s (only from 2025-06-18)", m["name"], m["title"], rev)
				}
				if _, has := m["outputSchema"]; has && !modern {
					t.Errorf("%s lists outputSchema under %s (only from 2025-06-18)", m["name"], rev)
				}
			}
			health := byName["health"]
			if _, has := health["title"]; has != modern {
				t.Errorf("health title present=%v under %s, want %v", has, rev, modern)
			}
			if _, has := byName["server_ping"]["outputSchema"]; has != modern {
				t.Errorf("server_ping outputSchema present=%v under %s, want %v", has, rev, modern)
			}
			c.close()
		})
	}
}
