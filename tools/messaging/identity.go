package messaging

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
)

// Presence states of an agent, as the coordination tools show them.
const (
	PresenceOnline  = "online"  // a session hosts it and it acted recently
	PresenceIdle    = "idle"    // a session hosts it, but it has not acted for a while
	PresenceStale   = "stale"   // no heartbeat for the stale interval
	PresenceOffline = "offline" // registered, but no session hosts it
	PresenceUnknown = "unknown" // never registered
)

// NoticeSender is the sender of the notices Tell puts into inboxes: the
// messaging system itself.
const NoticeSender = envelope.SystemAgentID

// NoticeType is the message type of Tell's notices.
const NoticeType = "CUSTOM_NOTICE"

// Caller returns the agent id the tool call whose context is ctx acts for,
// registering the caller's identity on first use. Coordination tools
// (reservations, the work queue) attribute what they record to it.
func (s *Service) Caller(ctx context.Context) (string, error) {
	_, id, err := s.act(ctx, "")
	return id, err
}

// Presence returns agentID's presence state (one of the Presence*
// constants) and when it was last seen (zero when never). An agent no
// process hosts whose last sign of life is older than aacp.staleAfterMs
// is retired from the registry on the way, and then reads unknown.
func (s *Service) Presence(ctx context.Context, agentID string) (string, time.Time, error) {
	b, err := s.Broker(false)
	if err != nil || b == nil {
		return PresenceUnknown, time.Time{}, err
	}
	all, err := s.agents(ctx, b)
	if err != nil {
		return PresenceUnknown, time.Time{}, err
	}
	if i := slices.IndexFunc(all, func(a AgentPresence) bool { return a.AgentID == agentID }); i >= 0 {
		return all[i].Presence, all[i].LastSeen, nil
	}
	if s.heldBySomeone(agentID) { // hosted here, unlisted (a made-up default id)
		rec, _ := s.presence.read(ctx, agentID)
		return s.grade(true, rec.LastSeen), rec.LastSeen, nil
	}
	// Hosted on another machine whose registry this one does not share
	// (messaging on files, presence on NATS): its shared record decides.
	if rec, ok := s.presence.read(ctx, agentID); ok && s.presence.shared {
		return s.grade(!rec.Released, rec.LastSeen), rec.LastSeen, nil
	}
	return PresenceUnknown, time.Time{}, nil
}

// AgentPresence is a registered agent with its presence.
type AgentPresence struct {
	broker.AgentInfo
	// Presence is online, idle, stale or offline.
	Presence string `json:"presence"`
	// LastSeen is the agent's last tool call or heartbeat (its
	// registration when it never made one).
	LastSeen time.Time `json:"lastSeen,omitzero"`
	Status   string    `json:"status,omitempty"`
	Note     string    `json:"note,omitempty"`
}

// agents lists the registered agents with their presence, retiring those
// gone for longer than the stale interval.
func (s *Service) agents(ctx context.Context, b *broker.Broker) ([]AgentPresence, error) {
	out, err := b.Agents(ctx, broker.AgentsInput{})
	if err != nil {
		return nil, err
	}
	now := s.now()
	list := make([]AgentPresence, 0, len(out.Agents))
	for _, a := range out.Agents {
		rec, ok := s.presence.read(ctx, a.AgentID)
		seen := rec.LastSeen
		if !ok || seen.Before(a.RegisteredAt) {
			seen = a.RegisteredAt
		}
		if !a.Online && now.Sub(seen) >= s.staleAfter && s.retire(ctx, b, a.AgentID) == nil {
			continue // retired (one that came back meanwhile is listed)
		}
		list = append(list, AgentPresence{AgentInfo: a, Presence: s.grade(a.Online, seen), LastSeen: seen, Status: rec.Status, Note: rec.Note})
	}
	return list, nil
}

// GradePresence returns the presence of a registered agent (hosted: a
// process hosts it, as the registry says; registeredAt: when it
// registered) and when it was last seen, from its presence record in
// this service's presence store — the data directory's files, or the
// shared bucket on NATS — graded on this service's clock. Unlike
// Presence it writes nothing (it retires no stale agent): for readers
// such as mcprt aacp agents.
func (s *Service) GradePresence(ctx context.Context, agentID string, hosted bool, registeredAt time.Time) (string, time.Time) {
	rec, ok := s.presence.read(ctx, agentID)
	seen := rec.LastSeen
	if !ok || seen.Before(registeredAt) {
		seen = registeredAt
	}
	return s.grade(hosted, seen), seen
}

// grade is the presence of an agent hosted (or not) and last seen at seen.
func (s *Service) grade(hosted bool, seen time.Time) string {
	if !hosted {
		return PresenceOffline
	}
	switch age := s.now().Sub(seen); {
	case seen.IsZero() || age >= s.staleAfter:
		return PresenceStale
	case age >= s.idleAfter:
		return PresenceIdle
	}
	return PresenceOnline
}

// retire removes an agent no one hosts from the registry.
func (s *Service) retire(ctx context.Context, b *broker.Broker, agentID string) error {
	if err := b.Retire(ctx, agentID); err != nil {
		return fmt.Errorf("retire the stale agent %q: %w", agentID, err)
	}
	s.presence.remove(ctx, agentID)
	return nil
}

// Tell puts a short notice into agentID's inbox through the durable
// messaging path: subject says what happened, payload carries the facts
// (a released reservation, a task handed over). The notice comes from
// NoticeSender ("_broker"), as a NoticeType message with payload
// {subject, ...payload}; it needs no answer.
func (s *Service) Tell(ctx context.Context, agentID, subject string, payload map[string]any) error {
	if err := envelope.CheckAgentID(agentID); err != nil {
		return err
	}
	if subject == "" {
		return core.Errorf(core.CodeInvalidArgument, "a notice to %q needs a subject saying what happened", agentID)
	}
	b, err := s.broker()
	if err != nil {
		return err
	}
	body := map[string]any{}
	for k, v := range payload {
		body[k] = v
	}
	body["subject"] = subject
	raw, err := json.Marshal(body)
	if err != nil {
		return core.Errorf(core.CodeInvalidArgument, "the notice to %q cannot be encoded as JSON: %v", agentID, err)
	}
	if err := b.Notify(ctx, agentID, NoticeType, raw); err != nil {
		return fmt.Errorf("tell %q: %w", agentID, err)
	}
	return nil
}
