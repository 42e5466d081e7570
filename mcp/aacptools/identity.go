package aacptools

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
)

// Presence states of an agent, as the coordination tools show them.
const (
	PresenceOnline  = "online"  // a session hosts it and it acted recently
	PresenceIdle    = "idle"    // a session hosts it, but it has not acted for a while
	PresenceStale   = "stale"   // no heartbeat for the stale interval
	PresenceOffline = "offline" // registered, but no session hosts it
	PresenceUnknown = "unknown" // never registered
)

// Caller returns the agent id the tool call whose context is ctx acts for,
// registering the caller's identity on first use. Coordination tools
// (reservations, the work queue) attribute what they record to it.
func (s *Service) Caller(ctx context.Context) (string, error) {
	_, id, err := s.act(ctx, "")
	return id, err
}

// Presence returns agentID's presence state (one of the Presence*
// constants) and when it was last seen (zero when never).
func (s *Service) Presence(ctx context.Context, agentID string) (string, time.Time, error) {
	b, err := s.Broker(false)
	if err != nil || b == nil {
		return PresenceUnknown, time.Time{}, err
	}
	out, err := b.Agents(ctx, broker.AgentsInput{})
	if err != nil {
		return PresenceUnknown, time.Time{}, err
	}
	for _, a := range out.Agents {
		if a.AgentID == agentID {
			if a.Online {
				return PresenceOnline, time.Time{}, nil
			}
			return PresenceOffline, time.Time{}, nil
		}
	}
	return PresenceUnknown, time.Time{}, nil
}

// Tell puts a short notice into agentID's inbox through the durable
// messaging path: subject says what happened, payload carries the facts
// (a released reservation, a task handed over). The notice is sent as
// the calling agent.
func (s *Service) Tell(ctx context.Context, agentID, subject string, payload map[string]any) error {
	b, from, err := s.act(ctx, "")
	if err != nil {
		return err
	}
	body := map[string]any{"subject": subject}
	for k, v := range payload {
		body[k] = v
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	_, err = b.Send(ctx, from, broker.SendInput{Receiver: broker.Receiver{AgentID: agentID},
		MessageType: "CUSTOM_NOTICE", Payload: raw, Priority: envelope.Normal})
	return err
}
