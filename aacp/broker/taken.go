package broker

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
)

// TakenType is the message type of the notice a receiver appends to the
// reverse channel when Receive hands out messages: it tells the sender,
// in whatever process hosts it, that the acknowledgement timers of those
// transmissions start now. It is a custom type, so that other readers of
// the channel files see a valid envelope; Send refuses it, and receivers
// never hand it out.
const TakenType = "CUSTOM_MCPRT_TAKEN"

// takenPayload is the payload of a TakenType notice.
type takenPayload struct {
	TakenMessageIDs []string `json:"takenMessageIds"`
	Timestamp       string   `json:"timestamp"`
}

// noteTaken appends one TakenType notice per sender of msgs (the broker's
// own reports excepted). A notice that cannot be written is logged: the
// message then stays unacknowledged until its ttl unless answered, which
// is the state it was in before it was taken.
func (b *Broker) noteTaken(ctx context.Context, l *local, msgs []Message) {
	bySender := map[string][]Message{}
	var order []string
	for _, m := range msgs {
		s := m.Sender.AgentID
		if s == envelope.SystemAgentID {
			continue
		}
		if _, ok := bySender[s]; !ok {
			order = append(order, s)
		}
		bySender[s] = append(bySender[s], m)
	}
	if len(order) == 0 {
		return
	}
	now := b.now()
	from := l.agent()
	for _, s := range order {
		group := bySender[s]
		p := takenPayload{Timestamp: envelope.FormatTime(now)}
		for _, m := range group {
			p.TakenMessageIDs = append(p.TakenMessageIDs, m.MessageID)
		}
		raw, _ := json.Marshal(p) // cannot fail: strings only
		notice := b.replyEnvelope(from, group[0].Envelope, TakenType, raw, l.ackFor(s), now)
		notice.Priority = envelope.High
		if _, err := b.store.Append(ctx, &notice); err != nil {
			b.log.Warn("aacp: telling a sender its messages were taken failed", "agent", l.id, "sender", s, "err", err)
			continue
		}
		b.appended(&notice)
	}
}

// onTaken starts the acknowledgement timers of l's transmissions that the
// receiver took (called from ingest). A transmission already taken, or
// no longer current, is left alone.
func (b *Broker) onTaken(ctx context.Context, l *local, env *envelope.Envelope) {
	var p takenPayload
	if err := json.Unmarshal(env.Payload, &p); err != nil {
		b.log.Warn("aacp: ignoring an undecodable taken notice", "agent", l.id, "messageId", env.MessageID, "err", err)
		return
	}
	l.smu.Lock()
	defer l.smu.Unlock()
	now := b.now()
	for _, id := range p.TakenMessageIDs {
		m, ok := l.ledger.Message(id)
		if !ok || m.Receiver != env.Sender.AgentID {
			continue
		}
		cur, ok := l.ledger.Delivery(m.RequestID, m.Receiver)
		if !ok || cur.MessageID != id || cur.State != journal.InTransit || !cur.AckDeadline.IsZero() {
			continue
		}
		req, _ := l.ledger.Request(cur.RequestID)
		timeout := b.policyFor(req.Envelope.MessageType).AckTimeout
		if timeout <= 0 {
			continue
		}
		next := cur
		next.At, next.AckDeadline = now, now.Add(timeout)
		b.put(ctx, l, next)
		l.timers.push(timer{due: next.AckDeadline, requestID: next.RequestID, receiver: next.Receiver, messageID: next.MessageID})
	}
}

// Notify puts a notice of messageType (a CUSTOM_* type) with payload into
// the inbox of the registered agent receiver, from the broker itself
// (envelope.SystemAgentID): it needs no answer and is never retried. It
// returns once the notice is durable. Errors: E_ROUTING_001 for an agent
// that is not registered, E_VALIDATION_* for a bad type or payload,
// E_ROUTING_003 when the channel cannot be written.
func (b *Broker) Notify(ctx context.Context, receiver, messageType string, payload json.RawMessage) error {
	if !envelope.IsCustomType(messageType) || messageType == TakenType {
		return envelope.Errorf(envelope.CodeInvalidEnum, "a notice's type must be CUSTOM_*, not %q", messageType)
	}
	to, err := b.route(ctx, envelope.SystemAgentID, Receiver{AgentID: receiver})
	if err != nil {
		return err
	}
	now := b.now()
	id := b.ids.NewID()
	env := envelope.Envelope{
		Version: envelope.Version, MessageID: id, RequestID: id, Timestamp: envelope.FormatTime(now),
		Sender: envelope.Agent{AgentID: envelope.SystemAgentID, Type: envelope.AdHoc}, Receiver: envelope.Agent{AgentID: receiver, Type: to[0].Type},
		MessageType: messageType, Priority: envelope.Normal, Payload: payload, Metadata: envelope.Metadata{TTL: int64(b.ttl / time.Second)},
	}
	enc, err := b.v.Encode(nil, &env)
	if err != nil {
		return err
	}
	_ = enc // validated; the store encodes it again
	if _, err := b.store.Append(ctx, &env); err != nil {
		return envelope.Errorf(envelope.CodeChannelUnavailable, "write the notice to %q: %w", receiver, err)
	}
	b.appended(&env)
	return nil
}
