package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/mcprt/mcprt/internal/jsontext"
	"strings"
	"sync"

	"github.com/mcprt/mcprt/aacp"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// registerArgs are admin_register_tool's arguments. Its input schema is
// written by hand (inputSchema must be an object, which no Go type
// derives to exactly).
type registerArgs struct {
	Name        string          `json:"name" jsonschema:"The new tool's name: 1-128 characters of A-Z a-z 0-9 _ - . not already taken."`
	Description string          `json:"description" jsonschema:"What the new tool does, for the model that will call it."`
	ToolType    string          `json:"toolType" jsonschema:"The built-in handler the tool runs: echo, health or agentProxy."`
	InputSchema json.RawMessage `json:"inputSchema,omitempty" jsonschema:"Optional; if given it must equal the toolType's canonical input schema."`
	Version     string          `json:"version,omitempty" jsonschema:"Optional version string listed with the tool."`
}

// registerResult is admin_register_tool's result.
type registerResult struct {
	Registered bool   `json:"registered"`
	Name       string `json:"name"`
	ToolType   string `json:"toolType"`
}

// unregisterArgs are admin_unregister_tool's arguments; its input schema is
// derived from them.
type unregisterArgs struct {
	Name string `json:"name" jsonschema:"The name of a tool registered by admin_register_tool."`
}

// unregisterResult is admin_unregister_tool's result.
type unregisterResult struct {
	Unregistered bool   `json:"unregistered"`
	Name         string `json:"name"`
}

// echoMessage is both the arguments and the result of dynamic echo
// tools; their output schema is derived from it.
type echoMessage struct {
	Message string `json:"message"`
}

// echoTool answers {message} with {message}.
func echoTool(_ context.Context, _ *mcp.CallToolRequest, in echoMessage) (echoMessage, error) {
	return in, nil
}

// dynamicTools records the tools admin_register_tool registered: their
// names and toolTypes. Each Register call that offers the admin tools has
// its own. mu also serialises registrations and removals, so that the
// record and the server's registry change together.
type dynamicTools struct {
	maxState int // Options.MaxStateBytes, for dynamic health tools
	mu       sync.Mutex
	tools    map[string]dynamicTool // by name; guarded by mu
}

// dynamicTool is the record of one dynamically registered tool.
type dynamicTool struct {
	toolType string
	// mark is the tool's Annotations pointer, fresh for each registration:
	// a tool of the same name that is not this registration (the program
	// removed it and registered its own) has another, and is not dynamic.
	mark *mcp.ToolAnnotations
}

// newDynamicTools returns an empty record.
func newDynamicTools() *dynamicTools {
	return &dynamicTools{tools: map[string]dynamicTool{}}
}

// adminTools returns admin_register_tool and admin_unregister_tool, which
// record what they register in dyn. Dynamic agentProxy tools route to
// agents, which may be nil.
func adminTools(srv *mcp.Server, opts Options, dyn *dynamicTools) []mcp.ToolDef {
	destructive := func(title string, idempotent bool) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: mcp.Bool(false), DestructiveHint: mcp.Bool(true),
			IdempotentHint: mcp.Bool(idempotent), OpenWorldHint: mcp.Bool(false)}
	}
	policy, adminAuthorized, agents := opts.AdminPolicy, opts.AdminAuthorized, opts.Agents
	dyn.maxState = opts.MaxStateBytes
	authorize := func(_ context.Context, req *mcp.CallToolRequest) error {
		tokenOK := adminAuthorized != nil && req.Session != nil && adminAuthorized(req.Session)
		return enforcePolicy(policy, transportOf(req), tokenOK)
	}
	return []mcp.ToolDef{
		mcp.Typed(mcp.Tool{
			Name:  "admin_register_tool",
			Title: "Register a tool",
			Description: "Registers a new tool that runs one of the server's built-in handlers (no code is " +
				"uploaded): toolType \"echo\" returns {message}; \"health\" returns the health report; " +
				"\"agentProxy\" sends {targetAgentId, message} to an in-process agent. The tool gets its type's " +
				"canonical input schema; an inputSchema given here must equal it. Returns {registered, name, " +
				"toolType}; clients get notifications/tools/list_changed. Allowed only as " +
				"tools.adminPolicy.mode permits (UNAUTHORIZED otherwise).",
			InputSchema:  adminRegisterInput,
			OutputSchema: adminRegisterOutput,
			Annotations:  destructive("Register a tool", false),
			Authorize:    authorize,
		}, func(ctx context.Context, _ *mcp.CallToolRequest, in registerArgs) (registerResult, error) {
			return dyn.register(ctx, srv, agents, in)
		}),
		mcp.Typed(mcp.Tool{
			Name:  "admin_unregister_tool",
			Title: "Unregister a tool",
			Description: "Removes a tool that admin_register_tool registered. Returns {unregistered, name}; " +
				"clients get notifications/tools/list_changed. NOT_FOUND when no tool has that name, " +
				"INVALID_ARGUMENT when the tool is built in. Allowed only as tools.adminPolicy.mode permits " +
				"(UNAUTHORIZED otherwise).",
			OutputSchema: adminUnregisterOutput,
			Annotations:  destructive("Unregister a tool", false),
			Authorize:    authorize,
		}, func(ctx context.Context, _ *mcp.CallToolRequest, in unregisterArgs) (unregisterResult, error) {
			return dyn.unregister(ctx, srv, in.Name)
		}),
	}
}

// transportOf names the transport req arrived on ("" when it has no
// session, which the policy refuses like any transport but stdio).
func transportOf(req *mcp.CallToolRequest) string {
	if req == nil || req.Session == nil {
		return ""
	}
	return req.Session.Transport()
}

// enforcePolicy applies tools.adminPolicy.mode to an admin call over
// transport: deny_all refuses, local_stdio_only admits stdio only, token
// refuses over stdio (it is reserved for HTTP, where an admin token will be
// checked) and, until that check exists, everywhere else too; an unknown
// mode refuses. Every refusal is UNAUTHORIZED.
func enforcePolicy(mode, transport string, adminToken bool) error {
	switch mode {
	case config.AdminPolicyDenyAll:
		return core.NewError(core.CodeUnauthorized, "dynamic registration is disabled by tools.adminPolicy.mode=deny_all; "+
			"set it to local_stdio_only to allow it over stdio")
	case config.AdminPolicyLocalStdioOnly:
		if transport == mcp.TransportStdio {
			return nil
		}
		return core.Errorf(core.CodeUnauthorized, "tools.adminPolicy.mode=local_stdio_only allows admin tools over stdio only, "+
			"and this connection uses %q; call them over a local stdio connection", clip(transport))
	case config.AdminPolicyToken:
		if transport == mcp.TransportStdio {
			return core.NewError(core.CodeUnauthorized, "tools.adminPolicy.mode=token is reserved for the HTTP transport "+
				"and refuses admin calls over stdio; set it to local_stdio_only to allow them over stdio")
		}
		if adminToken {
			return nil
		}
		return core.Errorf(core.CodeUnauthorized, "tools.adminPolicy.mode=token allows admin calls only on a session "+
			"opened with the admin token (Authorization: Bearer <the value of tools.adminPolicy.tokenEnvVar>); "+
			"this %q session was not", clip(transport))
	}
	return core.Errorf(core.CodeUnauthorized, "unknown tools.adminPolicy.mode %q refuses admin calls; "+
		"use deny_all, local_stdio_only or token", mode)
}

// register is admin_register_tool once the policy allowed it.
func (d *dynamicTools) register(ctx context.Context, srv *mcp.Server, agents *aacp.Coordinator, in registerArgs) (registerResult, error) {
	if !validToolName(in.Name) {
		return registerResult{}, core.Errorf(core.CodeInvalidArgument, "invalid tool name %q: use 1-%d characters of A-Z a-z 0-9 _ - .",
			clip(in.Name), maxToolNameLen)
	}
	schema, ok := canonicalSchemas[in.ToolType]
	if !ok {
		return registerResult{}, core.Errorf(core.CodeInvalidArgument, "unknown toolType %q; use one of %s",
			clip(in.ToolType), strings.Join(toolTypes, ", ")).WithDetail("allowed", toolTypes)
	}
	if in.InputSchema != nil && !sameJSON(in.InputSchema, schema) {
		return registerResult{}, core.Errorf(core.CodeInvalidArgument, "inputSchema does not equal the canonical schema of toolType %q; "+
			"omit inputSchema or send exactly %s (key order and whitespace do not matter)", in.ToolType, schema).
			WithDetail("expected", schema)
	}
	t := mcp.Tool{Name: in.Name, Description: in.Description, InputSchema: schema, Version: in.Version}
	var dynamic mcp.ToolDef
	switch in.ToolType {
	case toolTypeEcho:
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false)}
		dynamic = mcp.Typed(t, echoTool)
	case toolTypeHealth:
		t.OutputSchema = healthOutput
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false)}
		dynamic = mcp.Typed(t, healthTool(srv, d.maxState))
	case toolTypeAgentProxy:
		if agents == nil {
			return registerResult{}, core.NewError(core.CodeNotImplemented, "toolType agentProxy needs an agent coordinator, "+
				"and this server has none; use toolType echo or health")
		}
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(false), DestructiveHint: mcp.Bool(false),
			OpenWorldHint: mcp.Bool(false)}
		dynamic = mcp.Typed(t, proxyTool(agents))
	}
	d.mu.Lock()
	added, err := srv.AddTools(dynamic)
	if err == nil && len(added) == 0 {
		err = mcp.ErrNotAdmitted // AddTools skips it; here it is the caller's error
	}
	if err == nil {
		d.tools[in.Name] = dynamicTool{toolType: in.ToolType, mark: t.Annotations}
	}
	d.mu.Unlock()
	if errors.Is(err, mcp.ErrNotAdmitted) {
		return registerResult{}, core.Errorf(core.CodeInvalidArgument, "the server's mode %s does not admit tool %q of toolType %q",
			srv.Mode(), in.Name, in.ToolType)
	}
	if err != nil {
		return registerResult{}, err
	}
	mcp.Logger(ctx).Warn("dynamic tool registered", "name", in.Name, "toolType", in.ToolType)
	return registerResult{Registered: true, Name: in.Name, ToolType: in.ToolType}, nil
}

// unregister is admin_unregister_tool once the policy allowed it.
func (d *dynamicTools) unregister(ctx context.Context, srv *mcp.Server, name string) (unregisterResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	registered, ok := srv.LookupTool(name)
	if !ok {
		delete(d.tools, name) // removed behind our back (mcp.Server.RemoveTool): forget it
		return unregisterResult{}, core.Errorf(core.CodeNotFound, "no tool named %q is registered; tools/list shows the registered tools", clip(name))
	}
	rec, ok := d.tools[name]
	if !ok || rec.mark != registered.Annotations {
		delete(d.tools, name)
		return unregisterResult{}, core.Errorf(core.CodeInvalidArgument, "tool %q is built in, not registered by admin_register_tool, "+
			"so it cannot be unregistered; only dynamically registered tools can", name)
	}
	if err := srv.RemoveTool(name); err != nil {
		return unregisterResult{}, err
	}
	delete(d.tools, name)
	mcp.Logger(ctx).Warn("dynamic tool unregistered", "name", name, "toolType", rec.toolType)
	return unregisterResult{Unregistered: true, Name: name}, nil
}

// maxToolNameLen is the longest tool name.
const maxToolNameLen = 128

// validToolName reports whether name is 1-128 characters of
// A-Z a-z 0-9 _ - . (the names mcp.Server.AddTool accepts).
func validToolName(name string) bool {
	if len(name) == 0 || len(name) > maxToolNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// clip shortens a client-supplied string for an error message, never
// inside a character.
func clip(s string) string { return core.Clip(s, jsontext.MaxEcho) }
