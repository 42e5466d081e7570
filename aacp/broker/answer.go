package broker

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/core"
)

// Ack answers a message agentID received: in.Status "received" or
// "queued" confirms receipt (the sender's delivery becomes DELIVERED),
// "processed" confirms processing (PROCESSED, outcome COMPLETED). A
// message ACKed received or queued may be ACKed processed later. The
// answer is recorded in agentID's ledger before the ACK goes out, so a
// later retry of the same request is answered again rather than handed
// out. An unknown messageId, or one already processed or NACKed, is
// NOT_FOUND.
func (b *Broker) Ack(ctx context.Context, agentID string, in AckInput) (AnswerOutput, error) {
	switch in.Status {
	case journal.InboundReceived, journal.InboundProcessed, journal.InboundQueued:
	case "":
		return AnswerOutput{}, envelope.Errorf(envelope.CodeMissingField, "status is missing; want received, processed or queued").WithDetail("path", "/status")
	default:
		return AnswerOutput{}, envelope.Errorf(envelope.CodeInvalidEnum, "status %q is unknown; want received, processed or queued", in.Status).WithDetail("path", "/status")
	}
	payload := func(now time.Time) json.RawMessage { return ackPayload(in.MessageID, in.Status, in.Notes, now) }
	return b.answer(ctx, agentID, in.MessageID, journal.InboundRecord{Status: in.Status}, envelope.Ack, payload)
}

// Nack rejects a message agentID received, with a reason and optionally
// an error code; with CanRetry the sender retries it (same requestId),
// without it the sender's delivery FAILS. Unknown ids are NOT_FOUND.
func (b *Broker) Nack(ctx context.Context, agentID string, in NackInput) (AnswerOutput, error) {
	if in.Reason == "" {
		return AnswerOutput{}, envelope.Errorf(envelope.CodeMissingField, "reason is missing; say why the message is rejected").WithDetail("path", "/reason")
	}
	if in.ErrorCode != "" && !upperSnake(in.ErrorCode) {
		return AnswerOutput{}, envelope.Errorf(envelope.CodeSchema, "errorCode %q is not an UPPER_SNAKE_CASE code; use a catalogue code such as E_TASK_003", in.ErrorCode).WithDetail("path", "/errorCode")
	}
	rec := journal.InboundRecord{Status: journal.InboundNacked, CanRetry: in.CanRetry, Reason: in.Reason, ErrorCode: in.ErrorCode}
	payload := func(now time.Time) json.RawMessage {
		return nackPayload(in.MessageID, in.Reason, in.ErrorCode, in.CanRetry, now)
	}
	return b.answer(ctx, agentID, in.MessageID, rec, envelope.Nack, payload)
}

// answer records rec for the message and sends the reply.
func (b *Broker) answer(ctx context.Context, agentID, messageID string, rec journal.InboundRecord, typ string, payload func(time.Time) json.RawMessage) (AnswerOutput, error) {
	if messageID == "" {
		return AnswerOutput{}, envelope.Errorf(envelope.CodeMissingField, "messageId is missing; pass the id of a received message").WithDetail("path", "/messageId")
	}
	l, err := b.local(agentID)
	if err != nil {
		return AnswerOutput{}, err
	}
	// A message handed out is known: answer it without a read of the
	// journal (a round trip on NATS, and a wait behind a read under way).
	// A transmission of its request not read yet is then a retry made
	// after the answer: it is answered again when read, never handed out.
	// Only an unknown id is worth reading the inbox for.
	l.mu.Lock()
	known := l.items[messageID] != nil
	l.mu.Unlock()
	if !known {
		if err := b.ingest(ctx, l); err != nil {
			b.log.Warn("aacp: reading an inbox failed", "agent", agentID, "err", err)
		}
	}
	now := b.now()
	l.mu.Lock()
	it := l.items[messageID]
	if it == nil {
		l.mu.Unlock()
		return AnswerOutput{}, core.Errorf(core.CodeNotFound, "agent %q has no message %q waiting for an answer (unknown, already processed or NACKed, or expired); answer the ids Receive returned", agentID, messageID)
	}
	env := it.env
	if exp := env.ExpiresAt(); expiredAt(exp, now) {
		l.forget(it)
		l.mu.Unlock()
		return AnswerOutput{}, envelope.Errorf(envelope.CodeTimeout,
			"message %q expired at %s (its ttl), so its delivery FAILED and the sender %q was told so; it can no longer be answered: do not act on it, or ask %q to send it again",
			messageID, exp.Format(envelope.TimestampLayout), env.Sender.AgentID, env.Sender.AgentID).WithDetail("path", "/messageId")
	}
	rec.Sender, rec.RequestID, rec.MessageID, rec.At = env.Sender.AgentID, env.RequestID, messageID, now
	rec.ExpiresAt = env.ExpiresAt()
	for _, s := range it.seqs {
		rec.Seq = max(rec.Seq, s)
	}
	if err := l.ledger.Put(ctx, journal.InboundRec(rec)); err != nil {
		l.mu.Unlock()
		return AnswerOutput{}, envelope.Errorf(envelope.CodeChannelUnavailable, "record the answer to %q: %w", messageID, err)
	}
	if rec.Status == journal.InboundReceived || rec.Status == journal.InboundQueued {
		if it.state == queued {
			l.unqueue(it)
		}
		it.state = answered
	} else {
		l.forget(it)
	}
	ack := l.ackFor(env.Sender.AgentID)
	from := l.agent()
	l.mu.Unlock()
	out := AnswerOutput{MessageID: messageID, RequestID: env.RequestID, Status: rec.Status}
	if env.Sender.AgentID == envelope.SystemAgentID {
		if err := l.ledger.Sync(ctx); err != nil {
			return AnswerOutput{}, envelope.Errorf(envelope.CodeChannelUnavailable, "record the answer to %q: %w", messageID, err)
		}
		return out, nil // the broker's own reports want no reply
	}
	// The answer is written to the ledger (a process that dies keeps
	// it); its fsync and the reply's overlap, so an answer waits for one
	// fsync, not two in a row.
	synced := make(chan error, 1)
	go func() { synced <- l.ledger.Sync(ctx) }()
	reply := b.replyEnvelope(from, env, typ, payload(now), ack, now)
	_, aerr := b.store.Append(ctx, &reply)
	if err := <-synced; err != nil {
		return AnswerOutput{}, envelope.Errorf(envelope.CodeChannelUnavailable, "record the answer to %q: %w", messageID, err)
	}
	if aerr != nil {
		// The answer is recorded: the sender's retry will be answered.
		return out, envelope.Errorf(envelope.CodeChannelUnavailable, "send the %s for %q to %q (it is recorded and will be repeated when the sender retries): %w", typ, messageID, env.Sender.AgentID, aerr)
	}
	b.appended(&reply)
	out.ReplyMessageID = reply.MessageID
	return out, nil
}

// replyEnvelope builds an ACK or NACK from `from` to the sender of env.
func (b *Broker) replyEnvelope(from envelope.Agent, env envelope.Envelope, typ string, payload json.RawMessage, ack uint64, now time.Time) envelope.Envelope {
	id := b.ids.NewID()
	corr := env.CorrelationID
	if corr == "" {
		corr = env.RequestID
	}
	return envelope.Envelope{
		Ack: ack, Version: envelope.Version, MessageID: id, RequestID: id, CorrelationID: corr,
		Timestamp: envelope.FormatTime(now), Sender: from, Receiver: env.Sender,
		MessageType: typ, Priority: envelope.High, Payload: payload,
		Metadata: envelope.Metadata{TTL: int64(b.ttl / time.Second)},
	}
}

// replyLogged sends an ACK or NACK from within ingest (mu held), logging
// a failure: the sender will retry and be answered then.
func (b *Broker) replyLogged(ctx context.Context, l *local, env *envelope.Envelope, payload json.RawMessage, typ string) {
	reply := b.replyEnvelope(l.agent(), *env, typ, payload, l.ackFor(env.Sender.AgentID), b.now())
	if _, err := b.store.Append(ctx, &reply); err != nil {
		b.log.Warn("aacp: repeating an answer failed", "agent", l.id, "messageId", env.MessageID, "err", err)
		return
	}
	b.appended(&reply)
}

func ackPayload(messageID, status, notes string, now time.Time) json.RawMessage {
	p := struct {
		AcknowledgedMessageID string `json:"acknowledgedMessageId"`
		Status                string `json:"status"`
		Timestamp             string `json:"timestamp"`
		Notes                 string `json:"notes,omitempty"`
	}{messageID, status, envelope.FormatTime(now), notes}
	b, _ := json.Marshal(p) // cannot fail: strings only
	return b
}

func nackPayload(messageID, reason, code string, canRetry bool, now time.Time) json.RawMessage {
	p := struct {
		RejectedMessageID string `json:"rejectedMessageId"`
		Reason            string `json:"reason"`
		ErrorCode         string `json:"errorCode,omitempty"`
		Timestamp         string `json:"timestamp"`
		CanRetry          bool   `json:"canRetry"`
	}{messageID, reason, code, envelope.FormatTime(now), canRetry}
	b, _ := json.Marshal(p) // cannot fail: strings and a bool
	return b
}

// upperSnake reports whether s is an UPPER_SNAKE_CASE code of at most 64
// bytes.
func upperSnake(s string) bool {
	if s == "" || len(s) > 64 || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
