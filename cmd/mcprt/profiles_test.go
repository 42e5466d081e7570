package main

// Tool profiles through the binary: what tools/list costs a model's
// context per profile, that a tool outside the profile is NOT_FOUND, and
// an HTTP session's own choice of tools on its initialize.

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/wiretest"
	"github.com/mcprt/mcprt/mcp"
)

// Size budgets of tools/list JSON: a coding session's daily profile and
// every tool. They leave room for the tools other work adds.
const (
	coreListBudget = 16 * 1024
	fullListBudget = 40 * 1024
)

// listAll returns the tools/list result texts of every page and the names.
func (c *toolClient) listAll() (size int, names []string) {
	c.t.Helper()
	cursor := ""
	for {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":` + jsonString(cursor) + `}`
		}
		id := c.newID()
		c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":` + params + `}`)
		line := c.await(id)
		var m struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.Result == nil {
			c.t.Fatalf("tools/list: %s", clip(line))
		}
		size += len(m.Result)
		var res struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(m.Result, &res); err != nil {
			c.t.Fatal(err)
		}
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		if cursor = res.NextCursor; cursor == "" {
			return size, names
		}
	}
}

func TestToolProfileSizes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		profile string
		budget  int
	}{
		{"core", coreListBudget},
		{"full", fullListBudget},
		{"", fullListBudget}, // the default is full
		{"memory", coreListBudget},
		{"coordination", coreListBudget},
		{"messaging", fullListBudget}, // the aacp_* tools: their own budget is theirs
		{"governance", fullListBudget},
	} {
		t.Run("profile "+tc.profile, func(t *testing.T) {
			t.Parallel()
			env := []string{"MCPRT_AACP_DATA_DIR=" + t.TempDir()}
			if tc.profile != "" {
				env = append(env, "MCPRT_TOOLS_PROFILE="+tc.profile)
			}
			c := newToolClient(t, env...)
			size, names := c.listAll()
			t.Logf("profile %q: %d tools, %d bytes of tools/list JSON", tc.profile, len(names), size)
			if size > tc.budget {
				t.Errorf("profile %q: tools/list is %d bytes, over its budget of %d", tc.profile, size, tc.budget)
			}
			set, err := mcp.ParseToolSet([]string{cmp.Or(tc.profile, "full")}, config.ToolProfiles())
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range names {
				if !set.Allows(n) {
					t.Errorf("profile %q lists %s", tc.profile, n)
				}
			}
			switch tc.profile {
			case "core":
				for _, n := range []string{"aacp_send", "aacp_receive", "aacp_ack", "memory_store", "memory_search", "memory_retrieve", "server_ping"} {
					if !slices.Contains(names, n) {
						t.Errorf("profile core does not list %s", n)
					}
				}
			case "", "full":
				if len(names) < 40 {
					t.Errorf("profile full lists only %d tools: %v", len(names), names)
				}
			}
		})
	}
}

// Every profile names tools this build has: each tool name is in the full
// list and each prefix matches at least one tool, so that a renamed tool
// cannot silently drop out of a profile.
func TestToolProfilesNameExistingTools(t *testing.T) {
	t.Parallel()
	_, all := newToolClient(t, "MCPRT_AACP_DATA_DIR="+t.TempDir()).listAll()
	for profile, entries := range config.ToolProfiles() {
		for _, e := range entries {
			prefix, isPrefix := strings.CutSuffix(e, "*")
			found := slices.ContainsFunc(all, func(n string) bool { return n == e || isPrefix && strings.HasPrefix(n, prefix) })
			if !found {
				t.Errorf("profile %s names %s, which no tool of the full list is", profile, e)
			}
		}
	}
	for _, want := range []struct{ profile, prefix string }{
		{config.ToolProfileMessaging, "aacp_"}, {config.ToolProfileMemory, "memory_"}, {config.ToolProfileCoordination, "task_"},
		{config.ToolProfileGovernance, "guard_"}, {config.ToolProfileGovernance, "session_"}, {config.ToolProfileGovernance, "trace_"},
		{config.ToolProfileGovernance, "workflow_"},
	} {
		set, err := mcp.ParseToolSet([]string{want.profile}, config.ToolProfiles())
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range all {
			if strings.HasPrefix(n, want.prefix) && !set.Allows(n) {
				t.Errorf("profile %s does not hold %s, one of the %s* tools its name promises", want.profile, n, want.prefix)
			}
		}
	}
}

func TestToolOutsideProfileIsNotFound(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, "MCPRT_AACP_DATA_DIR="+t.TempDir(), "MCPRT_TOOLS_ENABLED=memory,trace_tree")
	_, names := c.listAll()
	if want := []string{"memory_delete", "memory_export", "memory_import", "memory_list", "memory_retrieve", "memory_search",
		"memory_stats", "memory_store", "server_ping", "trace_tree"}; !slices.Equal(names, want) {
		t.Errorf("tools.enabled=memory,trace_tree lists %v, want %v", names, want)
	}
	e := c.failsQuick("session_create", `{"initiator":"a","task":"t"}`, "NOT_FOUND")
	if !strings.Contains(e.Message, `"session_create" is not among this session's tools (memory,trace_tree)`) {
		t.Errorf("message %q does not say the tool is outside the session's tools", e.Message)
	}
	c.ok("memory_store", `{"key":"k","value":"v"}`)
}

func TestBadToolProfileExits78(t *testing.T) {
	t.Parallel()
	for _, env := range []string{"MCPRT_TOOLS_PROFILE=small", "MCPRT_TOOLS_ENABLED=memory,a b"} {
		_, stderr, code := runBinary(t, nil, []string{env}, "")
		if code != 78 || !strings.Contains(stderr, strings.SplitN(strings.TrimPrefix(env, "MCPRT_"), "=", 2)[0]) {
			t.Errorf("%s: exit %d, stderr %s; want 78 naming the variable", env, code, stderr)
		}
	}
}

// httpPost posts body to url with headers and returns the status, the
// session id it carries and the JSON-RPC message of the answer (from a
// JSON body or the first event of a stream).
func httpPost(t *testing.T, url, body string, headers map[string]string) (int, string, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	client := &http.Client{Timeout: wiretest.WaitTimeout}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.TrimSpace(data) != "" {
				raw = []byte(data)
				break
			}
		}
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m) // 202 has no body
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), m
}

// Two HTTP sessions of one server, each with its own tools.
func TestHTTPSessionChoosesItsTools(t *testing.T) {
	t.Parallel()
	_, url := startHTTPServer(t, wiretest.Build(t), "", "MCPRT_AACP_DATA_DIR="+t.TempDir(), "MCPRT_TOOLS_PROFILE=core")
	const rev = "2025-06-18"
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + rev +
		`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	open := func(u string, headers map[string]string) []string {
		status, id, m := httpPost(t, u, initBody, headers)
		if status != http.StatusOK || id == "" || m["result"] == nil {
			t.Fatalf("initialize at %s: status %d, session %q, %v", u, status, id, m)
		}
		h := map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": rev}
		if status, _, _ := httpPost(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h); status != http.StatusAccepted {
			t.Fatalf("initialized: status %d", status)
		}
		_, _, m = httpPost(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, h)
		var names []string
		res, _ := m["result"].(map[string]any)
		tools, _ := res["tools"].([]any)
		for _, tl := range tools {
			names = append(names, tl.(map[string]any)["name"].(string))
		}
		return names
	}
	memory := open(url+"?tools=memory", nil)
	if want := []string{"memory_delete", "memory_export", "memory_import", "memory_list", "memory_retrieve", "memory_search",
		"memory_stats", "memory_store", "server_ping"}; !slices.Equal(memory, want) {
		t.Errorf("?tools=memory lists %v, want %v", memory, want)
	}
	viaHeader := open(url, map[string]string{"Mcp-Tools": "trace_tree,server_ping"})
	if want := []string{"server_ping", "trace_tree"}; !slices.Equal(viaHeader, want) {
		t.Errorf("Mcp-Tools: trace_tree,server_ping lists %v, want %v", viaHeader, want)
	}
	set, _ := mcp.ParseToolSet([]string{config.ToolProfileCore}, config.ToolProfiles())
	for _, n := range open(url, nil) {
		if !set.Allows(n) {
			t.Errorf("a session that chose nothing has the server's profile core, yet lists %s", n)
		}
	}
	status, _, m := httpPost(t, url+"?tools=memory_stor", initBody, nil)
	e, _ := m["error"].(map[string]any)
	if status != http.StatusBadRequest || e == nil || !strings.Contains(e["message"].(string), `"memory_stor" names no tool`) {
		t.Errorf("?tools=memory_stor: status %d, %v; want 400 naming the entry", status, m)
	}
}

// Every argument of the non-aacp tools declares its JSON type, so that
// schema-driven clients (Inspector, SDK forms) send an object where one is
// wanted, not a string; only arguments that take any JSON value have none.
func TestToolArgumentsDeclareTheirType(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, "MCPRT_AACP_DATA_DIR="+t.TempDir())
	id := c.newID()
	c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`)
	var list struct {
		Result struct {
			Tools []struct {
				Name        string         `json:"name"`
				InputSchema map[string]any `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(c.await(id)), &list); err != nil {
		t.Fatal(err)
	}
	anyValue := map[string]bool{"memory_store.value": true, "agent_send_message.message.payload": true}
	var walk func(path string, schema map[string]any)
	walk = func(path string, schema map[string]any) {
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			ps := p.(map[string]any)
			if _, typed := ps["type"]; !typed && !anyValue[path+"."+name] {
				t.Errorf("%s.%s declares no type: %v", path, name, ps)
			}
			walk(path+"."+name, ps)
		}
	}
	for _, tl := range list.Result.Tools {
		if !strings.HasPrefix(tl.Name, "aacp_") {
			walk(tl.Name, tl.InputSchema)
		}
	}
	for _, tl := range list.Result.Tools {
		if tl.Name == "session_create" {
			meta, _ := tl.InputSchema["properties"].(map[string]any)["metadata"].(map[string]any)
			if meta["type"] != "object" {
				t.Errorf("session_create.metadata is %v, want type object", meta)
			}
		}
	}
	e := c.failsQuick("session_create", `{"initiator":"a","task":"t","metadata":"{\"k\":1}"}`, "INVALID_ARGUMENT")
	if !strings.Contains(e.Message, "metadata") {
		t.Errorf("a string for metadata: %q does not name metadata", e.Message)
	}
	got := c.ok("session_create", `{"initiator":"a","task":"t","metadata":{"k":1,"n":{"x":[1,2]}}}`)
	st := c.ok("session_status", `{"sessionId":`+jsonString(got["sessionId"].(string))+`}`)
	if m, _ := json.Marshal(st["metadata"]); string(m) != `{"k":1,"n":{"x":[1,2]}}` {
		t.Errorf("metadata stored as %s", m)
	}
}
