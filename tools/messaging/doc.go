// Package messaging exposes durable agent-to-agent messaging (package
// aacp/broker) to AI clients as MCP tools. Several AI sessions, each
// running its own mcprt process, coordinate by pointing their processes at
// one data directory: the journal there is shared, so a message one
// session sends is received by another.
//
//	svc, err := messaging.New(messaging.Options{Config: cfg.AACP, Logger: logger})
//	if err != nil { ... }          // a *setting.Error naming the key
//	defer svc.Close()
//	err = svc.Register(srv)        // the fifteen aacp_* tools and aacp://inbox/{agentId}
//
// # Identity: one agent per session
//
// Every tool acts for an agent, and each MCP session (a stdio connection,
// or each HTTP session of one `mcprt --http`) has its own:
//
//   - aacp_register_agent {agentId?, type} sets the session's agent (the
//     last registration wins; an agent registered earlier stays the
//     session's, usable by name through agentId). The agent is hosted by
//     this process, written to the shared registry, and resumes its
//     unanswered messages.
//   - A session that never registered acts as the process's default
//     agent: aacp.agentId (MCPRT_AACP_AGENT_ID), registered with
//     aacp.agentType on first use; or, when that is empty, a made-up
//     "mcprt-{host}-{pid}" that is hosted but never written to the
//     registry (it can send and hear answers; no one can address it).
//     Only one session at a time holds the default: over HTTP the other
//     sessions must register their own id.
//   - An agent another live session of this process holds is refused
//     (E_ROUTING_003, naming the holder's connection and client), and so
//     is one another process hosts (E_ROUTING_003): never a silent
//     takeover. Every tool's optional agentId must name an agent of the
//     calling session (E_ROUTING_001 otherwise).
//   - When a session ends, its agents are released: they stay
//     registered and show offline until a session registers them again
//     (resuming their identity) or they are retired.
//
// Caller, Presence and Tell are the contract of the coordination tools
// (reservations, the work queue): Caller is the calling session's agent,
// Presence an agent's state (online, idle, stale, offline, unknown) and
// last-seen time, Tell a durable notice from "_broker" into an agent's
// inbox (type CUSTOM_NOTICE, payload {subject, ...}).
//
// # Presence
//
// Every tool call of a session with an agent is that agent's heartbeat
// (AuditSink wraps the server's audit sink; the call's path touches
// memory only), as is aacp_heartbeat {status?, note?}. Heartbeats are
// written to <aacp.dataDir>/presence/<agentId>.json at most once a second
// per agent (aacp_heartbeat at once), so every process on the data
// directory sees them; with Options.Presence (the binary passes
// natsengine/presencekv's bucket whenever a backend is on NATS) they go
// there instead and every machine sees them, and a session's end marks
// the record released (offline everywhere). Presence of an agent this
// process's registry does not list (messaging on files, the agent on
// another machine) is graded from its shared record alone. An agent a
// session hosts is online until
// aacp.idleAfterMs (2 min) without a call, then idle, then stale after
// aacp.staleAfterMs (15 min); an agent no session hosts is offline, and
// once its last sign of life is older than aacp.staleAfterMs it is
// retired from the registry by the next listing (aacp_agents, Presence).
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
//	aacp_agents         {agentId?, type?}                        read-only
//	aacp_heartbeat      {status?, note?}
//	aacp_send           {agentId?, receiver:{agentId, type?}, messageType, payload,
//	                     priority?, correlationId?, requestId?, ttlSeconds?, tags?}
//	aacp_receive        {agentId?, waitMs?, max?, messageTypes?}  takes messages
//	aacp_peek           {agentId?}                               read-only
//	aacp_ack            {agentId?, messageId | messageIds, status, notes?}
//	aacp_nack           {agentId?, messageId, reason, errorCode?, canRetry}   destructive
//	aacp_status         {agentId?, messageId | requestId}        read-only
//	aacp_dead_letters   {agentId?, limit?}                       read-only
//	aacp_requeue        {agentId?, messageId}
//	aacp_reply          {agentId?, messageId, text | payload, messageType?, subject?}
//	aacp_thread         {threadId, limit?}                       read-only
//	aacp_search         {query, agentId?, threadId?, messageType?, since?, limit?}   read-only
//	aacp_view           {agentId?, view, limit?}                 read-only
//
// aacp_send also takes subject? (kept as payload.subject) and threadId?
// (the correlation id). Threads and search read the message index
// (store.MessageIndex in <aacp.dataDir>/store): the broker's OnAppend
// hook queues every envelope this process appends, and one writer
// goroutine indexes them in batches, off the send path. Before a query,
// the index is made fresh: this process's queue is written, and every
// channel's mark must reach the channel's last seq (waiting up to 300 ms
// for other processes' writers, then reading the rest from the journal,
// CatchUp). Reindex (`mcprt aacp reindex`) rebuilds it.
//
// Their results are the broker's outputs (see broker's types); the tools
// whose results carry envelopes (receive, peek, status, dead letters)
// list no output schema, to keep tools/list small. aacp_send returns once
// the message is durable. aacp_receive takes messages: taking starts the
// sender's ack timer (see package broker), so it is not read-only and
// mode READONLY leaves it out; aacp_peek shows the inbox without taking.
// aacp_receive waits at most waitMs (up to a minute) for a first message,
// and never past its call's deadline (its tool timeout is 65 s): when the
// deadline comes first it returns what it has, possibly nothing, rather
// than TIMEOUT.
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
// handing out and answering send none. completion/complete proposes for
// agentId only the inboxes this process can read: the default agent and
// the agents its sessions hold.
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
package messaging
