package mcp

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseToolSet(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []string
		allow   []string
		deny    []string
		err     string // part of the error; "" for none
	}{
		{"profile core", []string{"core"}, []string{"aacp_send", "memory_store", "server_ping", "reserve_paths"},
			[]string{"memory_delete", "trace_tree", "health"}, ""},
		{"profile memory", []string{"memory"}, []string{"memory_delete", "memory_x", "server_ping"}, []string{"aacp_send", "memoryx"}, ""},
		{"profile governance", []string{"governance"}, []string{"guard_check", "session_create", "trace_tree", "workflow_run", "health",
			"list_reservations", "force_release_reservation", "task_list"},
			[]string{"memory_store", "aacp_send", "reserve_paths", "task_claim", "task_post"}, ""},
		{"profile coordination", []string{"coordination"}, []string{"reserve_paths", "force_release_reservation", "task_post", "coord_start"},
			[]string{"aacp_send", "memory_store", "guard_check"}, ""},
		{"profile messaging", []string{"messaging"}, []string{"aacp_send", "aacp_anything"}, []string{"memory_store"}, ""},
		{"full", []string{"full"}, []string{"anything", "aacp_send"}, nil, ""},
		{"star", []string{"*"}, []string{"anything"}, nil, ""},
		{"profile plus tools", []string{"memory", "trace_tree", "session_*"}, []string{"memory_list", "trace_tree", "session_join"},
			[]string{"trace_get", "aacp_send"}, ""},
		{"names only", []string{"echo"}, []string{"echo"}, []string{"echo2", "ech"}, ""},
		{"no entries", nil, nil, nil, "no tools chosen"},
		{"bad entry", []string{"core", "trace tree"}, nil, nil, `"trace tree" is not a profile`},
		{"unknown profile-like name is a tool name", []string{"small"}, []string{"small"}, []string{"memory_store"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, err := ParseToolSet(tc.entries, testProfiles())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range tc.allow {
				if !ts.Allows(n) {
					t.Errorf("%v does not allow %q", tc.entries, n)
				}
			}
			for _, n := range tc.deny {
				if ts.Allows(n) {
					t.Errorf("%v allows %q", tc.entries, n)
				}
			}
		})
	}
	var none *ToolSet
	if !none.Allows("x") || none.String() != "full" {
		t.Error("the nil ToolSet must allow every tool and read full")
	}
}

// A union of sets allows exactly what one of its parts allows.
func TestToolSetUnion(t *testing.T) {
	parts := [][]string{{"core"}, {"memory"}, {"governance"}, {"messaging"}, {"echo"}, {"trace_*"}}
	names := []string{"aacp_send", "memory_delete", "guard_check", "trace_tree", "echo", "health", "session_x", "other"}
	for i := range parts {
		for j := range parts {
			union, err := ParseToolSet(append(slices.Clone(parts[i]), parts[j]...), testProfiles())
			if err != nil {
				t.Fatal(err)
			}
			a, _ := ParseToolSet(parts[i], testProfiles())
			b, _ := ParseToolSet(parts[j], testProfiles())
			for _, n := range names {
				if got, want := union.Allows(n), a.Allows(n) || b.Allows(n); got != want {
					t.Errorf("%v ∪ %v allows %q = %v, want %v", parts[i], parts[j], n, got, want)
				}
			}
		}
	}
}

// registerNamed adds a no-op tool per name.
func registerNamed(t *testing.T, srv *Server, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := srv.AddTool(Tool{Name: n, Handler: func(context.Context, *CallToolRequest) (any, error) { return "ok", nil }}); err != nil {
			t.Fatal(err)
		}
	}
}

func listedNames(t *testing.T, c *testClient) []string {
	t.Helper()
	var names []string
	cursor := ""
	for i := 0; ; i++ {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":` + quoteString(cursor) + `}`
		}
		m := c.request(strconv.Itoa(100+i), "tools/list", params)
		res := m["result"].(map[string]any)
		for _, tl := range res["tools"].([]any) {
			names = append(names, tl.(map[string]any)["name"].(string))
		}
		next, _ := res["nextCursor"].(string)
		if next == "" {
			return names
		}
		cursor = next
	}
}

// The server's tools.profile / tools.enabled and a session's own choice
// decide what tools/list shows and tools/call finds, page by page.
func TestToolProfilesListAndCall(t *testing.T) {
	all := []string{"aacp_send", "echo", "memory_delete", "memory_store", "server_ping", "trace_get", "trace_tree"}
	for _, tc := range []struct {
		name    string
		profile string
		enabled []string
		session string // a session's own choice ("" for none)
		want    []string
	}{
		{"default full", "full", nil, "", all},
		{"core", "core", nil, "", []string{"aacp_send", "memory_store", "server_ping"}},
		{"memory", "memory", nil, "", []string{"memory_delete", "memory_store", "server_ping"}},
		{"enabled replaces the profile", "core", []string{"trace_*", "echo"}, "", []string{"echo", "trace_get", "trace_tree"}},
		{"a session's choice replaces the server's", "core", nil, "memory,trace_tree", []string{"memory_delete", "memory_store", "server_ping", "trace_tree"}},
		{"a session may widen to full", "core", nil, "full", all},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Limits.PageSize = 2 // pages of two: filtering happens before paging
			if tc.profile != ToolProfileFull {
				cfg.Tools = toolSet(t, tc.profile)
			}
			if tc.enabled != nil {
				cfg.Tools = toolSet(t, tc.enabled...) // enabled replaces the profile
			}
			srv, logBuf := newTestServer(t, cfg, Options{}, func(s *Server) { registerNamed(t, s, all...) })
			var c *testClient
			if tc.session == "" {
				c = connectTestClient(t, transportMemory, srv, logBuf, Version20251125)
			} else {
				ts, err := srv.SessionToolSet(tc.session)
				if err != nil {
					t.Fatal(err)
				}
				stream, end := newClientEnd(srv, transportMemory)
				c = &testClient{t: t, tr: transportMemory, srv: srv, end: end, logBuf: logBuf, done: make(chan struct{})}
				c.sess = srv.Connect(stream, &SessionOptions{Tools: ts})
				go func() { defer close(c.done); _ = c.sess.Serve(context.Background()) }()
				t.Cleanup(c.close)
				c.handshake(Version20251125, `{}`, `{"name":"t","version":"1"}`)
			}
			if got := listedNames(t, c); !slices.Equal(got, tc.want) {
				t.Errorf("tools/list = %v, want %v", got, tc.want)
			}
			for i, n := range all {
				res := c.call(strconv.Itoa(i+1), n, `{}`)
				e := toolError(t, res)
				if slices.Contains(tc.want, n) {
					if e != nil {
						t.Errorf("%s in the profile failed: %v", n, e)
					}
					continue
				}
				if e == nil || e["code"] != "NOT_FOUND" || !strings.Contains(e["message"].(string), "not among this session's tools") {
					t.Errorf("%s outside the profile: %v, want NOT_FOUND saying it is not among this session's tools", n, e)
				}
			}
		})
	}
}

func TestSessionToolSetRefusesUnknownNames(t *testing.T) {
	srv, _ := newTestServer(t, testConfig(), Options{}, func(s *Server) { registerNamed(t, s, "memory_store", "echo") })
	for spec, want := range map[string]string{
		"memory_stor":     `"memory_stor" names no tool of this server`,
		"nothing_*":       `"nothing_*" names no tool`,
		"core, bad name":  `"bad name" is not a profile`,
		" , ":             "no tools chosen",
		"core,echo,mem*":  "",
		"governance,full": "",
	} {
		_, err := srv.SessionToolSet(spec)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("SessionToolSet(%q) = %v, want %q", spec, err, want)
		}
	}
}
