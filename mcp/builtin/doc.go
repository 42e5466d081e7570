// Package builtin holds the tools that ship with mcprt (SPEC §8): the
// observers server_ping and health, the agent tools, the admin tools of
// dynamic registration, and the fixtures of mode TEST. Register puts them
// on an mcp.Server; the server's configuration and mode decide which.
//
//	srv, err := mcp.NewServer(mcp.Options{Config: &cfg, Logger: logger})
//	if err != nil {
//		return err
//	}
//	agents := aacp.NewCoordinator(aacp.Options{MaxPayloadBytes: cfg.Tools.MaxPayloadBytes})
//	defer agents.Close(context.Background())
//	if err := builtin.Register(srv, builtin.Options{Agents: agents, Version: version}); err != nil {
//		return err
//	}
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
//     is usually far below a millisecond. status follows SPEC §8.1.
//   - agent_send_message {targetAgentId, message:{type, payload?}} → the
//     agent's response as it returned it (an object becomes
//     structuredContent; anything else is only text). message holds no
//     other keys. Unknown agent → NOT_FOUND; full queue or oversized
//     message → RESOURCE_EXHAUSTED; the agent's own errors keep their code
//     (a plain error becomes INTERNAL).
//   - agent_list {} → {agentIds, truncated}: sorted, at most
//     MaxListedAgents ids.
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
// health, agent_list and agent_get_state are read-only, so mode READONLY
// keeps them; MINIMAL keeps only server_ping and health. The agent tools
// exist only when Options.Agents is set.
//
// # Dynamic registration
//
// The admin tools exist only when tools.adminRegistrationEnabled and
// security.dynamicRegistrationEnabled are both true. Every call first
// applies tools.adminPolicy.mode: deny_all refuses (UNAUTHORIZED),
// local_stdio_only allows stdio only, token refuses over stdio (it is
// reserved for HTTP). No code is uploaded: toolType picks a built-in
// handler and its canonical input schema —
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
// matter); otherwise, and for an unknown toolType, an invalid name or a
// name already taken, the answer is INVALID_ARGUMENT. Only dynamically
// registered tools can be unregistered: a built-in name is
// INVALID_ARGUMENT, an unknown one NOT_FOUND. Each registration and
// removal is logged at warn with name and toolType, and sessions get
// notifications/tools/list_changed.
//
// # TEST fixtures
//
// In mode TEST, Register adds noop, echo, sleep, fail, panic, big_result
// and unserializable (SPEC §8.3; see each tool's description) and
// registers the fixture agents "echo" (aacp.EchoAgent) and "counter"
// (aacp.CounterAgent) on Options.Agents. sleep takes ms up to one day and
// big_result bytes up to 256 MiB. Outside TEST no agents are registered.
package builtin
