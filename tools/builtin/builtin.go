package builtin

import (
	"fmt"

	"github.com/mcprt/mcprt/aacp"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// Options configures Register.
type Options struct {
	// Agents is the agent coordinator the agent tools (agent_send_message,
	// agent_get_state) and dynamic agentProxy tools talk to.
	// Nil means no agent tools are registered, and admin_register_tool
	// refuses toolType agentProxy with NOT_IMPLEMENTED.
	Agents *aacp.Coordinator
	// Version is the build version that server_ping reports. Empty means
	// the server's (mcp.Server.Info).
	Version string
	// Admin registers admin_register_tool and admin_unregister_tool
	// (mcprt turns it on when tools.adminRegistrationEnabled and
	// security.dynamicRegistrationEnabled are both true).
	Admin bool
	// AdminPolicy is who may call the admin tools: config.AdminPolicyDenyAll
	// (the default when empty), AdminPolicyLocalStdioOnly or
	// AdminPolicyToken (tools.adminPolicy.mode).
	AdminPolicy string
	// MaxStateBytes bounds agent_get_state's state, in bytes of JSON
	// (tools.maxStateBytes; 256 KiB when 0).
	MaxStateBytes int
	// RedactKeys are the keys whose values agent_get_state replaces with
	// "[REDACTED]" (logging.redactKeys); nil means
	// core.DefaultRedactKeys().
	RedactKeys []string
	// AdminAuthorized reports whether a session was opened with the admin
	// token (the Streamable HTTP transport knows); under
	// tools.adminPolicy.mode=token the admin tools run only for such
	// sessions. Nil means none is.
	AdminAuthorized func(*mcp.Session) bool
	// MessagingHealth, when set, adds its result to the health tool's
	// result as "messaging" (the NATS backend: connection, cluster, lag).
	MessagingHealth func() any
}

// Register registers the built-in tools on srv. opts decides which are
// offered:
//
//   - server_ping and health, always;
//   - agent_send_message and agent_get_state, when opts.Agents is not
//     nil (agent_list, which lists them, is package tools/domain's);
//   - admin_register_tool and admin_unregister_tool, only when
//     opts.Admin is set.
//
// The fixtures of mode TEST are package fixtures' (fixtures.Register).
//
// The server's mode then admits what each tool declares it is: READONLY
// keeps the read-only ones (server_ping, health,
// agent_get_state), MINIMAL the essential ones (server_ping, health).
// Register skips a tool the mode does not admit (mcp.ErrNotAdmitted).
//
// Register fails, naming the tool or agent, on any other registration
// error, such as a name already taken (for instance when Register runs
// twice on one server); what it registered before the
// failure stays registered. Call it before serving.
func Register(srv *mcp.Server, opts Options) error {
	if srv == nil {
		return core.NewError(core.CodeInvalidArgument, "builtin.Register: the server is nil; pass the *mcp.Server to register the built-in tools on")
	}
	if opts.MaxStateBytes == 0 {
		opts.MaxStateBytes = DefaultMaxStateBytes
	}
	if opts.RedactKeys == nil {
		opts.RedactKeys = core.DefaultRedactKeys()
	}
	if opts.AdminPolicy == "" {
		opts.AdminPolicy = config.AdminPolicyDenyAll
	}
	tools := observerTools(srv, opts)
	if opts.Agents != nil {
		tools = append(tools, agentTools(opts, opts.Agents)...)
	}
	if opts.Admin {
		tools = append(tools, adminTools(srv, opts, newDynamicTools())...)
	}
	if _, err := srv.AddTools(tools...); err != nil {
		return fmt.Errorf("builtin: %w", err)
	}
	return nil
}

// DefaultMaxStateBytes is Options.MaxStateBytes' default: 256 KiB.
const DefaultMaxStateBytes = 256 << 10

// readOnly returns annotations for a tool that changes nothing.
func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false)}
}
