package aacp_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcprt/mcprt/aacp"
)

// An embedding program registers an agent and sends it a message.
func Example() {
	c := aacp.NewCoordinator(aacp.Options{QueueSize: 16, MaxPayloadBytes: 1 << 20})
	defer c.Close(context.Background())

	greeter := aacp.HandlerFunc(func(ctx context.Context, msg aacp.Message, state aacp.State) (any, error) {
		var in struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(msg.Payload, &in); err != nil {
			return nil, fmt.Errorf(`greeter: want a payload {"name": string}: %w`, err)
		}
		n, _ := state["greeted"].(float64) // numbers in State are float64, as after a JSON round trip
		state["greeted"] = n + 1
		return map[string]any{"greeting": "hello, " + in.Name}, nil
	})
	if err := c.RegisterAgent("greeter", greeter); err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.Background()
	resp, err := c.SendMessage(ctx, "greeter", aacp.Message{
		Type:    "greet",
		Payload: json.RawMessage(`{"name":"Ada"}`),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := json.Marshal(resp)
	fmt.Println(string(out))

	state, _ := c.AgentState("greeter")
	fmt.Println("greeted:", state["greeted"])

	_, err = c.SendMessage(ctx, "greter", aacp.Message{Type: "greet"})
	fmt.Println(err)
	// Output:
	// {"greeting":"hello, Ada"}
	// greeted: 1
	// NOT_FOUND: no agent "greter"; registered agents: "greeter"
}

// The TEST fixture agents of the contract.
func ExampleCounterAgent() {
	c := aacp.NewCoordinator(aacp.Options{})
	defer c.Close(context.Background())
	_ = c.RegisterAgent("echo", aacp.EchoAgent())
	_ = c.RegisterAgent("counter", aacp.CounterAgent())

	ctx := context.Background()
	for range 2 {
		resp, _ := c.SendMessage(ctx, "counter", aacp.Message{Type: "inc", Payload: json.RawMessage(`{"ms":1}`)})
		out, _ := json.Marshal(resp)
		fmt.Println(string(out))
	}
	resp, _ := c.SendMessage(ctx, "echo", aacp.Message{Type: "ping", Payload: json.RawMessage(`[1,2]`)})
	out, _ := json.Marshal(resp)
	fmt.Println(string(out))
	fmt.Println(c.AgentIDs())
	// Output:
	// {"count":1}
	// {"count":2}
	// {"payload":[1,2],"type":"ping"}
	// [counter echo]
}
