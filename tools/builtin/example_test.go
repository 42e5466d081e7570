package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcprt/mcprt/aacp"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
	"github.com/mcprt/mcprt/tools/builtin"
)

// An embedding program registers its own agent on a coordinator, hands the
// coordinator to the built-in tools, and MCP clients reach the agent
// through agent_send_message.
func ExampleRegister_agent() {
	cfg := config.DefaultBase("1.0.0")
	srv, err := mcp.NewServer(mcp.Options{Version: "1.0.0"})
	if err != nil {
		panic(err)
	}
	agents := aacp.NewCoordinator(aacp.Options{MaxPayloadBytes: cfg.Tools.MaxPayloadBytes})
	defer agents.Close(context.Background())

	// The agent handles one message at a time, in arrival order, and keeps
	// its own state map.
	err = agents.RegisterAgent("planner", aacp.HandlerFunc(
		func(ctx context.Context, msg aacp.Message, state aacp.State) (any, error) {
			n, _ := state["tasks"].(float64)
			state["tasks"] = n + 1
			return map[string]any{"accepted": msg.Type, "tasks": n + 1}, nil
		}))
	if err != nil {
		panic(err)
	}
	if err := builtin.Register(srv, builtin.Options{Agents: agents}); err != nil {
		panic(err)
	}

	// A client in the same process, over an in-memory stream.
	serverEnd, client := jsonrpc.NewMemoryPair()
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background(), serverEnd) }()
	send := func(msg string) {
		_ = client.Write(context.Background(), jsonrpc.Outgoing{Data: []byte(msg + "\n")})
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`)
	_, _ = client.Read()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agent_send_message","arguments":{"targetAgentId":"planner","message":{"type":"TASK_ASSIGNMENT","payload":{"task":"write docs"}}}}}`)
	reply, _ := client.Read()
	var resp struct {
		Result struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	_ = json.Unmarshal(reply, &resp)
	fmt.Println(string(resp.Result.StructuredContent))

	_ = client.Close() // the input ends: Run shuts the session down and returns
	<-done
	// Output:
	// {"accepted":"TASK_ASSIGNMENT","tasks":1}
}
