// Package wiretest drives the real mcprt binary over its stdio pipes, for
// end-to-end tests that read like the protocol.
//
// Build compiles ./cmd/mcprt once per test binary; Start runs it with a clean
// environment (only PATH and HOME are inherited, plus StartupTimeoutEnv and
// Options.Env), sends lines to its stdin and collects its output:
//
//   - every stdout line a test reads is checked to be exactly one JSON value
//     that is a JSON-RPC 2.0 message ("jsonrpc":"2.0") or a non-empty array of
//     them, because stdout carries protocol only;
//   - stderr is captured whole; StderrLines decodes it and checks that every
//     line is a JSON object with time, level and msg.
//
// A typical test:
//
//	func TestPing(t *testing.T) {
//		p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{})
//		p.Handshake(t, "2025-11-25")
//		p.Send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
//		p.ExpectResult(t, "1") // the id as JSON text, compared byte for byte
//		p.Send(`{"jsonrpc":"2.0","id":"x","method":"no/such/method"}`)
//		p.ExpectError(t, `"x"`, -32601)
//		p.CloseStdin()
//		if code := p.Wait(t); code != 0 {
//			t.Fatalf("exit code %d", code)
//		}
//	}
//
// Call Cleanup from TestMain to remove the built binary when the tests end.
//
// # Transcripts
//
// Run plays a transcript: a small text script of what the client sends and
// what the server must answer, one directive per line.
//
//	# a comment; blank lines are ignored too
//	env MCPRT_SERVER_NAME=demo
//	> {"jsonrpc":"2.0","id":1,"method":"ping"}
//	< {"jsonrpc":"2.0","id":1,"result":{}}
//	> {"jsonrpc":"2.0","method":"notifications/initialized"}
//	silence 200ms
//	close
//	exit 0
//
// The directives:
//
//	> LINE        send LINE (the text after "> ", verbatim) and a "\n"
//	< JSON        read the next stdout line; it must match JSON (see Match)
//	silence D     no stdout line may arrive for the duration D (time.ParseDuration)
//	close         close the server's stdin
//	exit N        wait for the process to exit with code N
//	env K=V       an environment variable for the process; Run ignores it,
//	              ScriptEnv collects it (so the caller can pass it to Start)
//	# ...         a comment
//
// # Matching
//
// Match compares an expected JSON value with an actual one:
//
//   - the string "*" in the expectation matches any value (the member must
//     still be present);
//   - an object matches when every expected member is present and matches,
//     and the actual object has no other member, unless the expected object
//     holds "...": true, which allows extra members;
//   - arrays match element by element and must have the same length;
//   - numbers match by their exact text (1 and 1.0 differ), as the protocol
//     echoes ids byte for byte; strings, booleans and null match by value.
package wiretest
