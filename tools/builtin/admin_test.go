package builtin

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/aacp"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

func adminClient(t *testing.T) *client {
	return newClient(t, setup{admin: true, policy: config.AdminPolicyLocalStdioOnly})
}

func TestAdminPolicyRefuses(t *testing.T) {
	for _, policy := range []string{config.AdminPolicyDenyAll, config.AdminPolicyToken} {
		t.Run(policy, func(t *testing.T) {
			c := newClient(t, setup{admin: true, policy: policy})
			e := c.fails("admin_register_tool", `{"name":"dyn","description":"d","toolType":"echo"}`, core.CodeUnauthorized)
			msg := e["message"].(string)
			if !strings.Contains(msg, "tools.adminPolicy.mode="+policy) || !strings.Contains(msg, "local_stdio_only") {
				t.Errorf("message %q should name the policy and the way out", msg)
			}
			c.fails("admin_unregister_tool", `{"name":"server_ping"}`, core.CodeUnauthorized)
			if _, ok := c.srv.LookupTool("dyn"); ok {
				t.Error("a refused registration registered the tool")
			}
		})
	}
	t.Run("deny_all message", func(t *testing.T) {
		c := newClient(t, setup{admin: true, policy: config.AdminPolicyDenyAll})
		e := c.fails("admin_register_tool", `{"name":"dyn","description":"d","toolType":"echo"}`, core.CodeUnauthorized)
		want := "dynamic registration is disabled by tools.adminPolicy.mode=deny_all; set it to local_stdio_only to allow it over stdio"
		if e["message"] != want {
			t.Errorf("message = %q, want %q", e["message"], want)
		}
	})
}

// local_stdio_only and token refuse every transport but stdio.
func TestAdminPolicyOverOtherTransports(t *testing.T) {
	for _, policy := range []string{config.AdminPolicyLocalStdioOnly, config.AdminPolicyToken} {
		t.Run(policy, func(t *testing.T) {
			c := newClient(t, setup{admin: true, policy: policy, network: "http"})
			e := c.fails("admin_register_tool", `{"name":"dyn","description":"d","toolType":"echo"}`, core.CodeUnauthorized)
			if msg := e["message"].(string); !strings.Contains(msg, `"http"`) {
				t.Errorf("message %q should name the transport", msg)
			}
		})
	}
}

func TestAdminRegisterEcho(t *testing.T) {
	c := adminClient(t)
	res := c.ok("admin_register_tool", `{"name":"dyn_echo","description":"Echoes.","toolType":"echo","version":"2.0"}`)
	sameKeys(t, "result", res, "registered", "name", "toolType")
	if res["registered"] != true || res["name"] != "dyn_echo" || res["toolType"] != "echo" {
		t.Errorf("result = %v", res)
	}
	c.listChanged()
	var listed map[string]any
	for _, tool := range c.tools() {
		if tool["name"] == "dyn_echo" {
			listed = tool
		}
	}
	if listed == nil {
		t.Fatal("dyn_echo is not listed")
	}
	if listed["description"] != "Echoes." || listed["version"] != "2.0" {
		t.Errorf("listing = %v", listed)
	}
	in := listed["inputSchema"].(map[string]any)
	if req, _ := in["required"].([]any); len(req) != 1 || req[0] != "message" {
		t.Errorf("inputSchema = %v, want the canonical echo schema", in)
	}
	if got := c.ok("dyn_echo", `{"message":"hello"}`); got["message"] != "hello" {
		t.Errorf("dyn_echo = %v", got)
	}
	c.fails("dyn_echo", `{}`, core.CodeInvalidArgument)

	logs := c.logs.entries("dynamic tool registered")
	if len(logs) != 1 || logs[0]["level"] != "WARN" || logs[0]["name"] != "dyn_echo" || logs[0]["toolType"] != "echo" {
		t.Errorf("registration log = %v, want one warn entry with name and toolType", logs)
	}
	// The registration was recorded as dynamic, with its toolType: the
	// tool can be unregistered, and the removal is logged with it.
	c.ok("admin_unregister_tool", `{"name":"dyn_echo"}`)
	logs = c.logs.entries("dynamic tool unregistered")
	if len(logs) != 1 || logs[0]["name"] != "dyn_echo" || logs[0]["toolType"] != "echo" {
		t.Errorf("unregistration log = %v, want dyn_echo of toolType echo", logs)
	}
}

func TestAdminRegisterHealthAndAgentProxy(t *testing.T) {
	c := adminClient(t)
	if err := c.agents.RegisterAgent("echo", aacp.EchoAgent()); err != nil {
		t.Fatal(err)
	}
	c.ok("admin_register_tool", `{"name":"dyn.health","description":"Health again.","toolType":"health"}`)
	c.listChanged()
	h := c.ok("dyn.health", `{}`)
	sameKeys(t, "dyn.health", h, "server", "config", "resources", "status")
	// A dynamic health tool is an ordinary tool: it holds a slot itself.
	if n := h["resources"].(map[string]any)["concurrentExecutions"]; n != 1.0 {
		t.Errorf("concurrentExecutions = %v from a dynamic health tool, want 1 (its own slot)", n)
	}
	c.fails("dyn.health", `{"x":1}`, core.CodeInvalidArgument)

	c.ok("admin_register_tool", `{"name":"dyn-proxy","description":"To agents.","toolType":"agentProxy"}`)
	c.listChanged()
	res := c.ok("dyn-proxy", `{"targetAgentId":"echo","message":{"type":"ping","payload":{"n":1}}}`)
	if res["type"] != "ping" || res["payload"].(map[string]any)["n"] != 1.0 {
		t.Errorf("dyn-proxy = %v", res)
	}
	c.fails("dyn-proxy", `{"targetAgentId":"nobody","message":{"type":"ping"}}`, core.CodeNotFound)
	c.fails("dyn-proxy", `{"targetAgentId":"echo","message":{}}`, core.CodeInvalidArgument)
	c.fails("dyn-proxy", `{"targetAgentId":"echo","message":{"type":"x","extra":1}}`, core.CodeInvalidArgument)
}

func TestAdminRegisterRefusals(t *testing.T) {
	c := adminClient(t)
	c.ok("admin_register_tool", `{"name":"dyn","description":"d","toolType":"echo"}`)
	c.listChanged()

	tests := []struct {
		name, args, wantInMessage string
	}{
		{"duplicate dynamic", `{"name":"dyn","description":"d","toolType":"echo"}`, "already registered"},
		{"duplicate built-in", `{"name":"health","description":"d","toolType":"health"}`, "already registered"},
		{"invalid name", `{"name":"bad name!","description":"d","toolType":"echo"}`, "invalid tool name"},
		{"empty name", `{"name":"","description":"d","toolType":"echo"}`, "invalid tool name"},
		{"long name", `{"name":"` + strings.Repeat("n", 129) + `","description":"d","toolType":"echo"}`, "invalid tool name"},
		{"unknown toolType", `{"name":"x","description":"d","toolType":"python"}`, "echo, health, agentProxy"},
		{"non-canonical schema", `{"name":"x","description":"d","toolType":"echo",
			"inputSchema":{"type":"object","properties":{"message":{"type":"string"}}}}`, `"required":["message"]`},
		{"schema of another type", `{"name":"x","description":"d","toolType":"health",
			"inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}`, "canonical"},
		{"missing toolType", `{"name":"x","description":"d"}`, ""},
		{"unknown argument", `{"name":"x","description":"d","toolType":"echo","code":"rm -rf /"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.sub(t)
			e := c.fails("admin_register_tool", tt.args, core.CodeInvalidArgument)
			if !strings.Contains(e["message"].(string), tt.wantInMessage) {
				t.Errorf("message %q does not contain %q", e["message"], tt.wantInMessage)
			}
		})
	}
	if got := c.toolNames(); slices.Contains(got, "x") {
		t.Errorf("a refused registration is listed: %v", got)
	}
}

// The canonical schema is accepted however it is spelled.
func TestAdminCanonicalSchemaSpellings(t *testing.T) {
	c := adminClient(t)
	for i, schema := range []string{
		`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`,
		`{ "required" : [ "message" ],
		   "properties": { "message": { "type": "string" } },
		   "type": "object" }`,
	} {
		name := []string{"spelled_exactly", "spelled_otherwise"}[i]
		c.ok("admin_register_tool", `{"name":"`+name+`","description":"d","toolType":"echo","inputSchema":`+schema+`}`)
		c.listChanged()
	}
	c.ok("admin_register_tool", `{"name":"proxy","description":"d","toolType":"agentProxy","inputSchema":
		{"required":["targetAgentId","message"],"type":"object",
		 "properties":{"message":{"type":"object"},"targetAgentId":{"type":"string"}}}}`)
	if !sameJSON([]byte(`{"a":1.0,"b":[1e0]}`), []byte(`{"b":[1],"a":1}`)) {
		t.Error("sameJSON does not normalize numbers")
	}
}

func TestAdminUnregister(t *testing.T) {
	c := adminClient(t)
	c.ok("admin_register_tool", `{"name":"dyn","description":"d","toolType":"echo"}`)
	c.listChanged()

	res := c.ok("admin_unregister_tool", `{"name":"dyn"}`)
	sameKeys(t, "result", res, "unregistered", "name")
	if res["unregistered"] != true || res["name"] != "dyn" {
		t.Errorf("result = %v", res)
	}
	c.listChanged()
	if slices.Contains(c.toolNames(), "dyn") {
		t.Error("dyn is still listed")
	}
	c.fails("dyn", `{"message":"x"}`, core.CodeNotFound)
	logs := c.logs.entries("dynamic tool unregistered")
	if len(logs) != 1 || logs[0]["level"] != "WARN" || logs[0]["name"] != "dyn" || logs[0]["toolType"] != "echo" {
		t.Errorf("unregistration log = %v", logs)
	}

	c.fails("admin_unregister_tool", `{"name":"dyn"}`, core.CodeNotFound)
	c.fails("admin_unregister_tool", `{"name":"never_there"}`, core.CodeNotFound)
	for _, builtin := range []string{"health", "server_ping", "agent_get_state", "admin_unregister_tool"} {
		e := c.fails("admin_unregister_tool", `{"name":"`+builtin+`"}`, core.CodeInvalidArgument)
		if !strings.Contains(e["message"].(string), "built in") {
			t.Errorf("message %q should say the tool is built in", e["message"])
		}
	}
	// The name is free again.
	c.ok("admin_register_tool", `{"name":"dyn","description":"d","toolType":"health"}`)
}

// Without a coordinator, agentProxy is NOT_IMPLEMENTED; echo still works.
func TestAdminAgentProxyWithoutAgents(t *testing.T) {
	c := newClient(t, setup{admin: true, policy: config.AdminPolicyLocalStdioOnly, noAgents: true})
	c.fails("admin_register_tool", `{"name":"p","description":"d","toolType":"agentProxy"}`, core.CodeNotImplemented)
	c.ok("admin_register_tool", `{"name":"e","description":"d","toolType":"echo"}`)
}

// The policy decides by the transport of the call's session, by name, and
// (mode token) by whether the session was opened with the admin token:
// local_stdio_only over "stdio" is allowed, and token mode for a
// tokened session on any transport but stdio.
func TestEnforcePolicyPerTransport(t *testing.T) {
	for _, mode := range []string{config.AdminPolicyDenyAll, config.AdminPolicyLocalStdioOnly, config.AdminPolicyToken, "bogus"} {
		for _, transport := range []string{"stdio", "http", "streamable-http", "STDIO", ""} {
			for _, token := range []bool{false, true} {
				err := enforcePolicy(mode, transport, token)
				allowed := mode == config.AdminPolicyLocalStdioOnly && transport == "stdio" ||
					mode == config.AdminPolicyToken && token && transport != "stdio"
				if allowed {
					if err != nil {
						t.Errorf("%s over %q: %v, want allowed", mode, transport, err)
					}
					continue
				}
				if e := core.AsError(err); err == nil || e.Code != core.CodeUnauthorized {
					t.Errorf("%s over %q: %v, want UNAUTHORIZED", mode, transport, err)
					continue
				}
				if msg := err.Error(); !strings.Contains(msg, "tools.adminPolicy.mode") {
					t.Errorf("%s over %q: message %q does not name the setting", mode, transport, msg)
				}
			}
		}
	}
}

// The transport that counts is the session's (mcp.SessionOptions), not the
// server's default.
func TestAdminPolicyUsesTheSessionTransport(t *testing.T) {
	tests := []struct {
		name, network, transport string
		allowed                  bool
	}{
		{"stdio session on an http server", "http", "stdio", true},
		{"http session on a stdio server", "stdio", "http", false},
		{"server default stdio", "", "", true},
		{"server default http", "http", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, policy := range []string{config.AdminPolicyLocalStdioOnly, config.AdminPolicyToken} {
				c := newClient(t, setup{admin: true, policy: policy, network: tt.network, transport: tt.transport})
				args := `{"name":"dyn","description":"d","toolType":"echo"}`
				if tt.allowed && policy == config.AdminPolicyLocalStdioOnly {
					c.ok("admin_register_tool", args)
					c.listChanged()
					c.ok("admin_unregister_tool", `{"name":"dyn"}`)
					continue
				}
				c.fails("admin_register_tool", args, core.CodeUnauthorized)
				c.fails("admin_unregister_tool", `{"name":"dyn"}`, core.CodeUnauthorized)
			}
		})
	}
}

// A dynamic tool the mode does not admit is refused with INVALID_ARGUMENT
// naming the mode (the admin tools themselves exist only where every tool
// is admitted, so this is driven directly).
func TestDynamicToolNotAdmitted(t *testing.T) {
	cfg := config.DefaultBase("1")
	cfg.Server.Mode = mcp.ModeReadOnly
	srv, err := mcp.NewServer(serverOptions(cfg, mcp.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	agents := aacp.NewCoordinator(aacp.Options{MaxPayloadBytes: cfg.Tools.MaxPayloadBytes})
	defer agents.Close(context.Background())
	dyn := newDynamicTools()
	ctx := context.Background()
	// echo and health tools are read-only: READONLY admits them.
	if _, err := dyn.register(ctx, srv, agents, registerArgs{Name: "e", ToolType: toolTypeEcho}); err != nil {
		t.Fatalf("register echo in READONLY: %v", err)
	}
	_, err = dyn.register(ctx, srv, agents, registerArgs{Name: "p", ToolType: toolTypeAgentProxy})
	if e := core.AsError(err); err == nil || e.Code != core.CodeInvalidArgument ||
		!strings.Contains(e.Message, "mode READONLY does not admit tool \"p\" of toolType \"agentProxy\"") {
		t.Fatalf("register agentProxy in READONLY: %v, want INVALID_ARGUMENT naming the mode", err)
	}
	if _, ok := srv.LookupTool("p"); ok {
		t.Error("a tool the mode does not admit was registered")
	}
	if _, ok := dyn.tools["p"]; ok {
		t.Error("a refused tool was recorded as dynamic")
	}
	if res, err := dyn.unregister(ctx, srv, "e"); err != nil || !res.Unregistered {
		t.Errorf("unregister e = %v, %v", res, err)
	}
}

// A dynamic tool the program removed itself (mcp.Server.RemoveTool) is
// NOT_FOUND; and a tool the program then registers under that name is not
// dynamic, so admin_unregister_tool refuses it.
func TestDynamicRecordFollowsTheRegistry(t *testing.T) {
	mine := func(context.Context, *mcp.CallToolRequest) (any, error) { return "mine", nil }
	for _, askFirst := range []bool{true, false} {
		c := adminClient(t)
		c.ok("admin_register_tool", `{"name":"dyn","description":"d","toolType":"echo"}`)
		c.listChanged()
		if err := c.srv.RemoveTool("dyn"); err != nil {
			t.Fatal(err)
		}
		c.listChanged()
		if askFirst {
			c.fails("admin_unregister_tool", `{"name":"dyn"}`, core.CodeNotFound)
		}
		if err := c.srv.AddTool(mcp.Tool{Name: "dyn", Description: "d", Handler: mine,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false)}}); err != nil {
			t.Fatal(err)
		}
		c.listChanged()
		c.fails("admin_unregister_tool", `{"name":"dyn"}`, core.CodeInvalidArgument)
		if _, ok := c.srv.LookupTool("dyn"); !ok {
			t.Error("admin_unregister_tool removed the program's own tool")
		}
	}
}
