// Package mcp is the MCP server of mcprt: sessions and their lifecycle,
// version negotiation, the method table, the tool registry and the
// tools/call pipeline, built on the jsonrpc engine and the core
// foundations. It works over any jsonrpc.Stream: stdio lines, in-memory
// pairs, Streamable HTTP.
//
// The smallest server, over stdio:
//
//	srv, err := mcp.NewServer(mcp.Options{Name: "weather", Version: "1.0.0"})
//	if err != nil { ... }
//	err = mcp.AddTypedTool(srv, mcp.Tool{Name: "forecast", Description: "..."},
//		func(ctx context.Context, req *mcp.CallToolRequest, in ForecastIn) (ForecastOut, error) { ... })
//	err = srv.RunStdio(ctx) // until stdin ends, the client sends shutdown, or ctx is done
//
// # Layers
//
// A Server holds its Options and everything registered; it is shared by
// its sessions and safe for concurrent use. Options has plain fields
// (limits as ints, timeouts as time.Duration, the mode, the tool set):
// every zero field is its default, resolved once by NewServer, so
// Options{} is a working server, and the package reads no configuration
// file and no environment variable. Connect makes a Session over a
// stream; Run connects one, serves it and shuts it down gracefully, and
// Shutdown(ctx, sess) does the shutdown alone, waiting until ctx ends and
// at most Limits.ShutdownTimeout. A Session's connection is driven by an
// unexported jsonrpc.Dispatcher: its route is the lifecycle gate and
// method router, the one place that decides what a request means in the
// session's state.
//
// The key names in parentheses below (tools.pageSize, ...) are the mcprt
// binary's configuration keys of the corresponding Limits fields.
//
// # Lifecycle
//
// A session moves STARTING → INITIALIZING → RUNNING → CLOSED, and only
// through one function. In STARTING only initialize and ping are served;
// initialize negotiates the revision (2024-11-05, 2025-03-26, 2025-06-18,
// 2025-11-25: a requested one is echoed, any other is answered with
// 2025-11-25), keeps the client's capabilities and info, and moves to
// INITIALIZING; notifications/initialized moves to RUNNING. A request other
// than initialize and ping before RUNNING gets -32002 "Not initialized"
// with data {code: "NOT_INITIALIZED", message, correlationId} (the
// connection's correlation id); a second initialize gets -32600. ping is
// answered in every state but CLOSED. shutdown answers {} and closes the
// session. JSON-RPC batches are admitted only under 2025-03-26, the one
// revision that has them. Every error response's data carries a
// correlationId: the client's params._meta.correlationId when it sent one
// (a non-empty string of at most 128 bytes), else the connection's.
//
// A request's protocol revision is a property of the request
// (CallToolRequest.ProtocolVersion): the session's for these revisions.
//
// # Methods
//
// The method table maps each method to its handler, the lifecycle rule
// that gates it, and the capability it implies; initialize advertises the
// capabilities computed from it. Tools live in a registry sorted by name
// and paged with opaque cursors (tools.pageSize per page; a cursor the
// server did not make is -32602); changing it sends
// notifications/tools/list_changed to every running session.
//
// # Tool profiles
//
// Each session sees a ToolSet: the tools its tools/list shows and its
// tools/call finds. It is chosen by profile names (Options.Profiles, and
// "full" for every tool), tool names and name prefixes ending in "*":
// the server's Options.Tools (nil: every tool; the binary builds it from
// its tools.enabled and tools.profile settings), unless the transport
// passes the session's own choice
// (SessionOptions.Tools, parsed by Server.SessionToolSet, which refuses an
// entry that matches no registered tool). A tool outside the session's
// set is answered like one that does not exist (NOT_FOUND, saying it is
// not among the session's tools); it is filtered before paging, so pages
// stay full. InvokeTool (workflow steps, agents) is not filtered. A tool
// with HideOutputSchema checks its results against its OutputSchema but
// does not list it.
//
// # Tool calls
//
// tools/call runs an ordered pipeline: params shape (-32602), ids
// (correlationId from _meta or generated, a runId per call), payload size
// (RESOURCE_EXHAUSTED over tools.maxPayloadBytes), existence (NOT_FOUND),
// authorization, a concurrency slot taken without waiting
// (RESOURCE_EXHAUSTED), input validation against the schema compiled at
// registration (INVALID_ARGUMENT), the exclusive lock, audit enter, the
// handler under its deadline with panics recovered (INTERNAL), the output
// schema check (skipped for a typed tool's non-nil result of exactly the
// type its output schema was derived from, which satisfies it by
// construction: outputtrust.go),
// audit exit, release, and the wrap into a CallToolResult. InvokeTool and
// tasks run the same steps (pipeline.go): one panic site (core.Guard), one
// slot rule, one deadline. The handler's return value is the answer: the
// completion record is written once the engine reports whether it went
// out (jsonrpc.OnAnswered); only TIMEOUT at the deadline and the answers
// of a call that may become a task go out through jsonrpc.Respond.
//
// Schemas are validated by kaptinlin/jsonschema, the reference, except
// that a schema written only with the common keywords (schemafast.go) is
// also compiled into a checker that reads the arguments' text directly and
// settles every valid call; a value it does not accept goes to kaptinlin,
// whose problems are the ones reported. The two always agree on validity.
//
// The arguments' text is read once. For a typed tool whose input is a
// plain struct, the pass that validates decodes them into the handler's
// input (argsdecode.go): the fast checker's pass over the text, or, for a
// schema only kaptinlin validates, the pass that builds the value
// kaptinlin checks (argsdecode_tree.go), which fills the input from the
// same reading. Where the input could differ from what json.Unmarshal
// makes of the arguments (a member named like a field but for case, a
// value of another kind or out of the field's range), and for invalid
// arguments, nothing is handed on and the handler decodes them with
// json.Unmarshal, with its error text. A second decode remains, by
// design, in two cases: a tool registered with AddTool, whose handler
// takes the arguments' text (CallToolRequest.Arguments) and decodes it as
// it likes — the validator's value (json.Number numbers, maps) is not a
// form it asked for; and a typed tool whose input is not a plain struct
// (a map, an embedded struct, a type with its own UnmarshalJSON), where
// only json.Unmarshal says what the value is.
//
// A result is encoded once. A typed tool's value is encoded, then checked
// against the outputSchema in one pass over those bytes (unless it is
// trusted, above) and wrapped around them; a handler's own CallToolResult
// has its structuredContent encoded once, checked when the tool has an
// outputSchema, and copied into the answer as it is (record.go). The check
// is one pass over the bytes when the fast checker models the schema;
// for a schema only kaptinlin validates, the bytes are decoded once for
// it.
// Either way the answer is encoded under tools.maxResultBytes and fails
// (result_too_large) as soon as it passes it.
//
// A call in flight is a toolCall made of parts by concern (callparts.go):
// its ids (callID), the race between its handler and its deadline
// (callState), where its answer goes (callReply), the slot and lock it
// holds (callHold) and its completion record (callRecord).
// Failures from the payload step on are tool errors: a result with isError
// true whose first text block is the JSON of {code, message, details?,
// retryable, correlationId, runId}.
//
// At the deadline the handler's context is cancelled (context.Cause is
// ErrTimeout) and the client gets TIMEOUT at once; the slot stays held until
// the handler returns. The deadlines of a server's tools/calls are one
// queue (deadlines.go): a heap by deadline and one timer of the server's
// Clock armed for the earliest, not a timer per call. The timeouts, their
// answers and records are those of a timer per call. The calls that fall
// due at once run their deadlines earliest first (ties in arming order):
// on the real clock each but the last on a goroutine of its own, so that
// a TIMEOUT answer blocked on one client's stalled stream holds no other
// call's; on a Clock that counts its timers (tests), one after another on
// the timer's goroutine, so that moving the clock runs them before it
// returns. The timer stays armed when
// the queue empties (it then fires once, finds nothing, and is not
// re-armed), except on a Clock that counts its timers
// (core.ManualClock.Timers), where exactly one is armed while any call's
// deadline is and none otherwise. So does the slot of an InvokeTool run that timed
// out (borrowed from its calling tool call, else taken free), so runs
// abandoned at their deadline never outnumber the slots. notifications/cancelled cancels the handler's
// context (ErrCancelled) and no answer is sent. Each call writes one
// completion record to the log (two for a timeout: timeout, then
// late_completed) whose outcome says what the client saw.
//
// A handler that waits (a long poll) wraps the wait in WaitWithoutSlot:
// the call's slot is given back while it waits and taken again after, so
// waiting calls never keep other calls, of the same client or another,
// from running (if no slot is free when the wait ends, the call finishes
// its short remaining work without one).
//
// # Resources
//
// AddResource registers a resource with a fixed, absolute URI;
// AddResourceTemplate registers an RFC 6570 URI template (levels 1-4, such
// as file:///logs/{day} or db://{table}/{id}{?fields*}) whose handler
// reads every URI that matches it and gets the template's variables,
// percent-decoded. resources/list (sorted by URI) and
// resources/templates/list (sorted by template) page like tools/list.
// resources/read looks for a resource with exactly the URI first, then
// for the first template, in listed order, that matches the URI whole. A
// URI that names nothing, or whose handler returns a NOT_FOUND
// *core.Error, is -32002 "Resource not found" with data {code:
// "NOT_FOUND", uri, correlationId} — the code these revisions use for it,
// told apart from "Not initialized" by data.code. Any other handler
// error, a panic, an invalid result or one over tools.maxResultBytes is
// -32603 saying what failed; a *jsonrpc.Error from a handler is sent as
// is. Contents are text (TextResource) or base64 blobs (BlobResource).
//
// resources/subscribe needs a URI that resources/read would serve;
// subscribing twice is subscribing once, unsubscribing from anything
// succeeds, and a session's subscriptions end with it (at most 4096 per
// session; URIs of at most 8192 bytes). Server.ResourceUpdated sends
// notifications/resources/updated to the running sessions subscribed to
// exactly that URI, and to no other; Server.Subscriptions lists the URIs
// subscribed to, resolved, and Server.OnSubscribe hears of each
// subscription before it is answered. Adding or removing a resource or a
// template sends notifications/resources/list_changed to every running
// session.
//
// # Prompts
//
// AddPrompt registers a prompt: a name (the same rule as tool names),
// arguments (strings; some required) and a handler that renders its
// messages. prompts/list pages like tools/list. prompts/get checks that
// arguments is an object of strings and that every required argument is
// there (-32602 naming the missing ones; an unknown prompt is -32602
// too); arguments the prompt does not declare reach the handler as well.
// Message content is text, image, audio, resource_link or an embedded
// resource, fitted to the session's revision as ContentForRevision says.
// Adding or removing a prompt sends notifications/prompts/list_changed.
//
// # Completion
//
// A Prompt or a ResourceTemplate may carry a Complete function (see
// CompletionsFrom for the common case). completion/complete finds it by
// its ref — {type: "ref/prompt", name} or {type: "ref/resource", uri: the
// template's uriTemplate} — checks that the argument is one the prompt
// declares or the template has, and passes the value typed so far and,
// from 2025-06-18, context.arguments. At most 100 values are sent; a
// longer list is cut, with hasMore true and total at least its length. An
// unknown ref is -32602; a prompt or template without a Complete function
// completes to no values.
//
// # Capabilities
//
// initialize advertises what the server serves, and a method whose
// capability was not advertised answers -32601 as if it did not exist.
// tools is always served. resources ({subscribe: true, listChanged:
// true}) is served from the first AddResource or AddResourceTemplate on,
// prompts ({listChanged: true}) from the first AddPrompt, completions
// ({}) from the first prompt or template with a Complete function; each
// stays served for the rest of the server's life, even when everything is
// removed again (the lists are then empty), because clients were told so.
// Register resources and prompts before serving: a session that
// initialized before the first registration was not told about them.
// Revision 2024-11-05 has completion/complete but no completions
// capability. Listings follow the session's revision: title and _meta
// from 2025-06-18, icons from 2025-11-25, annotations.lastModified from
// 2025-06-18.
//
// # Client logging
//
// initialize always advertises logging ({}). Handlers send messages to
// the client with Session.Log (or CallToolRequest.Log, whose logger is the
// tool's name) as notifications/message {level, logger?, data}. The
// client picks the least severe level it wants with logging/setLevel
// (debug, info, notice, warning, error, critical, alert, emergency;
// anything else is -32602 listing them); until it does, the session sends
// info and above (DefaultClientLogLevel). Nothing is sent before the
// client's notifications/initialized. Data goes through the redaction and
// sanitization of the stderr logs: values under logging.redactKeys become
// "[REDACTED]" at any depth and control characters become \u00xx escapes,
// on a copy. Each session sends at most ClientLogRate (10) messages a
// second, in bursts of up to ClientLogBurst (50); the rest are dropped
// (Log returns ErrLogDropped) and counted, and as soon as the rate allows
// the client gets one message, at warning or the session's level if
// higher, saying how many. The server's own logs are never forwarded: the
// client sees only what handlers send.
//
// # Progress
//
// When a request's _meta carries a progressToken, CallToolRequest.Progress
// sends notifications/progress {progressToken, progress, total?,
// message?} (message from 2025-03-26). progress must increase with every
// report; a value that does not is refused and nothing is sent. Once the
// call has been answered (returned, timed out, cancelled, session closed)
// Progress returns ErrProgressEnded: no progress ever follows the answer.
// Without a token it returns ErrNoProgressToken, which handlers may
// ignore.
//
// # Requests to the client
//
// A handler reaches the client through its session: Ping, ListRoots
// (roots/list; needs the client's roots capability; cached until
// notifications/roots/list_changed when the client declared listChanged,
// and OnRootsListChanged runs a hook on each change), CreateMessage
// (sampling/createMessage; needs sampling) and Elicit (elicitation/create
// from 2025-06-18; needs elicitation; URL mode from 2025-11-25 and only
// with elicitation.url). A request the client or the revision cannot take
// fails at once with a NOT_IMPLEMENTED *core.Error; none is sent before
// the session runs (ping excepted). Each waits at most
// tools.clientRequestTimeoutMs (default 60000), or less when the caller's
// context ends sooner; a request given up this way (TIMEOUT, or the
// context's cause) is followed by notifications/cancelled naming it.
//
// # The stateless revision (2026-07-28)
//
// A request whose params._meta names a protocol version
// (MetaProtocolVersion), and every server/discover and
// subscriptions/listen, is handled statelessly, on any session and in any
// lifecycle state, without touching the session: its revision, client
// capabilities (MetaClientCapabilities), client info and log level
// (MetaLogLevel) are its own. Missing or malformed _meta is -32602; a
// version other than Version20260728 is -32022 with data {supported,
// requested}; the methods the revision removed (initialize, ping,
// logging/setLevel, resources/subscribe, resources/unsubscribe, shutdown)
// are -32601. Every result gets resultType and _meta[MetaServerInfo]; list
// results, resources/read and server/discover get ttlMs and cacheScope
// (stateless.*). An unknown resource is -32602 with data.uri. A session
// created with SessionOptions.Stateless treats every request this way (the
// HTTP transport serves each stateless POST on such a session).
//
// Handlers ask the client for input with RequestInput (or Session.Elicit,
// CreateMessage, ListRoots): in a session the requests go to the client; in
// a stateless request the answers come from the request's inputResponses
// and the signed requestState, and a missing one makes RequestInput return
// ErrInputRequired, which the handler returns and the server turns into an
// input_required result naming everything still missing. The handler runs
// again from the start on the retry. A capability the request did not
// declare is a *MissingCapabilityError (-32021). requestState is
// HMAC-SHA-256 over what it carries (earlier answers, the handler's
// SetRequestState bytes, the method, the target, an expiry): a changed,
// foreign, misdirected or expired one is -32602 and never reaches a
// handler. Options.RequestStateKey shares the key between replicas.
//
// subscriptions/listen acknowledges first (only what the server serves),
// then sends the chosen list_changed and resources/updated notifications
// tagged with the listen request's id; the client's cancellation ends it
// without an answer, Server.Shutdown with one.
//
// # Tasks (the io.modelcontextprotocol/tasks extension, 2026-07-28)
//
// server/discover lists ExtensionTasks under capabilities.extensions
// unless Options.Tasks.Disabled. A tool opts in with Tool.TaskSupport
// (TaskOptional, TaskRequired); its handler calls StartTask when it
// decides to go on in the background. If the request is stateless and
// declared the extension (_meta clientCapabilities.extensions), the
// request is answered at once with a CreateTaskResult {resultType "task",
// taskId, status, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs}, and
// the handler keeps running after that answer, on a context of its own
// that the request's end no longer touches; otherwise StartTask reports
// false and the call goes on as an ordinary one. A TaskRequired tool
// called statelessly without the extension is -32021 with
// data.requiredCapabilities.extensions before its handler runs.
//
// tasks/get answers the task (resultType "complete") with, by status:
// working; input_required with inputRequests (the RequestInput requests
// still unanswered, by key); completed with result, the CallToolResult
// (isError for a tool error, TIMEOUT at the tool's own deadline);
// failed with error, a JSON-RPC error (the handler panicked: -32603; it
// needed a client capability the request lacked: -32021); cancelled.
// tasks/update {taskId, inputResponses} hands answers to a task waiting in
// RequestInput (keys it does not wait for are ignored); tasks/cancel
// makes a running task cancelled and cancels its handler's context
// (context.Cause ErrTaskCancelled, which is an ErrCancelled). Both answer
// an empty result. An unknown or expired taskId is -32602; a request
// without the extension -32021; under a session revision the three
// methods are -32601.
//
// Tasks live in memory: at most Options.Tasks.MaxTasks (default 1000;
// StartTask beyond that is RESOURCE_EXHAUSTED), each removed TTL after its
// creation (default one hour, the ttlMs; a task still running then is
// cancelled with ErrTaskExpired), ids of 128 random bits. A task's handler
// keeps its concurrency slot until it returns; its deadline is the tool's
// own Timeout, else only the TTL. Its completion record and audit exit are
// written when the handler returns, with the record's taskId:
// success/tool_error (completed), protocol_error (failed), aborted
// (cancelled or expired), timeout then late_completed (its deadline).
//
// # Content by revision
//
// Nothing newer than the negotiated revision is sent. Tool results and
// sampling messages are fitted with ContentForRevision: audio (from
// 2025-03-26) becomes a text block saying audio was omitted,
// resource_link (from 2025-06-18) a text block naming the link, an
// unknown block type a text block saying it was omitted; _meta on blocks
// and annotations.lastModified are dropped before 2025-06-18, icons on
// resource links before 2025-11-25, and members a block's type does not
// have in every revision. structuredContent is sent from 2025-06-18.
//
// # Concurrency
//
// Requests run concurrently; a slow tool never blocks ping. A tool handler
// may be called concurrently with itself unless the tool is Exclusive.
// Every request is answered at most once, whatever races between the
// handler, its deadline, the client's cancellation and the session's end.
package mcp
