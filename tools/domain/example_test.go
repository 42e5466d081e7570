package domain_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/mcp"
	"github.com/mcprt/mcprt/tools/domain"
	"github.com/mcprt/mcprt/tools/messaging"
)

// Your own MCP server with mcprt's coordination tools: shared memory,
// collaboration sessions (and guard, trace, workflow and agent tools) and
// agent messaging, registered beside your own tools. Serve it with
// srv.RunStdio(ctx) or the streamable HTTP handler; here the tools are
// called in process.
func ExampleDomain_Register() {
	dir, err := os.MkdirTemp("", "mcprt-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	base := config.DefaultBase("1.0.0")
	base.AACP.DataDir = dir // the store, policies and messages live here
	base.AACP.AgentID = "my-agent"

	srv, err := mcp.NewServer(mcp.Options{Name: "my-server", Version: "1.0.0"})
	if err != nil {
		panic(err)
	}
	dom, err := domain.New(domain.Options{Config: config.DefaultDomain(), Base: base})
	if err != nil {
		panic(err)
	}
	defer dom.Close(context.Background())
	if err := dom.Register(srv); err != nil { // memory_*, session_*, guard_*, trace_*, workflow_*, agent_*
		panic(err)
	}
	messaging, err := messaging.New(messaging.Options{Config: base.AACP})
	if err != nil {
		panic(err)
	}
	defer messaging.Close()
	if err := messaging.Register(srv); err != nil { // aacp_*
		panic(err)
	}

	ctx := context.Background()
	call := func(tool, args string) map[string]any {
		raw, err := srv.InvokeTool(ctx, tool, json.RawMessage(args))
		if err != nil {
			panic(err)
		}
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		return out
	}
	call("memory_store", `{"namespace":"proj","key":"api/cursor","value":{"note":"opaque base64"}}`)
	got := call("memory_retrieve", `{"namespace":"proj","key":"api/cursor"}`)
	fmt.Println("memory:", got["found"], got["value"])
	s := call("session_create", `{"initiator":"my-agent","task":"add the login endpoint","metadata":{"ticket":42}}`)
	fmt.Println("session:", s["status"], s["initiator"])
	_, hasSend := srv.LookupTool("aacp_send")
	fmt.Println("messaging:", hasSend)
	// Output:
	// memory: true map[note:opaque base64]
	// session: active my-agent
	// messaging: true
}
