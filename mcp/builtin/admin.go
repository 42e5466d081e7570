package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/mcprt/mcprt/aacp"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// transportStdio is the transport local_stdio_only admits.
const transportStdio = "stdio"

// registerResult is admin_register_tool's result.
type registerResult struct {
	Registered bool   `json:"registered"`
	Name       string `json:"name"`
	ToolType   string `json:"toolType"`
}

// unregisterResult is admin_unregister_tool's result.
type unregisterResult struct {
	Unregistered bool   `json:"unregistered"`
	Name         string `json:"name"`
}

// adminTools returns admin_register_tool and admin_unregister_tool (SPEC
// §8.2). Dynamic agentProxy tools route to agents, which may be nil.
func adminTools(srv *mcp.Server, agents *aacp.Coordinator) []mcp.Tool {
	destructive := func(title string, idempotent bool) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: mcp.Bool(false), DestructiveHint: mcp.Bool(true),
			IdempotentHint: mcp.Bool(idempotent), OpenWorldHint: mcp.Bool(false)}
	}
	return []mcp.Tool{
		{
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
			Authorize:    func(context.Context) error { return enforcePolicy(srv) },
			Handler: func(ctx context.Context, args json.RawMessage) (any, error) {
				return registerDynamic(ctx, srv, agents, args)
			},
		},
		{
			Name:  "admin_unregister_tool",
			Title: "Unregister a tool",
			Description: "Removes a tool that admin_register_tool registered. Returns {unregistered, name}; " +
				"clients get notifications/tools/list_changed. NOT_FOUND when no tool has that name, " +
				"INVALID_ARGUMENT when the tool is built in. Allowed only as tools.adminPolicy.mode permits " +
				"(UNAUTHORIZED otherwise).",
			InputSchema:  adminUnregisterInput,
			OutputSchema: adminUnregisterOutput,
			Annotations:  destructive("Unregister a tool", false),
			Authorize:    func(context.Context) error { return enforcePolicy(srv) },
			Handler: func(ctx context.Context, args json.RawMessage) (any, error) {
				return unregisterDynamic(ctx, srv, args)
			},
		},
	}
}

// enforcePolicy applies tools.adminPolicy.mode to an admin call: deny_all
// refuses, local_stdio_only admits stdio only, token refuses over stdio
// (it is reserved for HTTP); anything else refuses.
func enforcePolicy(srv *mcp.Server) error {
	mode := srv.Config().Tools.AdminPolicy.Mode
	transport := srv.Transport()
	switch mode {
	case core.AdminPolicyDenyAll:
		return core.NewError(core.CodeUnauthorized, "dynamic registration is disabled by tools.adminPolicy.mode=deny_all; "+
			"set it to local_stdio_only to allow it over stdio")
	case core.AdminPolicyLocalStdioOnly:
		if transport == transportStdio {
			return nil
		}
		return core.Errorf(core.CodeUnauthorized, "tools.adminPolicy.mode=local_stdio_only allows admin tools over stdio only, "+
			"and this connection uses %q; call them over a local stdio connection", transport)
	case core.AdminPolicyToken:
		if transport == transportStdio {
			return core.NewError(core.CodeUnauthorized, "tools.adminPolicy.mode=token is reserved for the HTTP transport "+
				"and refuses admin calls over stdio; set it to local_stdio_only to allow them over stdio")
		}
		return core.Errorf(core.CodeUnauthorized, "tools.adminPolicy.mode=token is not implemented for transport %q yet; "+
			"admin calls are refused", transport)
	}
	return core.Errorf(core.CodeUnauthorized, "unknown tools.adminPolicy.mode %q refuses admin calls; "+
		"use deny_all, local_stdio_only or token", mode)
}

// registerDynamic is admin_register_tool once the policy allowed it.
func registerDynamic(ctx context.Context, srv *mcp.Server, agents *aacp.Coordinator, args json.RawMessage) (any, error) {
	var in struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		ToolType    string          `json:"toolType"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Version     string          `json:"version"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, badArguments(err)
	}
	if !validToolName(in.Name) {
		return nil, core.Errorf(core.CodeInvalidArgument, "invalid tool name %q: use 1-%d characters of A-Z a-z 0-9 _ - .",
			clip(in.Name), maxToolNameLen)
	}
	schema, ok := canonicalSchemas[in.ToolType]
	if !ok {
		return nil, core.Errorf(core.CodeInvalidArgument, "unknown toolType %q; use one of %s",
			clip(in.ToolType), strings.Join(toolTypes, ", ")).WithDetail("allowed", toolTypes)
	}
	if in.InputSchema != nil && !sameJSON(in.InputSchema, schema) {
		return nil, core.Errorf(core.CodeInvalidArgument, "inputSchema does not equal the canonical schema of toolType %q; "+
			"omit inputSchema or send exactly %s (key order and whitespace do not matter)", in.ToolType, schema).
			WithDetail("expected", schema)
	}
	t := mcp.Tool{
		Name:        in.Name,
		Description: in.Description,
		InputSchema: schema,
		Version:     in.Version,
	}
	switch in.ToolType {
	case toolTypeEcho:
		t.OutputSchema = echoOutput
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false)}
		t.Handler = echoHandler
	case toolTypeHealth:
		t.OutputSchema = healthOutput
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false)}
		t.Handler = func(context.Context, json.RawMessage) (any, error) { return healthOf(srv), nil }
	case toolTypeAgentProxy:
		if agents == nil {
			return nil, core.NewError(core.CodeNotImplemented, "toolType agentProxy needs an agent coordinator, "+
				"and this server has none; use toolType echo or health")
		}
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(false), DestructiveHint: mcp.Bool(false),
			OpenWorldHint: mcp.Bool(false)}
		t.Handler = func(ctx context.Context, args json.RawMessage) (any, error) {
			return proxyToAgent(ctx, agents, args)
		}
	}
	if err := srv.AddTool(t.MarkDynamic(in.ToolType)); err != nil {
		return nil, err
	}
	if _, ok := srv.LookupTool(in.Name); !ok {
		return nil, core.Errorf(core.CodeInvalidArgument, "the server's mode %s does not admit tool %q of toolType %q",
			srv.Config().Server.Mode, in.Name, in.ToolType)
	}
	mcp.Logger(ctx).Warn("dynamic tool registered", "name", in.Name, "toolType", in.ToolType)
	return registerResult{Registered: true, Name: in.Name, ToolType: in.ToolType}, nil
}

// unregisterDynamic is admin_unregister_tool once the policy allowed it.
func unregisterDynamic(ctx context.Context, srv *mcp.Server, args json.RawMessage) (any, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, badArguments(err)
	}
	t, ok := srv.LookupTool(in.Name)
	if !ok {
		return nil, core.Errorf(core.CodeNotFound, "no tool named %q is registered; tools/list shows the registered tools", clip(in.Name))
	}
	dynamic, toolType := t.Dynamic()
	if !dynamic {
		return nil, core.Errorf(core.CodeInvalidArgument, "tool %q is built in, not registered by admin_register_tool, "+
			"so it cannot be unregistered; only dynamically registered tools can", in.Name)
	}
	if err := srv.RemoveTool(in.Name); err != nil {
		return nil, err
	}
	mcp.Logger(ctx).Warn("dynamic tool unregistered", "name", in.Name, "toolType", toolType)
	return unregisterResult{Unregistered: true, Name: in.Name}, nil
}

// maxToolNameLen is the longest tool name (SPEC §7.1).
const maxToolNameLen = 128

// validToolName reports whether name is 1-128 characters of
// A-Z a-z 0-9 _ - . (SPEC §7.1).
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

// clip shortens a client-supplied string for an error message.
func clip(s string) string {
	const max = maxToolNameLen
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
