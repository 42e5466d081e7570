// Package aacptools exposes durable agent-to-agent messaging (package
// aacp/broker) to AI clients as MCP tools. Several AI sessions, each
// running its own mcprt process, coordinate by pointing their processes at
// one data directory: the journal there is shared, so a message one
// session sends is received by another.
//
//	svc, err := aacptools.New(aacptools.Options{Config: cfg.AACP, Logger: logger})
//	if err != nil { ... }          // a *core.ConfigError naming the key
//	defer svc.Close()
//	err = svc.Register(srv)        // the nine aacp_* tools and aacp://inbox/{agentId}
//
// # Identity
//
// Every tool acts for an agent. By default it is the process's own agent:
// aacp.agentId (MCPRT_AACP_AGENT_ID), or, when that is empty,
// "mcprt-{host}-{pid}", which changes at every start — so give each
// session a fixed id if it must find its unanswered messages after a
// restart. The first call that acts for the own agent registers it with
// aacp.agentType (AdHoc by default); aacp_register_agent registers it
// with another type, or registers further agents that this process then
// hosts. Every tool takes an optional agentId naming the agent to act for;
// it must be one this process registered (else E_ROUTING_001). One agent
// is hosted by one process at a time: a second process registering the
// same id gets E_ROUTING_003 until the first exits.
//
// # Lazy start
//
// New opens nothing. The broker, and with it the data directory
// (aacp.dataDir, ".mcprt" relative to the working directory unless
// configured), is opened by the first tool call, so a server that never
// messages creates no file. Once open, the broker runs its background
// work on the real clock: it follows each hosted agent's inbox (file
// notifications on Linux, polling elsewhere), retransmits what was not
// acknowledged in time, and purges what expired. Close stops it.
//
// # The tools
//
//	aacp_register_agent {agentId?, type, supportedVersions?, capabilities?}
//	aacp_agents         {agentId?, type?}                 read-only
//	aacp_send           {agentId?, receiver:{agentId, type?}, messageType, payload,
//	                     priority?, correlationId?, requestId?, ttlSeconds?, tags?}
//	aacp_receive        {agentId?, waitMs?, max?, messageTypes?}   read-only
//	aacp_ack            {agentId?, messageId, status, notes?}
//	aacp_nack           {agentId?, messageId, reason, errorCode?, canRetry}   destructive
//	aacp_status         {agentId?, messageId | requestId}   read-only
//	aacp_dead_letters   {agentId?, limit?}                 read-only
//	aacp_requeue        {agentId?, messageId}
//
// Their results are the broker's outputs (see broker's types), listed as
// output schemas. aacp_send returns once the message is durable.
// aacp_receive waits at most waitMs (up to a minute) for a first message,
// and never past its call's deadline (its tool timeout is 65 s): when the
// deadline comes first it returns what it has, possibly nothing, rather
// than TIMEOUT. It is annotated read-only because it writes nothing:
// which messages were handed out is kept in memory only (after a restart,
// unanswered messages are handed out again).
//
// # The inbox resource
//
// Register also registers the resource template aacp://inbox/{agentId}
// (unless the server's mode admits no aacp_* tool). Reading
// aacp://inbox/{agentId} returns, as application/json, the agent's
// unfinished inbox: {agentId, messages, queued, handedOut, truncated?},
// where messages are the envelopes (with redelivered? and state "queued"
// or "handedOut") of the messages waiting for aacp_receive, in the order
// it would return them, then of those it returned that are not answered
// yet; at most 100. A read hands nothing out and answers nothing. The
// agent must be one this process hosts: the own agent (a read registers
// it, as any aacp_* call does, and opens the journal if no call did) or
// one registered with aacp_register_agent; any other id, and an unusable
// one, is -32002 (NOT_FOUND) saying which. A session subscribed to an
// inbox (resources/subscribe) gets notifications/resources/updated for
// it whenever a new message for that agent arrives, from any process;
// handing out and answering send none. completion/complete proposes the
// own agent and the registered agents for agentId.
//
// # Errors
//
// The input schemas check only JSON types and the known keys
// (INVALID_ARGUMENT otherwise); values are checked by the broker so that
// a bad value carries the protocol's catalogue code: E_VALIDATION_001
// (missing), _002 (wrong type), _003 (unknown enumeration value: agent
// type, message type, priority, status), _004 (other rules), _005 (an
// envelope over 1 MiB); E_ROUTING_001 (no such registered agent),
// _002 (an agent id unusable as a file name: "../x", NUL bytes, "_to_"),
// _003 (the journal cannot be written, or another process hosts the
// agent), _004 (a partial broadcast); E_PROTOCOL_001 (no common version),
// _003 (bad requestId or correlationId), _004 (expired); NOT_FOUND for
// unknown message ids. Arguments over tools.maxPayloadBytes are refused
// before the tool runs (RESOURCE_EXHAUSTED). Agent ids become file names
// only after they pass the id rule, so no input reaches a path outside
// the data directory.
package aacptools
