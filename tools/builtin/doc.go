// Package builtin holds the tools that ship with mcprt: the observers
// server_ping and health, the agent tools, and the admin tools of dynamic
// registration. Register puts them on an mcp.Server; its Options say
// which are offered, and the server's mode admits each by what the tool
// declares (read-only, essential).
//
//	srv, err := mcp.NewServer(mcp.Options{Logger: logger})
//	if err != nil {
//		return err
//	}
//	agents := aacp.NewCoordinator(aacp.Options{MaxPayloadBytes: srv.Limits().MaxPayloadBytes})
//	defer agents.Close(context.Background())
//	if err := builtin.Register(srv, builtin.Options{Agents: agents, Version: version}); err != nil {
//		return err
//	}
//
// Every tool is registered with mcp.AddTypedTool: its handler takes a Go
// input type and returns a Go result type, and a schema is derived from
// those types unless the tool's contract says more than a type can (an
// enum, a bound, a non-empty string, a const, "any object"): then the
// schema is written by hand, and a test keeps it and the type in step.
// Tools whose result is not always an object, or that never had one, list
// no output schema. The listing of every built-in tool is pinned by a test
// (testdata/tools_list.golden), so that any change to it is deliberate.
//
// # The tools
//
//   - server_ping {} → {version, mode, uptime_ms}. version is
//     Options.Version (the configured server.version when empty).
//   - health {} → {server:{name,version}, config:{toolTimeoutMs,
//     maxConcurrentExecutions, maxPayloadBytes, maxStateBytes},
//     resources:{memoryUsageBytes, schedLatencyP99Ms, concurrentExecutions,
//     maxConcurrentExecutions}, status}. schedLatencyP99Ms is a number with
//     a fraction (microsecond precision): the runtime's scheduler latency
//     is usually far below a millisecond. status is core.Health's verdict:
//     unhealthy when every concurrency slot is busy, the latency p99 is
//     over 500 ms or at least 3 calls in a row were refused with
//     RESOURCE_EXHAUSTED; degraded over 80% of the slots or 100 ms;
//     healthy otherwise.
//   - agent_send_message {targetAgentId, message:{type, payload?}} → the
//     agent's response as it returned it (an object becomes
//     structuredContent; anything else is only text). message holds no
//     other keys. Unknown agent → NOT_FOUND; full queue or oversized
//     message → RESOURCE_EXHAUSTED; the agent's own errors keep their code
//     (a plain error becomes INTERNAL).
//   - agent_get_state {agentId} → {agentId, state, truncated}: the state
//     with logging.redactKeys values replaced by "[REDACTED]" (and string
//     control characters escaped, as in logs). When its JSON is over
//     tools.maxStateBytes, state keeps the longest run of its keys in
//     sorted order whose JSON fits (so possibly {}) and truncated is true;
//     a key is kept or dropped whole, never cut inside.
//   - admin_register_tool {name, description, toolType, inputSchema?,
//     version?} → {registered: true, name, toolType} and
//     admin_unregister_tool {name} → {unregistered: true, name}, see below.
//
// server_ping and health are observers (mcp.Tool.Observer): they take no
// concurrency slot, so they answer while every slot is busy. server_ping,
// health and agent_get_state are read-only, so mode READONLY keeps them; server_ping and health are essential, so MINIMAL keeps them
// and nothing else. Register skips the tools the mode does not admit
// (mcp.ErrNotAdmitted) and fails on any other registration error. The
// agent tools exist only when Options.Agents is set.
//
// # Dynamic registration
//
// The admin tools exist only with Options.Admin (mcprt sets it when
// tools.adminRegistrationEnabled and security.dynamicRegistrationEnabled
// are both true). Every call first applies Options.AdminPolicy
// (tools.adminPolicy.mode) to the transport of the call's session
// (mcp.Session.Transport): deny_all refuses; local_stdio_only allows
// "stdio" only; token refuses over stdio, being reserved for HTTP where an
// admin token will be checked (until then it refuses there too). A refusal
// is UNAUTHORIZED, before any argument is looked at. No code is uploaded:
// toolType picks a built-in handler and its canonical input schema —
//
//	echo        {"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}
//	health      {"type":"object","properties":{},"additionalProperties":false}
//	agentProxy  {"type":"object","properties":{"targetAgentId":{"type":"string"},"message":{"type":"object"}},"required":["targetAgentId","message"]}
//
// An echo tool returns {message}; a health tool returns what health does
// but is an ordinary tool (it takes a slot); an agentProxy tool behaves
// like agent_send_message (its message must be {type, payload?}) and needs
// Options.Agents (NOT_IMPLEMENTED without). A supplied inputSchema must
// equal the canonical one after both are decoded and re-encoded with
// sorted keys (so key order, whitespace and number spelling do not
// matter); otherwise, and for an unknown toolType, an invalid name, a name
// already taken or a tool the mode would not admit, the answer is
// INVALID_ARGUMENT.
//
// Register keeps, for the admin tools it registers, a record of the tools
// they registered and of their toolTypes. Only those can be unregistered:
// any other registered tool (built in or the program's own) is
// INVALID_ARGUMENT, an unknown name NOT_FOUND. Each registration and
// removal is logged at warn with name and toolType, and sessions get
// notifications/tools/list_changed.
//
// The fixtures of mode TEST (noop, echo, sleep, …, the demo and
// conformance fixtures) are package fixtures'.
package builtin
