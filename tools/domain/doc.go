// Package domain puts the domain services on an mcp.Server: the
// memory_*, session_*, guard_* and trace_* tools over one SQLite store,
// the coordination tools (file reservations, the task_* work queue,
// coord_start and coord_finish; coordination.go, coordmacros.go), which
// need ConnectMessaging for the caller's identity, presence and notices,
// the workflow_* tools, the agent tools (agent_list, agent_get,
// agent_run), and the audit sink that records every tools/call as a trace
// event.
//
// # Contract
//
//   - New builds everything and touches no file except reading the guard
//     policies directory, the workflows directory and the agent profiles
//     directory (a missing one holds none; a bad policy file is a
//     *config.Error for guard.policiesDir, a bad workflow definition
//     one for workflow.dir, a bad profile one for agent.dir;
//     workflow.dir defaults to {aacp.dataDir}/workflows, agent.dir to
//     {aacp.dataDir}/agents). The store is
//     created by its first use: a server that runs no domain tool and
//     receives no tools/call (with tracing on) creates nothing.
//   - The store lives in store.dir, default {aacp.dataDir}/store (relative
//     paths from the working directory). Processes given the same
//     directory share memory, sessions and traces.
//   - Register adds the tools with truthful annotations (readOnlyHint,
//     destructiveHint for tools that write, idempotentHint, openWorldHint
//     false) and schemas derived from the domain types. The server's mode
//     admits them: FULL and TEST all, READONLY the read-only ones, MINIMAL
//     none. Every spec must have a handler and the reverse.
//   - AuditSink never refuses a call and never blocks it: Enter notes a
//     top-level "sessionId" argument (and the arguments when capturing),
//     Exit queues the event on the Recorder's bounded queue (a full queue
//     drops and counts). Only calls that passed input validation reach an
//     audit sink, so only they are traced.
//   - Register also adds read-only application/json resources, each only
//     when the tool it mirrors was admitted: memory://entries (memory_list)
//     and memory://entries/{namespace}/{key} (memory_retrieve),
//     sessions://active and sessions://id/{id}, policies:// and
//     policies://id/{id}, and, with tracing on, traces://recent and
//     traces://id/{traceId}, workflows:// (workflow_list) and
//     workflows://id/{id} (workflow_describe), reservations://active
//     (list_reservations), tasks://open (task_list) and tasks://id/{id}
//     (task_get). An unknown or invalid id
//     is NOT_FOUND (-32002).
//     Template variables complete from live data (at most 100 values).
//     The prompts search_memory {query} (with memory_search) and
//     analyze_trace {traceId} (with trace_analyze and tracing on) and
//     run_workflow {workflowId, input?} (with workflow_run) ask the model
//     to call those tools. Nothing is read at registration.
//   - Workflows: the bundled workflows and those of workflow.dir run on
//     the engine Workflows returns; Register lets their steps call the
//     server's tools through mcp.Server.InvokeTool. workflow_run is
//     destructive and not idempotent (its steps may be); list and
//     describe are read-only. With tracing on, step S of a run under
//     correlation id T is recorded as T/S (each attempt), so trace_get
//     and trace_tree show the run and its steps with their durations;
//     RunWorkflow (for other packages) also records the run itself under
//     the caller's correlation id + "/" + the workflow id.
//   - Agents: ConnectAgents gives agent_list, agent_get and agent_run the
//     in-process agents of an aacp.Coordinator and the agents registered
//     for messaging (through messaging.Service, whose journal listing never
//     creates); Agents() returns the service, whose SetWorkflowRunner
//     connects a workflow engine and whose RunAgent is the engine's agent
//     runner. agent_run delegates to a messaging agent with TASK_ASSIGNMENT
//     and waits for its TASK_UPDATE within agent.runTimeoutMs (see package
//     domain/agent). Register also adds agents://available (with
//     agent_list), agents://id/{agentId} (with agent_get), and the prompts
//     list_agents (with agent_list) and run_agent (with agent_run), with
//     agentId completed from live data. With tracing on, a run handed to an
//     in-process agent or delegated over messaging is recorded as the step
//     T/agentId of the agent_run call's trace T (a workflow run records
//     its own steps).
//   - DefaultInstructions is what the binary's initialize says when
//     server.instructions is empty: who the model is (aacp.agentId, or how
//     to register one), to check its inbox at the start and end of every
//     task, and how to answer. Register adds the prompt check_inbox when
//     aacp_receive is registered (register the messaging tools first).
//   - Domain tools list their title, description, input schema and the
//     annotations that differ from MCP's defaults; their result schemas
//     check every result but are not listed (Tool).
//   - Tracing (trace.enabled) is on by default: with it, the first
//     tools/call creates the store.
//   - memory://entries lists the newest entries first; memory_list pages
//     by namespace, then key.
//   - Subscribers to a memory://, sessions:// or traces:// resource get
//     notifications/resources/updated when what it shows changes, made by
//     this process (at commit) or another sharing the store (found by
//     polling the store's change feed every store.watchIntervalMs, only
//     while some session subscribes to such a resource): a memory write
//     updates memory://entries and that entry's URI, a session write
//     sessions://active and sessions://id/{id}, a trace write
//     traces://recent and the traces://id/{traceId} of its traces (pruning,
//     or a change feed that was trimmed before it was read, updates every
//     subscribed one). policies:// never changes while the server runs.
//   - Close stops delegation, writes what is queued and closes the store.
//   - Options.Config (config.Domain) holds the store, guard, trace,
//     workflow, agent and coord sections; the binary loads them with every
//     other section in one config.Load.
//
// Nothing here is global: two Domains in one process share nothing.
package domain
