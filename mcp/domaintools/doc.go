// Package domaintools puts the domain services on an mcp.Server: the
// memory_*, session_*, guard_* and trace_* tools over one SQLite store,
// the workflow_* tools, and the audit sink that records every tools/call
// as a trace event.
//
// # Contract
//
//   - New builds everything and touches no file except reading the guard
//     policies directory and the workflows directory (a missing one holds
//     none; a bad policy file is a *core.ConfigError for
//     guard.policiesDir, a bad workflow definition one for workflow.dir;
//     workflow.dir defaults to {aacp.dataDir}/workflows). The store is
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
//     workflows://id/{id} (workflow_describe). An unknown or invalid id
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
//   - Close writes what is queued and closes the store.
//   - Config holds the store, guard, trace and workflow sections;
//     LoadConfig loads them with mcprt's base sections through one
//     core.Loader, so their MCPRT_STORE_*, MCPRT_GUARD_*, MCPRT_TRACE_*
//     and MCPRT_WORKFLOW_* variables are known keys. TraceCommand is `mcprt trace show|list`.
//
// Nothing here is global: two Domains in one process share nothing.
package domaintools
