// Package aacp holds mcprt's agents: the in-process agent
// coordinator, and (in subpackages) durable agent-to-agent messaging.
//
// A Coordinator runs agents inside the server process. An agent is an id
// and a Handler; the coordinator gives each agent a state map (State), a
// bounded FIFO queue and one worker goroutine:
//
//   - an agent handles its messages one at a time, in the order SendMessage
//     accepted them; different agents run concurrently;
//   - a full queue refuses a message at once with RESOURCE_EXHAUSTED, an
//     unknown agent with NOT_FOUND, an oversized message with
//     RESOURCE_EXHAUSTED: SendMessage never blocks on a full queue and never
//     drops a message silently;
//   - the handler runs with the sender's context, so the sender's
//     cancellation and deadline reach it; a sender that gives up before
//     its message starts takes the message out of the queue;
//   - a handler may read and change its agent's State without locking;
//     AgentState returns a deep copy (a JSON round trip) of the state as
//     it was after the last finished message, and Options.OnStateChange
//     reports each change;
//   - a panicking handler becomes an INTERNAL error; the agent goes on.
//
// Errors are *core.Error values with mcprt's structured codes (NOT_FOUND,
// RESOURCE_EXHAUSTED, INVALID_ARGUMENT, INTERNAL), except a
// handler's own errors (returned as they are) and a sender's context
// errors (returned wrapped, so errors.Is finds context.Canceled,
// context.DeadlineExceeded and the cause).
//
// The package keeps no global mutable state: every coordinator is
// independent. EchoAgent and CounterAgent are the fixture agents the
// binary registers in mode TEST.
//
// An embedding program registers its agents and sends them messages:
//
//	c := aacp.NewCoordinator(aacp.Options{MaxPayloadBytes: cfg.Tools.MaxPayloadBytes})
//	defer c.Close(context.Background())
//	if err := c.RegisterAgent("planner", planner); err != nil {
//		return err
//	}
//	resp, err := c.SendMessage(ctx, "planner", aacp.Message{
//		Type:    "plan",
//		Payload: json.RawMessage(`{"goal":"ship"}`),
//	})
package aacp
