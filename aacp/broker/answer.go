package broker

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
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
	if err := checkAckStatus(in.Status); err != nil {
		return AnswerOutput{}, err
	}
	payload := func(now time.Time) json.RawMessage { return ackPayload(in.MessageID, in.Status, in.Notes, now) }
	return b.answer(ctx, agentID, in.MessageID, journal.InboundRecord{Status: in.Status}, envelope.Ack, payload)
}

// AckAll answers several messages agentID received with one status, as
// Ack answers one, but at once: their records share one ledger write
// and their ACKs are appended together (on NATS, those to one sender
// share one JetStream batch), so a receiver that took a batch answers it
// for about the price of one answer. It returns one result per id, in
// order: an id Ack would refuse (unknown, expired) fails alone. The
// error is for the call as a whole: a bad status, an empty or too long
// list, an empty or repeated id, an agent this broker does not host.
func (b *Broker) AckAll(ctx context.Context, agentID string, in AckAllInput) ([]AnswerResult, error) {
	if err := checkAckStatus(in.Status); err != nil {
		return nil, err
	}
	switch n := len(in.MessageIDs); {
	case n == 0:
		return nil, envelope.Errorf(envelope.CodeMissingField, "messageIds is empty; pass the ids of received messages").WithDetail("path", "/messageIds")
	case n > MaxReceive:
		return nil, envelope.Errorf(envelope.CodeSchema, "messageIds holds %d ids; want at most %d (answer the rest in another call)", n, MaxReceive).WithDetail("path", "/messageIds")
	}
	seen := make(map[string]int, len(in.MessageIDs))
	reqs := make([]answerReq, len(in.MessageIDs))
	for i, id := range in.MessageIDs {
		path := "/messageIds/" + strconv.Itoa(i)
		if id == "" {
			return nil, envelope.Errorf(envelope.CodeMissingField, "messageIds[%d] is empty; pass the id of a received message", i).WithDetail("path", path)
		}
		if j, ok := seen[id]; ok {
			return nil, envelope.Errorf(envelope.CodeSchema, "messageIds[%d] repeats messageIds[%d] (%q); pass each id once", i, j, id).WithDetail("path", path)
		}
		seen[id] = i
		reqs[i] = answerReq{messageID: id, rec: journal.InboundRecord{Status: in.Status}, typ: envelope.Ack,
			payload: func(now time.Time) json.RawMessage { return ackPayload(id, in.Status, in.Notes, now) }}
	}
	return b.answerAll(ctx, agentID, reqs)
}

// checkAckStatus refuses an ACK status other than received, processed
// or queued.
func checkAckStatus(status string) error {
	switch status {
	case journal.InboundReceived, journal.InboundProcessed, journal.InboundQueued:
		return nil
	case "":
		return envelope.Errorf(envelope.CodeMissingField, "status is missing; want received, processed or queued").WithDetail("path", "/status")
	default:
		return envelope.Errorf(envelope.CodeInvalidEnum, "status %q is unknown; want received, processed or queued", status).WithDetail("path", "/status")
	}
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
	res, err := b.answerAll(ctx, agentID, []answerReq{{messageID: messageID, rec: rec, typ: typ, payload: payload}})
	if err != nil {
		return AnswerOutput{}, err
	}
	return res[0].AnswerOutput, res[0].Err
}

// answerReq is one answer of a call to answerAll.
type answerReq struct {
	messageID string
	rec       journal.InboundRecord
	typ       string
	payload   func(time.Time) json.RawMessage
}

// answerAll records the answers reqs (each to a different message) and
// sends their replies, all at once: their records go to the ledger in
// one Put (one write), and their replies are appended together (on
// NATS, those to one sender in one JetStream batch), the ledger's sync
// overlapping the appends. It returns one result per answer, in order;
// the error is for the call as a whole (an agent this broker does not
// host).
func (b *Broker) answerAll(ctx context.Context, agentID string, reqs []answerReq) ([]AnswerResult, error) {
	l, err := b.local(agentID)
	if err != nil {
		return nil, err
	}
	// A message handed out is known: answer it without a read of the
	// journal (a round trip on NATS, and a wait behind a read under way).
	// A transmission of its request not read yet is then a retry made
	// after the answer: it is answered again when read, never handed out.
	// Only an unknown id is worth reading the inbox for.
	l.mu.Lock()
	known := true
	for _, r := range reqs {
		known = known && l.items[r.messageID] != nil
	}
	l.mu.Unlock()
	if !known {
		if err := b.ingest(ctx, l); err != nil {
			b.log.Warn("aacp: reading an inbox failed", "agent", agentID, "err", err)
		}
	}
	res := make([]AnswerResult, len(reqs))
	type pending struct {
		i   int
		it  *item
		rec journal.InboundRecord
	}
	var todo []pending
	var recs []journal.Record
	taken := map[*item]bool{} // answered in this call: two ids of one request
	now := b.now()
	l.mu.Lock()
	for i, r := range reqs {
		it := l.items[r.messageID]
		final := r.rec.Status == journal.InboundProcessed || r.rec.Status == journal.InboundNacked
		if it != nil && taken[it] && final {
			it = nil // as if answered by an earlier call: processed or NACKed, it is gone
		}
		if it == nil {
			res[i].Err = core.Errorf(core.CodeNotFound, "agent %q has no message %q waiting for an answer (unknown, already processed or NACKed, or expired); answer the ids Receive returned", agentID, r.messageID)
			continue
		}
		env := it.env
		if exp := env.ExpiresAt(); expiredAt(exp, now) {
			l.forget(it)
			res[i].Err = envelope.Errorf(envelope.CodeTimeout,
				"message %q expired at %s (its ttl), so its delivery FAILED and the sender %q was told so; it can no longer be answered: do not act on it, or ask %q to send it again",
				r.messageID, exp.Format(envelope.TimestampLayout), env.Sender.AgentID, env.Sender.AgentID).WithDetail("path", "/messageId")
			continue
		}
		rec := r.rec
		rec.Sender, rec.RequestID, rec.MessageID, rec.At = env.Sender.AgentID, env.RequestID, r.messageID, now
		rec.ExpiresAt = env.ExpiresAt()
		for _, s := range it.seqs {
			rec.Seq = max(rec.Seq, s)
		}
		taken[it] = true
		todo = append(todo, pending{i, it, rec})
		recs = append(recs, journal.InboundRec(rec))
	}
	if len(todo) == 0 {
		l.mu.Unlock()
		return res, nil
	}
	if err := l.ledger.Put(ctx, recs...); err != nil {
		l.mu.Unlock()
		for _, p := range todo {
			res[p.i].Err = envelope.Errorf(envelope.CodeChannelUnavailable, "record the answer to %q: %w", reqs[p.i].messageID, err)
		}
		return res, nil
	}
	from := l.agent()
	var replies []*envelope.Envelope
	var replyOf []int // the answer of each reply
	for _, p := range todo {
		if p.rec.Status == journal.InboundReceived || p.rec.Status == journal.InboundQueued {
			if p.it.state == queued {
				l.unqueue(p.it)
			}
			p.it.state = answered
		} else {
			l.forget(p.it)
		}
		env := p.it.env
		res[p.i].AnswerOutput = AnswerOutput{MessageID: reqs[p.i].messageID, RequestID: env.RequestID, Status: p.rec.Status}
		if env.Sender.AgentID == envelope.SystemAgentID {
			continue // the broker's own reports want no reply
		}
		reply := b.replyEnvelope(from, env, reqs[p.i].typ, reqs[p.i].payload(now), l.ackFor(env.Sender.AgentID), now)
		replies = append(replies, &reply)
		replyOf = append(replyOf, p.i)
	}
	l.mu.Unlock()
	// The answers are written to the ledger (a process that dies keeps
	// them); its fsync and the replies' overlap, so an answer waits for
	// one fsync, not two in a row.
	synced := make(chan error, 1)
	go func() { synced <- l.ledger.Sync(ctx) }()
	errs := b.appendAll(ctx, replies)
	if err := <-synced; err != nil {
		for _, p := range todo {
			res[p.i].AnswerOutput = AnswerOutput{}
			res[p.i].Err = envelope.Errorf(envelope.CodeChannelUnavailable, "record the answer to %q: %w", reqs[p.i].messageID, err)
		}
		return res, nil
	}
	var sent []*envelope.Envelope
	for k, reply := range replies {
		i := replyOf[k]
		if errs[k] != nil {
			// The answer is recorded: the sender's retry will be answered.
			res[i].Err = envelope.Errorf(envelope.CodeChannelUnavailable, "send the %s for %q to %q (it is recorded and will be repeated when the sender retries): %w", reqs[i].typ, reqs[i].messageID, reply.Receiver.AgentID, errs[k])
			continue
		}
		res[i].ReplyMessageID = reply.MessageID
		sent = append(sent, reply)
	}
	b.appended(sent...)
	return res, nil
}

// batchAppender is a store that appends several transmissions at once,
// those of one channel in one write (natsjournal.Store: one JetStream
// atomic batch).
type batchAppender interface {
	AppendAll(ctx context.Context, envs []*envelope.Envelope) []error
}

// appendAll appends envs and returns one error per envelope: at once
// when the store is a batchAppender, otherwise concurrently (a file
// journal's concurrent appends to one channel share its fsync).
func (b *Broker) appendAll(ctx context.Context, envs []*envelope.Envelope) []error {
	if len(envs) == 0 {
		return nil
	}
	errs := make([]error, len(envs))
	switch ba, ok := b.store.(batchAppender); {
	case len(envs) == 1:
		_, errs[0] = b.store.Append(ctx, envs[0])
	case ok:
		return ba.AppendAll(ctx, envs)
	default:
		var wg sync.WaitGroup
		for i, env := range envs {
			wg.Go(func() { _, errs[i] = b.store.Append(ctx, env) })
		}
		wg.Wait()
	}
	return errs
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
