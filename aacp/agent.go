package aacp

import (
	"context"
	"encoding/json"
)

// Message is what an agent handler receives: {type, payload,
// sourceAgentId?}. Payload is raw JSON and is never decoded by
// the coordinator; it must be valid JSON when present.
type Message struct {
	// Type names what the message asks for; its meaning is up to the agent.
	Type string `json:"type"`
	// Payload is the message's JSON body; empty means absent.
	Payload json.RawMessage `json:"payload,omitempty"`
	// SourceAgentID is the sending agent's id, empty when the sender is not
	// an agent (a tool call, an embedding program).
	SourceAgentID string `json:"sourceAgentId,omitempty"`
}

// State is an agent's state map. The map a handler receives is the live
// state of its agent: the handler may read and change it freely, with no
// locking, because only that agent's single worker goroutine ever touches
// it. A handler must not keep the map (or values inside it) after it
// returns, hand it to other goroutines, or return it as its response; it
// must return copies instead.
//
// State should hold only values JSON can represent: the coordinator takes
// its snapshots (AgentState, Options.OnStateChange) through a JSON round
// trip, so numbers come back as float64, structs as map[string]any, and
// so on.
type State map[string]any

// Handler handles the messages of one agent.
//
// The coordinator calls HandleMessage for one agent at a time, in arrival
// order, on that agent's worker goroutine: calls for the same agent never
// overlap. Calls for different agents run concurrently, so a Handler value
// registered under several ids must be safe for concurrent use.
//
// ctx is the sender's context: when the sender gives up (cancellation,
// deadline), ctx is done and the handler should return promptly; the
// coordinator does not stop it. The response may be any JSON-encodable
// value and reaches the sender as it is; an error is returned to the
// sender as it is; a panic is recovered and becomes an INTERNAL error.
//
// A handler must not wait for the answer to a message sent to its own
// agent: that message waits behind the running one, so the wait ends only
// when ctx does.
type Handler interface {
	HandleMessage(ctx context.Context, msg Message, state State) (any, error)
}

// HandlerFunc adapts an ordinary function to the Handler interface.
type HandlerFunc func(ctx context.Context, msg Message, state State) (any, error)

// HandleMessage calls f(ctx, msg, state).
func (f HandlerFunc) HandleMessage(ctx context.Context, msg Message, state State) (any, error) {
	return f(ctx, msg, state)
}

var _ Handler = HandlerFunc(nil)
