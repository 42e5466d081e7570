package main

// Black-box tests of dynamic registration through the real binary: the admin policy, admin_register_tool and admin_unregister_tool,
// notifications/tools/list_changed, canonical schemas, the three toolTypes
// and the warn log of every (un)registration. Which modes list the admin
// tools is in TestModesListExactlyTheirTools (tools_test.go).

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// The canonical input schemas of the contract.
const (
	canonicalEcho       = `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`
	canonicalHealth     = `{"type":"object","properties":{},"additionalProperties":false}`
	canonicalAgentProxy = `{"type":"object","properties":{"targetAgentId":{"type":"string"},"message":{"type":"object"}},"required":["targetAgentId","message"]}`
)

// registerArgs are admin_register_tool's arguments; schema and version are
// left out when empty.
func registerArgs(name, toolType, schema, version string) string {
	s := `{"name":` + jsonString(name) + `,"description":"registered by a test","toolType":` + jsonString(toolType)
	if schema != "" {
		s += `,"inputSchema":` + schema
	}
	if version != "" {
		s += `,"version":` + jsonString(version)
	}
	return s + `}`
}

// listChangedSince checks that exactly want notifications/tools/list_changed
// arrived after the first `from` notifications, and nothing else.
func (c *toolClient) listChangedSince(from, want int) {
	c.t.Helper()
	got := c.notes[from:]
	if len(got) != want {
		c.t.Fatalf("%d notifications, want %d notifications/tools/list_changed: %v", len(got), want, got)
	}
	for _, line := range got {
		if err := wiretest.Match(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","...":true}`, line); err != nil {
			c.t.Fatalf("notification %s: %v", line, err)
		}
	}
}

// listedTool returns the tools/list entry of name, or nil.
func (c *toolClient) listedTool(name string) map[string]any {
	c.t.Helper()
	id := c.newID()
	c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`)
	res := c.result(id)
	tools, _ := res["tools"].([]any)
	for _, tl := range tools {
		if m, _ := tl.(map[string]any); m["name"] == name {
			return m
		}
	}
	return nil
}

// adminLog waits for the n-th WARN log line about a (un)registration of
// name with toolType.
func (c *toolClient) adminLog(n int, name, toolType string) map[string]any {
	c.t.Helper()
	k := 0
	return c.p.ExpectLog(c.t, "#"+strconv.Itoa(n)+" about registering "+name, func(m map[string]any) bool {
		if m["level"] == "WARN" && m["name"] == name && m["toolType"] == toolType {
			k++
		}
		return k == n
	})
}

func TestAdminPolicyRefuses(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"", "deny_all", "token"} {
		name := policy
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := []string{testMode, adminOn1, adminOn2}
			if policy != "" {
				env = append(env, "MCPRT_TOOLS_ADMIN_POLICY_MODE="+policy)
			}
			c := newToolClient(t, env...)
			c.fails("admin_register_tool", registerArgs("dyn_echo", "echo", "", ""), "UNAUTHORIZED")
			c.fails("admin_unregister_tool", `{"name":"dyn_echo"}`, "UNAUTHORIZED")
			c.fails("admin_unregister_tool", `{"name":"health"}`, "UNAUTHORIZED") // the policy comes first
			c.fails("dyn_echo", `{"message":"x"}`, "NOT_FOUND")
			c.ping()
			if len(c.notes) != 0 {
				t.Errorf("notifications after refused admin calls: %v", c.notes)
			}
			c.close()
			for _, m := range c.p.StderrLines() {
				if m["name"] == "dyn_echo" && m["toolType"] != nil {
					t.Errorf("a refused registration was logged as one: %v", m)
				}
			}
		})
	}
}

func TestAdminRegisterAndUnregister(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode, adminOn1, adminOn2, "MCPRT_TOOLS_ADMIN_POLICY_MODE=local_stdio_only")

	// Register an echo tool: the result, one list_changed, the warn log.
	notes := len(c.notes)
	if r := c.ok("admin_register_tool", registerArgs("dyn_echo", "echo", "", "2.0.0")); !mapsEqualJSON(r,
		`{"registered":true,"name":"dyn_echo","toolType":"echo"}`) {
		t.Fatalf("admin_register_tool returned %v", r)
	}
	c.listChangedSince(notes, 1)
	c.adminLog(1, "dyn_echo", "echo")
	listed := c.listedTool("dyn_echo")
	if listed == nil {
		t.Fatal("tools/list does not list dyn_echo")
	}
	raw, _ := json.Marshal(listed)
	if err := wiretest.Match(`{"name":"dyn_echo","description":"registered by a test","inputSchema":`+canonicalEcho+
		`,"version":"2.0.0","...":true}`, string(raw)); err != nil {
		t.Errorf("dyn_echo listed as %s: %v", raw, err)
	}
	if names := c.listNames(); !slices.Contains(names, "dyn_echo") {
		t.Errorf("tools/list names %v lack dyn_echo", names)
	}
	if r := c.ok("dyn_echo", `{"message":"hello"}`); !mapsEqualJSON(r, `{"message":"hello"}`) {
		t.Errorf("dyn_echo returned %v", r)
	}
	c.fails("dyn_echo", `{}`, "INVALID_ARGUMENT") // the canonical schema requires message

	// Refusals change nothing and notify nobody.
	notes = len(c.notes)
	for _, tc := range []struct{ what, args string }{
		{"a duplicate name", registerArgs("dyn_echo", "echo", "", "")},
		{"a built-in's name", registerArgs("health", "health", "", "")},
		{"an invalid name", registerArgs("has space", "echo", "", "")},
		{"an empty name", registerArgs("", "echo", "", "")},
		{"an unknown toolType", registerArgs("dyn_code", "javascript", "", "")},
		{"a non-canonical schema", registerArgs("dyn_echo2", "echo",
			`{"type":"object","properties":{"message":{"type":"number"}},"required":["message"]}`, "")},
		{"a stricter schema", registerArgs("dyn_echo2", "echo",
			`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"],"additionalProperties":false}`, "")},
		{"another type's schema", registerArgs("dyn_echo2", "echo", canonicalHealth, "")},
	} {
		e := c.fails("admin_register_tool", tc.args, "INVALID_ARGUMENT")
		t.Logf("%s: %s", tc.what, e.Message)
	}
	c.fails("admin_register_tool", `{"name":"x","toolType":"echo"}`, "INVALID_ARGUMENT") // schema: description required
	c.fails("dyn_echo2", `{"message":"x"}`, "NOT_FOUND")
	c.fails("dyn_code", `{}`, "NOT_FOUND")
	c.ping()
	c.listChangedSince(notes, 0)

	// The canonical schema in another key order and spacing is accepted.
	notes = len(c.notes)
	c.ok("admin_register_tool", registerArgs("dyn_echo2", "echo",
		`{ "required" : ["message"], "properties" : { "message" : { "type" : "string" } }, "type" : "object" }`, ""))
	c.listChangedSince(notes, 1)
	if r := c.ok("dyn_echo2", `{"message":"again"}`); r["message"] != "again" {
		t.Errorf("dyn_echo2 returned %v", r)
	}

	// toolType health answers a health report.
	c.ok("admin_register_tool", registerArgs("dyn_health", "health", canonicalHealth, ""))
	c.adminLog(1, "dyn_health", "health")
	h := c.ok("dyn_health", `{}`)
	for _, k := range []string{"server", "config", "resources", "status"} {
		if _, has := h[k]; !has {
			t.Errorf("dyn_health result %v lacks %s", h, k)
		}
	}

	// toolType agentProxy routes to the counter agent.
	c.ok("admin_register_tool", registerArgs("dyn_proxy", "agentProxy", canonicalAgentProxy, ""))
	c.adminLog(1, "dyn_proxy", "agentProxy")
	if r := c.ok("dyn_proxy", `{"targetAgentId":"counter","message":{"type":"inc"}}`); !mapsEqualJSON(r, `{"count":1}`) {
		t.Errorf("dyn_proxy to counter returned %v, want {count:1}", r)
	}
	if r := c.ok("agent_send_message", `{"targetAgentId":"counter","message":{"type":"inc"}}`); !mapsEqualJSON(r, `{"count":2}`) {
		t.Errorf("agent_send_message after the proxy returned %v, want {count:2}: the proxy reached another agent", r)
	}
	c.fails("dyn_proxy", `{"targetAgentId":"nobody","message":{"type":"inc"}}`, "NOT_FOUND")

	// Unregister: the result, one list_changed, the warn log; then gone.
	notes = len(c.notes)
	if r := c.ok("admin_unregister_tool", `{"name":"dyn_echo"}`); !mapsEqualJSON(r, `{"unregistered":true,"name":"dyn_echo"}`) {
		t.Fatalf("admin_unregister_tool returned %v", r)
	}
	c.listChangedSince(notes, 1)
	if m := c.adminLog(2, "dyn_echo", "echo"); !strings.Contains(strings.ToLower(m["msg"].(string)), "unregister") {
		t.Errorf("the second warn line about dyn_echo does not say it was unregistered: %v", m)
	}
	c.fails("dyn_echo", `{"message":"x"}`, "NOT_FOUND")
	if c.listedTool("dyn_echo") != nil {
		t.Errorf("tools/list still lists dyn_echo")
	}
	notes = len(c.notes)
	c.fails("admin_unregister_tool", `{"name":"dyn_echo"}`, "NOT_FOUND")
	c.fails("admin_unregister_tool", `{"name":"never_registered"}`, "NOT_FOUND")
	c.fails("admin_unregister_tool", `{"name":"health"}`, "INVALID_ARGUMENT")
	c.fails("admin_unregister_tool", `{"name":"echo"}`, "INVALID_ARGUMENT") // a TEST fixture is built in too
	c.fails("admin_unregister_tool", `{"name":"admin_register_tool"}`, "INVALID_ARGUMENT")
	c.ping()
	c.listChangedSince(notes, 0)
	if c.listedTool("health") == nil || c.listedTool("echo") == nil {
		t.Errorf("a refused unregistration removed a built-in tool")
	}

	// tools/list sorts by byte order: upper case before lower case.
	c.ok("admin_register_tool", registerArgs("Zeta.Upper", "echo", "", ""))
	c.ok("admin_register_tool", registerArgs("0-digit", "echo", "", ""))
	names := c.listNames() // checks the order
	if names[0] != "0-digit" || names[1] != "Zeta.Upper" {
		t.Errorf("tools/list begins %v, want 0-digit, Zeta.Upper (byte order)", names[:2])
	}

	// The name is free again.
	c.ok("admin_register_tool", registerArgs("dyn_echo", "echo", canonicalEcho, ""))
	c.adminLog(3, "dyn_echo", "echo")
	c.ok("dyn_echo", `{"message":"back"}`)
	c.close()
}

// mapsEqualJSON reports whether m encodes to the same JSON as want (keys
// sorted, so order does not matter).
func mapsEqualJSON(m map[string]any, want string) bool {
	var w any
	if json.Unmarshal([]byte(want), &w) != nil {
		return false
	}
	a, _ := json.Marshal(m)
	b, _ := json.Marshal(w)
	return string(a) == string(b)
}
