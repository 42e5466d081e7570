package broker

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
)

// MaxInboxMessages bounds the messages InboxOutput lists; the counts
// cover them all.
const MaxInboxMessages = 100

// Inbox states of an InboxMessage.
const (
	// InboxQueued: waiting to be handed out by Receive.
	InboxQueued = "queued"
	// InboxHandedOut: handed out by Receive, not answered yet (Ack with
	// status received, queued or processed, or Nack, answers it).
	InboxHandedOut = "handedOut"
)

// InboxMessage is an unfinished message in an agent's inbox.
type InboxMessage struct {
	Message
	// State is InboxQueued or InboxHandedOut.
	State string `json:"state"`
}

// InboxOutput is the result of Inbox: an agent's unfinished inbox.
type InboxOutput struct {
	AgentID string `json:"agentId"`
	// Messages are the queued messages in the order Receive would hand
	// them out (HIGH before NORMAL before LOW, arrival order within a
	// priority), then the handed-out ones in the same order; at most
	// MaxInboxMessages.
	Messages []InboxMessage `json:"messages"`
	// Queued and HandedOut count every unfinished message.
	Queued    int `json:"queued"`
	HandedOut int `json:"handedOut"`
	// Truncated: Messages lists only the first MaxInboxMessages.
	Truncated bool `json:"truncated,omitempty"`
}

// Inbox returns agentID's unfinished inbox: the messages waiting to be
// handed out and those handed out but not answered yet, expired ones
// left out. It reads what is new in the agent's channels first (as the
// agent's inbox goroutine would), but hands nothing out and answers
// nothing: delivery states stay as they are. Errors: E_ROUTING_001 when
// this broker does not host agentID, E_ROUTING_002 for an unusable id,
// E_ROUTING_003 when the journal cannot be read.
func (b *Broker) Inbox(ctx context.Context, agentID string) (InboxOutput, error) {
	l, err := b.local(agentID)
	if err != nil {
		return InboxOutput{}, err
	}
	if err := b.ingest(ctx, l); err != nil {
		return InboxOutput{}, envelope.Errorf(envelope.CodeChannelUnavailable, "read the inbox of agent %q: %w", agentID, err)
	}
	return l.peek(b.now()), nil
}

// peek lists l's unfinished messages without changing anything.
func (l *local) peek(now time.Time) InboxOutput {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := InboxOutput{AgentID: l.id, Messages: []InboxMessage{}}
	add := func(it *item, state string) {
		if state == InboxQueued {
			out.Queued++
		} else {
			out.HandedOut++
		}
		if len(out.Messages) == MaxInboxMessages {
			out.Truncated = true
			return
		}
		out.Messages = append(out.Messages, InboxMessage{Message: Message{Envelope: it.env, Redelivered: it.redelivered}, State: state})
	}
	for _, q := range l.queues {
		for _, it := range q {
			if !expiredAt(it.env.ExpiresAt(), now) {
				add(it, InboxQueued)
			}
		}
	}
	var held []*item
	for id, it := range l.items {
		// An item appears under each of its messageIds: take it once.
		if it.state == inHand && it.ids[len(it.ids)-1] == id && !expiredAt(it.env.ExpiresAt(), now) {
			held = append(held, it)
		}
	}
	slices.SortFunc(held, func(x, y *item) int {
		return cmp.Or(cmp.Compare(x.env.Priority.Rank(), y.env.Priority.Rank()), cmp.Compare(x.order, y.order))
	})
	for _, it := range held {
		add(it, InboxHandedOut)
	}
	return out
}
