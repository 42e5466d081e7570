// Package harness measures an MCP server over stdio, the way an MCP client
// launches it: as a subprocess speaking newline-delimited JSON-RPC on its
// standard input and output; and over Streamable HTTP (RunHTTP), as a
// subprocess listening on a loopback port.
//
// It starts the server command with pipes, does the MCP handshake
// (initialize, notifications/initialized, tools/list to check that the tool
// exists, one checked tools/call), and then measures one tool, normally a
// no-op:
//
//   - sequential round trips after a warm-up: one request in flight, the
//     next sent when the previous answer arrived; p50/p95/p99/mean latency;
//   - pipelined calls with a fixed number of requests in flight (32 by
//     default): throughput in calls per second, and p50/p95/p99 latency from
//     the moment a request is queued to the moment its answer is read;
//   - the server's CPU time per call in each phase, all threads, user and
//     system, sampled before and after the phase: from the per-thread run
//     time in /proc/<pid>/task/*/schedstat (nanoseconds), and as a
//     cross-check from utime+stime in /proc/<pid>/stat (whose clock ticks,
//     usually 10 ms, make it coarse for short phases);
//   - the server's peak resident set (VmHWM from /proc/<pid>/status) after
//     those phases, and optionally, on a second, fresh process, its
//     resident set once it has answered given numbers of calls (100 k,
//     1 M), to tell a leak from a warm heap.
//
// The harness keeps its own per-call work small — requests are prebuilt
// byte templates, responses are scanned for their top-level id without
// decoding them — because on a 2-core machine the client competes with the
// server for the CPU. It uses only the standard library and Linux's /proc,
// so any module can import it without pulling in dependencies.
//
// A typical use:
//
//	res, err := harness.Run(ctx, harness.Command{
//		Name: "mcprt",
//		Path: "/tmp/mcprt",
//		Env:  []string{"MCPRT_SERVER_MODE=TEST"},
//	}, harness.Options{})
//	if err != nil {
//		log.Fatal(err)
//	}
//	for _, f := range res.Figures() {
//		fmt.Println(res.Name, f.Name, f.Format())
//	}
//
// Lower-level steps (Start, Process.Handshake, Process.Sequential,
// Process.Pipelined, Process.CPUTime, Process.Memory) are exported for
// callers that want another mix of phases.
package harness
