package mcp

import "github.com/mcprt/mcprt/jsonrpc"

// registerMethods adds the MCP methods served in RUNNING.
func (sess *Session) registerMethods(r *jsonrpc.Router) {}

// capabilities returns what the server advertises in initialize.
func (s *Server) capabilities() capabilities { return capabilities{} }
