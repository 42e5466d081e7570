// Package bench holds mcprt's performance benchmarks.
// The package itself has no API: its _test.go files are the benchmarks,
// and its subpackages are the tools around them.
//
// In-process, each with -benchmem figures:
//
//   - BenchmarkDecode/{small,medium,large}: the framer and the envelope
//     decoder on tools/call lines of about 100 B, 10 KB and 1 MB;
//   - BenchmarkDispatchNoop: a tools/call of the noop fixture, bytes in to
//     bytes out, through the real router, tools/call pipeline, completion
//     record (logging on, at info, into io.Discard) and writer;
//     BenchmarkDispatchNoopPipelined does the same with 32 calls in flight;
//   - BenchmarkDispatchLookup20: the same path for the lookup20 fixture
//     (a realistic 20-property input schema) with valid arguments;
//   - BenchmarkHTTPNoop/{sequential,concurrent32}: the no-op call over
//     Streamable HTTP against the real mcprt --http (bench/cmd/e2ehttp
//     prints the fuller figures);
//   - BenchmarkInitialize: a whole handshake on a new session;
//   - BenchmarkToolsList100: tools/list of 100 tools;
//   - BenchmarkToolsCall20Props: a tools/call whose input schema has 20
//     properties, with valid arguments;
//   - BenchmarkPlumbing: the in-process transport alone, to tell its cost
//     from mcprt's.
//
// Over stdio, BenchmarkStdioNoop builds the real binary and measures it
// with bench/harness. The fuller end-to-end figures come from bench/cmd/e2e
// (make bench-e2e), and the comparison with other MCP servers from the
// nested module bench/compare (make bench-compare). bench/README.md
// explains each target and figure.
//
// make test runs every benchmark once (-benchtime=1x) so that they keep
// compiling and working; nothing asserts a timing.
package bench
