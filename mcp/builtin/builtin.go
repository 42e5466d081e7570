package builtin

import (
	"fmt"

	"github.com/mcprt/mcprt/aacp"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// Options configures Register.
type Options struct {
	// Agents is the agent coordinator the agent tools (agent_send_message,
	// agent_list, agent_get_state) and dynamic agentProxy tools talk to;
	// in mode TEST the fixture agents "echo" and "counter" are registered
	// on it. Nil means no agent tools are registered, no fixture agents
	// either, and admin_register_tool refuses toolType agentProxy with
	// NOT_IMPLEMENTED.
	Agents *aacp.Coordinator
	// Version is the build version that server_ping reports. Empty means
	// the configured server.version.
	Version string
}

// Register registers the built-in tools on srv, as SPEC §8 and §9 say.
// The server's configuration decides which:
//
//   - server_ping and health, always;
//   - agent_send_message, agent_list and agent_get_state, when
//     opts.Agents is not nil;
//   - admin_register_tool and admin_unregister_tool, only when
//     tools.adminRegistrationEnabled and security.dynamicRegistrationEnabled
//     are both true;
//   - in mode TEST, the fixture tools noop, echo, sleep, fail, panic,
//     big_result and unserializable, and the fixture agents echo and
//     counter on opts.Agents.
//
// The server's mode then admits what it lists (mcp.Server.AddTool skips
// what the mode does not admit): READONLY keeps server_ping, health,
// agent_list and agent_get_state; MINIMAL keeps server_ping and health.
//
// Register fails, naming the tool or agent, when a name is already taken
// (for instance when Register runs twice on one server or coordinator);
// what it registered before the failure stays registered. Call it before
// serving.
func Register(srv *mcp.Server, opts Options) error {
	if srv == nil {
		return core.NewError(core.CodeInvalidArgument, "builtin.Register: the server is nil; pass the *mcp.Server to register the built-in tools on")
	}
	cfg := srv.Config()
	tools := observerTools(srv, opts)
	if opts.Agents != nil {
		tools = append(tools, agentTools(srv, opts.Agents)...)
	}
	if adminEnabled(cfg) {
		tools = append(tools, adminTools(srv, opts.Agents)...)
	}
	if cfg.Server.Mode == core.ModeTest {
		tools = append(tools, fixtureTools()...)
	}
	for _, t := range tools {
		if err := srv.AddTool(t); err != nil {
			return fmt.Errorf("builtin: register tool %q: %w", t.Name, err)
		}
	}
	if cfg.Server.Mode == core.ModeTest && opts.Agents != nil {
		for _, a := range []struct {
			id string
			h  aacp.Handler
		}{{"echo", aacp.EchoAgent()}, {"counter", aacp.CounterAgent()}} {
			if err := opts.Agents.RegisterAgent(a.id, a.h); err != nil {
				return fmt.Errorf("builtin: register fixture agent %q: %w", a.id, err)
			}
		}
	}
	return nil
}

// adminEnabled reports whether the admin tools exist (SPEC §8.2): both
// switches must be on.
func adminEnabled(cfg core.Config) bool {
	return cfg.Tools.AdminRegistrationEnabled && cfg.Security.DynamicRegistrationEnabled
}

// readOnly returns annotations for a tool that changes nothing.
func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false)}
}
