// Package domaintools puts the domain services on an mcp.Server: the
// memory_*, session_*, guard_* and trace_* tools over one SQLite store, and
// the audit sink that records every tools/call as a trace event.
//
// # Contract
//
//   - New builds everything and touches no file except reading the guard
//     policies directory (a missing one holds no policies; a bad policy
//     file is a *core.ConfigError for guard.policiesDir). The store is
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
//     traces://id/{traceId}. An unknown or invalid id is NOT_FOUND (-32002).
//     Template variables complete from live data (at most 100 values).
//     The prompts search_memory {query} (with memory_search) and
//     analyze_trace {traceId} (with trace_analyze and tracing on) ask the
//     model to call those tools. Nothing is read at registration.
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
//   - Close writes what is queued and closes the store.
//   - Config holds the store, guard and trace sections; LoadConfig loads
//     them with mcprt's base sections through one core.Loader, so their
//     MCPRT_STORE_*, MCPRT_GUARD_* and MCPRT_TRACE_* variables are known
//     keys. TraceCommand is `mcprt trace show|list`.
//
// Nothing here is global: two Domains in one process share nothing.
package domaintools
