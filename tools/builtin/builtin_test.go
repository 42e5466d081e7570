package builtin

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/aacp"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

var (
	observers   = []string{"health", "server_ping"}
	agentNames  = []string{"agent_get_state", "agent_send_message"}
	adminNames  = []string{"admin_register_tool", "admin_unregister_tool"}
	fixtureList = []string{"big_result", "demo_elicit", "demo_log", "demo_progress", "demo_roots", "demo_sample", "demo_touch",
		"echo", "fail", "lookup20", "noop", "panic", "sleep", "unserializable"}
)

func sorted(groups ...[]string) []string {
	out := slices.Concat(groups...)
	slices.Sort(out)
	return out
}

func TestModeToolLists(t *testing.T) {
	tests := []struct {
		name string
		s    setup
		want []string
	}{
		{"FULL", setup{mode: mcp.ModeFull}, sorted(observers, agentNames)},
		{"FULL admin", setup{mode: mcp.ModeFull, admin: true}, sorted(observers, agentNames, adminNames)},
		{"FULL no agents", setup{mode: mcp.ModeFull, noAgents: true}, sorted(observers)},
		{"FULL admin no agents", setup{mode: mcp.ModeFull, admin: true, noAgents: true}, sorted(observers, adminNames)},
		{"READONLY", setup{mode: mcp.ModeReadOnly}, sorted(observers, []string{"agent_get_state"})},
		{"READONLY admin", setup{mode: mcp.ModeReadOnly, admin: true}, sorted(observers, []string{"agent_get_state"})},
		{"READONLY no agents", setup{mode: mcp.ModeReadOnly, admin: true, noAgents: true}, sorted(observers)},
		{"MINIMAL", setup{mode: mcp.ModeMinimal}, sorted(observers)},
		{"MINIMAL admin", setup{mode: mcp.ModeMinimal, admin: true}, sorted(observers)},
		{"MINIMAL no agents", setup{mode: mcp.ModeMinimal, admin: true, noAgents: true}, sorted(observers)},
		{"TEST", setup{mode: mcp.ModeTest}, sorted(observers, agentNames, fixtureList)},
		{"TEST admin", setup{mode: mcp.ModeTest, admin: true}, sorted(observers, agentNames, adminNames, fixtureList)},
		{"TEST no agents", setup{mode: mcp.ModeTest, noAgents: true}, sorted(observers, fixtureList)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, tt.s)
			if got := c.toolNames(); !slices.Equal(got, tt.want) {
				t.Errorf("tools/list = %v\nwant %v", got, tt.want)
			}
		})
	}
}

// Register skips exactly the tools the mode does not admit (READONLY: the
// ones not read-only; MINIMAL: the ones not essential) and still fails on
// any other error, in every mode.
func TestRegisterSkipsOnlyWhatTheModeRefuses(t *testing.T) {
	mine := func(context.Context, *mcp.CallToolRequest) (any, error) { return "mine", nil }
	for _, mode := range []string{mcp.ModeFull, mcp.ModeReadOnly, mcp.ModeMinimal, mcp.ModeTest} {
		t.Run(mode, func(t *testing.T) {
			newServer := func() *mcp.Server {
				cfg := config.DefaultBase("1")
				cfg.Server.Mode = mode
				cfg.Tools.AdminRegistrationEnabled, cfg.Security.DynamicRegistrationEnabled = true, true
				srv, err := mcp.NewServer(serverOptions(cfg, mcp.Options{}))
				if err != nil {
					t.Fatal(err)
				}
				return srv
			}
			// A clash on a tool every mode admits is an error, never a skip.
			srv := newServer()
			if err := srv.AddTool(mcp.Tool{Name: "health", Handler: mine, Essential: true, Annotations: readOnly("")}); err != nil {
				t.Fatal(err)
			}
			err := Register(srv, Options{})
			if err == nil || errors.Is(err, mcp.ErrNotAdmitted) || !strings.Contains(err.Error(), `"health"`) {
				t.Errorf("Register over an existing health tool = %v, want a duplicate-name error naming it", err)
			}
			// A clash on a tool the mode does not admit is no clash: that
			// built-in is skipped before its name is looked at.
			srv = newServer()
			if err := srv.AddTool(mcp.Tool{Name: "admin_register_tool", Handler: mine, Essential: true, Annotations: readOnly("")}); err != nil {
				t.Fatal(err)
			}
			agents := aacp.NewCoordinator(aacp.Options{MaxPayloadBytes: 1 << 20})
			defer agents.Close(context.Background())
			err = Register(srv, Options{Agents: agents, Admin: true})
			admitsAdmin := mode == mcp.ModeFull || mode == mcp.ModeTest
			if admitsAdmin != (err != nil) {
				t.Errorf("Register over an existing admin_register_tool = %v; the mode admits the admin tools: %v", err, admitsAdmin)
			}
		})
	}
}

// Either admin switch alone leaves the admin tools out.
func TestAdminNeedsBothSwitches(t *testing.T) {
	for _, which := range []string{"tools.adminRegistrationEnabled", "security.dynamicRegistrationEnabled"} {
		t.Run(which, func(t *testing.T) {
			c := newClient(t, setup{policy: config.AdminPolicyLocalStdioOnly, tweak: func(cfg *config.Base) {
				cfg.Tools.AdminRegistrationEnabled = which == "tools.adminRegistrationEnabled"
				cfg.Security.DynamicRegistrationEnabled = which == "security.dynamicRegistrationEnabled"
			}})
			if got, want := c.toolNames(), sorted(observers, agentNames); !slices.Equal(got, want) {
				t.Errorf("tools/list = %v, want %v", got, want)
			}
			c.fails("admin_register_tool", `{"name":"x","description":"d","toolType":"echo"}`, core.CodeNotFound)
		})
	}
}

// Every built-in is listed with a description, an object input schema, a
// read-only hint true exactly for the tools that change nothing, and an
// output schema exactly where one is promised.
func TestListingMetadata(t *testing.T) {
	c := newClient(t, setup{mode: mcp.ModeTest, admin: true})
	readOnly := map[string]bool{"server_ping": true, "health": true, "agent_get_state": true}
	// health and agent_get_state check their results against a schema they
	// do not list (it costs a model's context and does not help it call).
	withOutput := map[string]bool{"server_ping": true,
		"admin_register_tool": true, "admin_unregister_tool": true, "echo": true, "lookup20": true,
		"demo_elicit": true, "demo_progress": true, "demo_roots": true, "demo_sample": true, "demo_touch": true}
	for _, tool := range c.tools() {
		name := tool["name"].(string)
		if d, _ := tool["description"].(string); len(d) < 20 {
			t.Errorf("%s: description %q is too thin", name, d)
		}
		in, _ := tool["inputSchema"].(map[string]any)
		if in["type"] != "object" {
			t.Errorf("%s: inputSchema root is not an object: %v", name, in)
		}
		ann, _ := tool["annotations"].(map[string]any)
		if (ann["readOnlyHint"] == true) != readOnly[name] { // absent is MCP's default, false
			t.Errorf("%s: readOnlyHint = %v, want %v", name, ann["readOnlyHint"], readOnly[name])
		}
		if _, has := tool["outputSchema"]; has != withOutput[name] {
			t.Errorf("%s: has outputSchema = %v, want %v", name, has, withOutput[name])
		}
	}
}

func TestFixtureAgentsOnlyInTest(t *testing.T) {
	test := newClient(t, setup{mode: mcp.ModeTest})
	if got := test.agents.AgentIDs(); !slices.Equal(got, []string{"counter", "echo"}) {
		t.Errorf("TEST agents = %v, want [counter echo]", got)
	}
	for _, mode := range []string{mcp.ModeFull, mcp.ModeReadOnly, mcp.ModeMinimal} {
		c := newClient(t, setup{mode: mode})
		if got := c.agents.AgentIDs(); len(got) != 0 {
			t.Errorf("%s agents = %v, want none", mode, got)
		}
	}
}

func TestRegisterTwiceFails(t *testing.T) {
	c := newClient(t, setup{})
	err := Register(c.srv, Options{})
	if err == nil {
		t.Fatal("a second Register succeeded; want a duplicate-name error")
	}
	if e := core.AsError(err); e.Code != core.CodeInvalidArgument {
		t.Errorf("code = %s, want INVALID_ARGUMENT (%v)", e.Code, err)
	}
	if err := Register(nil, Options{}); err == nil {
		t.Error("Register(nil) succeeded")
	}
}
