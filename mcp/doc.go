// Package mcp is the MCP server of mcprt: the session lifecycle (SPEC §4),
// version negotiation, the lifecycle gate, and the MCP methods, built on
// the jsonrpc engine and the core foundations.
//
// A Server holds configuration and registrations; each connection is a
// Session with its own lifecycle state:
//
//	srv, err := mcp.NewServer(mcp.Options{Logger: logger})
//	if err != nil { ... }
//	sess := srv.NewSession(os.Stdin, os.Stdout)
//	err = sess.Serve(ctx)
package mcp
