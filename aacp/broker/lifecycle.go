package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/core"
)

// The sending side's state machine. Every change of a delivery's state
// happens under the sender's smu, reads the delivery's current record
// from the ledger and Puts the next one, so concurrent ACKs, NACKs,
// timeouts and requeues of one delivery are serialised.

// replyPayload is what the sender reads from an ACK or NACK.
type replyPayload struct {
	AcknowledgedMessageID string `json:"acknowledgedMessageId"`
	RejectedMessageID     string `json:"rejectedMessageId"`
	Status                string `json:"status"`
	Reason                string `json:"reason"`
	ErrorCode             string `json:"errorCode"`
	CanRetry              bool   `json:"canRetry"`
}

// onReply applies an ACK or NACK that arrived for one of l's
// transmissions (called from ingest).
func (b *Broker) onReply(ctx context.Context, l *local, env *envelope.Envelope) {
	var p replyPayload
	if err := json.Unmarshal(env.Payload, &p); err != nil {
		b.log.Warn("aacp: ignoring an undecodable reply", "agent", l.id, "messageId", env.MessageID, "err", err)
		return
	}
	id := p.AcknowledgedMessageID
	if env.MessageType == envelope.Nack {
		id = p.RejectedMessageID
	}
	m, ok := l.ledger.Message(id)
	if !ok || m.Receiver != env.Sender.AgentID {
		b.log.Debug("aacp: a reply for an unknown transmission", "agent", l.id, "for", id, "from", env.Sender.AgentID)
		return
	}
	l.smu.Lock()
	defer l.smu.Unlock()
	cur, ok := l.ledger.Delivery(m.RequestID, m.Receiver)
	if !ok {
		return
	}
	if env.MessageType == envelope.Ack {
		b.acked(ctx, l, cur, p.Status)
	} else {
		b.nacked(ctx, l, cur, p)
	}
}

// put records a delivery's next state; smu is held.
func (b *Broker) put(ctx context.Context, l *local, m journal.MessageRecord) {
	if err := l.ledger.Put(ctx, journal.MessageRec(m)); err != nil {
		b.log.Error("aacp: recording a delivery state failed", "agent", l.id, "messageId", m.MessageID, "state", m.State, "err", err)
	}
}

// acked moves a delivery on after an ACK with status.
func (b *Broker) acked(ctx context.Context, l *local, cur journal.MessageRecord, status string) {
	target := journal.Delivered
	if status == journal.InboundProcessed {
		target = journal.Processed
	}
	switch cur.State {
	case journal.Processed:
		return
	case journal.Delivered:
		if target != journal.Processed {
			return
		}
	case journal.Failed:
		// Settled: a FAILED delivery never turns into a success. The
		// receiver refuses such an ACK itself (the message expired); one
		// that still arrives (clocks apart) is ignored.
		b.log.Warn("aacp: ignoring an ACK for a FAILED delivery", "agent", l.id, "requestId", cur.RequestID, "receiver", cur.Receiver)
		return
	}
	next := cur
	next.State, next.At, next.AckStatus = target, b.now(), status
	next.AckDeadline, next.NextRetryAt, next.Reason, next.Code = time.Time{}, time.Time{}, "", ""
	b.put(ctx, l, next)
	b.settle(ctx, l, cur.RequestID)
}

// nacked handles a NACK: a retry when the receiver allows one and the
// budget has room, otherwise failure.
func (b *Broker) nacked(ctx context.Context, l *local, cur journal.MessageRecord, p replyPayload) {
	if cur.State.Terminal() {
		return
	}
	reason := "rejected by " + cur.Receiver + ": " + p.Reason
	code := core.Code(p.ErrorCode)
	if p.CanRetry {
		b.retryOrFail(ctx, l, cur, reason, code, true)
		return
	}
	b.fail(ctx, l, cur, code, reason)
}

// retryOrFail schedules the next transmission of a delivery, or fails it
// when it has expired or, with budget, when its retry budget is spent.
// An ack timeout (a taken message left unanswered) has no budget: it is
// re-offered until the message's ttl ends.
func (b *Broker) retryOrFail(ctx context.Context, l *local, cur journal.MessageRecord, reason string, code core.Code, budget bool) {
	now := b.now()
	req, _ := l.ledger.Request(cur.RequestID)
	pol := b.policyFor(req.Envelope.MessageType)
	attempt := cur.RetryCount - cur.RetryBase
	switch {
	case expiredAt(cur.ExpiresAt, now):
		b.fail(ctx, l, cur, envelope.CodeTimeout, reason+"; the message expired (ttl) before it was acknowledged")
		return
	case budget && attempt >= pol.MaxRetries:
		if code == "" {
			code = envelope.CodeTimeout
		}
		b.fail(ctx, l, cur, code, fmt.Sprintf("%s; gave up after %d transmissions", reason, attempt+1))
		return
	}
	next := cur
	next.State, next.At, next.Reason, next.Code = journal.Pending, now, reason, code
	next.AckDeadline = time.Time{}
	next.NextRetryAt = now.Add(Backoff(pol.BaseBackoff, b.maxWait, min(attempt, 30), b.jitter, b.rand()))
	b.put(ctx, l, next)
	l.timers.push(timer{due: next.NextRetryAt, requestID: cur.RequestID, receiver: cur.Receiver, messageID: cur.MessageID})
}

// fail makes a delivery FAILED: it goes to the dead-letter queue and the
// sender gets an ERROR_REPORT.
func (b *Broker) fail(ctx context.Context, l *local, cur journal.MessageRecord, code core.Code, reason string) {
	next := cur
	next.State, next.At, next.Reason, next.Code = journal.Failed, b.now(), reason, code
	next.AckDeadline, next.NextRetryAt = time.Time{}, time.Time{}
	b.put(ctx, l, next)
	if err := b.store.AddDeadLetter(ctx, b.deadLetter(l, next, journal.DeadActive)); err != nil {
		b.log.Error("aacp: adding a dead letter failed", "messageId", cur.MessageID, "err", err)
	}
	b.reportFailure(ctx, l, next)
	b.settle(ctx, l, cur.RequestID)
}

// deadLetter describes a failed transmission.
func (b *Broker) deadLetter(l *local, m journal.MessageRecord, status string) journal.DeadLetter {
	req, _ := l.ledger.Request(m.RequestID)
	env := b.transmission(req, m)
	return journal.DeadLetter{
		MessageID: m.MessageID, RequestID: m.RequestID, Sender: l.id, Receiver: m.Receiver,
		MessageType: req.Envelope.MessageType, Code: m.Code, Reason: m.Reason, RetryCount: m.RetryCount,
		FailedAt: m.At, ExpiresAt: req.ExpiresAt, Status: status, Envelope: &env,
	}
}

// transmission rebuilds the envelope of transmission m of req.
func (b *Broker) transmission(req journal.RequestRecord, m journal.MessageRecord) envelope.Envelope {
	env := req.Envelope
	env.MessageID, env.Seq = m.MessageID, m.Seq
	env.Receiver = envelope.Agent{AgentID: m.Receiver, Type: b.agentType(m.Receiver, req.Envelope.Receiver.Type)}
	env.Metadata.RetryCount = m.RetryCount
	if !m.SentAt.IsZero() {
		env.Timestamp = envelope.FormatTime(m.SentAt)
	}
	return env
}

// agentType is the registered type of id, or def when unknown.
func (b *Broker) agentType(id string, def envelope.AgentType) envelope.AgentType {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.registry[id]; ok {
		return r.Type
	}
	if def == envelope.AnyType || def == "" {
		return envelope.AdHoc
	}
	return def
}

// reportFailure puts an ERROR_REPORT about failed transmission m into
// the sender's inbox, from the broker.
func (b *Broker) reportFailure(ctx context.Context, l *local, m journal.MessageRecord) {
	req, _ := l.ledger.Request(m.RequestID)
	info, known := envelope.LookupCode(m.Code)
	payload, _ := json.Marshal(map[string]any{
		"errorType":    envelope.ErrorType(m.Code),
		"errorCode":    string(m.Code),
		"errorMessage": fmt.Sprintf("delivery of %s %s to %s failed: %s", req.Envelope.MessageType, m.RequestID, m.Receiver, m.Reason),
		"severity":     "high",
		"context": map[string]any{
			"requestId": m.RequestID, "messageId": m.MessageID, "receiver": m.Receiver,
			"messageType": req.Envelope.MessageType, "retryCount": m.RetryCount,
		},
		"recoverable":     !known || info.Recoverable,
		"suggestedAction": "inspect it with aacp_status or aacp_dead_letters; requeue it with aacp_requeue once the receiver can take it",
	})
	now := b.now()
	id := b.ids.NewID()
	corr := req.Envelope.CorrelationID
	if corr == "" {
		corr = m.RequestID
	}
	report := envelope.Envelope{
		Version: envelope.Version, MessageID: id, RequestID: id, CorrelationID: corr,
		Timestamp: envelope.FormatTime(now), Sender: envelope.Agent{AgentID: envelope.SystemAgentID, Type: envelope.AdHoc},
		Receiver: envelope.Agent{AgentID: l.id, Type: req.Envelope.Sender.Type}, MessageType: envelope.ErrorReport,
		Priority: envelope.High, Payload: payload, Metadata: envelope.Metadata{TTL: int64(b.ttl / time.Second)},
	}
	if report.Receiver.Type == "" {
		report.Receiver.Type = envelope.AdHoc
	}
	if _, err := b.store.Append(ctx, &report); err != nil {
		b.log.Error("aacp: sending an ERROR_REPORT failed", "agent", l.id, "requestId", m.RequestID, "err", err)
		return
	}
	b.appended(&report)
}

// settle recomputes a request's outcome from its deliveries and records
// a change.
func (b *Broker) settle(ctx context.Context, l *local, requestID string) {
	req, ok := l.ledger.Request(requestID)
	if !ok {
		return
	}
	outcome := journal.Completed
	var failure *journal.MessageRecord
	open := false
	for _, r := range req.Receivers {
		d, ok := l.ledger.Delivery(requestID, r)
		if !ok {
			open = true
			continue
		}
		switch d.State {
		case journal.Processed:
		case journal.Failed:
			if failure == nil {
				failure = &d
			}
		case journal.Pending, journal.InTransit:
			open = true
			outcome = journal.Unknown
		default:
			outcome = journal.Unknown
		}
	}
	var cerr *core.Error
	if failure != nil && !open {
		outcome = journal.OutcomeFailed
		cerr = envelope.Errorf(failure.Code, "delivery to %s failed: %s", failure.Receiver, failure.Reason)
	} else if failure != nil {
		outcome = journal.Unknown
	}
	if outcome == req.Outcome {
		return
	}
	if err := l.ledger.Put(ctx, journal.OutcomeRec(journal.OutcomeRecord{RequestID: requestID, Outcome: outcome, Error: cerr})); err != nil {
		b.log.Error("aacp: recording an outcome failed", "requestId", requestID, "err", err)
	}
}

// resume schedules l's unfinished deliveries (after a restart).
func (l *local) resume(now time.Time) {
	l.smu.Lock()
	defer l.smu.Unlock()
	for _, m := range l.ledger.Unacknowledged("") {
		due := m.AckDeadline
		switch {
		case m.State == journal.Pending:
			due = m.NextRetryAt
		case due.IsZero() && !m.ExpiresAt.IsZero():
			due = m.ExpiresAt // not taken yet: only its ttl can end it
		}
		if due.IsZero() {
			due = now
		}
		l.timers.push(timer{due: due, requestID: m.RequestID, receiver: m.Receiver, messageID: m.MessageID})
	}
}

// RetryDue does the delivery work that is due at the clock's current
// time: it reads new ACKs and NACKs (Pump), then for each delivery whose
// acknowledgement deadline has passed schedules a retry (or fails it),
// and retransmits each delivery whose retry time has come. It returns how
// many deliveries it acted on. A background goroutine calls it every
// TickInterval unless Options.Manual is set; tests advance a manual clock
// and call it.
func (b *Broker) RetryDue(ctx context.Context) (int, error) {
	if err := b.Pump(ctx); err != nil {
		b.log.Warn("aacp: reading inboxes failed", "err", err)
	}
	n := 0
	for _, l := range b.locals() {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		n += b.retryDue(ctx, l)
	}
	return n, nil
}

func (b *Broker) retryDue(ctx context.Context, l *local) int {
	l.smu.Lock()
	defer l.smu.Unlock()
	n := 0
	now := b.now()
	for ctx.Err() == nil {
		t, ok := l.timers.popDue(now)
		if !ok {
			break
		}
		cur, ok := l.ledger.Delivery(t.requestID, t.receiver)
		if !ok || cur.MessageID != t.messageID {
			continue // superseded
		}
		switch {
		case (cur.State == journal.InTransit || cur.State == journal.Pending) && expiredAt(cur.ExpiresAt, now):
			b.fail(ctx, l, cur, envelope.CodeTimeout, "the message expired (ttl) before it was acknowledged")
			n++
		case cur.State == journal.InTransit && !cur.AckDeadline.IsZero() && !cur.AckDeadline.After(now):
			req, _ := l.ledger.Request(cur.RequestID)
			timeout := b.policyFor(req.Envelope.MessageType).AckTimeout
			b.retryOrFail(ctx, l, cur, fmt.Sprintf("taken but not acknowledged within %v", timeout), envelope.CodeTimeout, false)
			n++
		case cur.State == journal.Pending && !cur.NextRetryAt.After(now):
			b.retransmit(ctx, l, cur, cur.RetryBase)
			n++
		}
	}
	return n
}

// retransmit sends a delivery again: a new transmission with a new
// messageId, the same requestId and retryCount one higher. base is the
// retry budget's start. smu is held.
func (b *Broker) retransmit(ctx context.Context, l *local, cur journal.MessageRecord, base int) journal.MessageRecord {
	now := b.now()
	req, ok := l.ledger.Request(cur.RequestID)
	if !ok {
		b.log.Warn("aacp: no request record for a retry; dropping it", "requestId", cur.RequestID)
		return cur
	}
	if expiredAt(req.ExpiresAt, now) {
		b.fail(ctx, l, cur, envelope.CodeTimeout, "the message expired (ttl) before it was acknowledged")
		return cur
	}
	next := journal.MessageRecord{
		MessageID: b.ids.NewID(), RequestID: cur.RequestID, Sender: l.id, Receiver: cur.Receiver,
		State: journal.InTransit, RetryCount: cur.RetryCount + 1, RetryBase: base, At: now, SentAt: now,
		ExpiresAt: req.ExpiresAt, // the ack timer starts when it is taken
	}
	env := b.transmission(req, next)
	env.Seq = 0
	env.Timestamp = envelope.FormatTime(now)
	env.Ack = l.ackFor(cur.Receiver)
	if !req.ExpiresAt.IsZero() {
		env.Metadata.TTL = max(1, int64(math.Ceil(req.ExpiresAt.Sub(now).Seconds())))
	}
	b.put(ctx, l, next) // first, so that a quick ACK finds it
	seq, err := b.store.Append(ctx, &env)
	if err != nil {
		b.retryOrFail(ctx, l, next, fmt.Sprintf("channel to %s unavailable: %v", cur.Receiver, err), envelope.CodeChannelUnavailable, true)
		return next
	}
	next.Seq = seq
	b.appended(&env)
	b.put(ctx, l, next)
	l.timers.push(timer{due: next.ExpiresAt, requestID: next.RequestID, receiver: next.Receiver, messageID: next.MessageID})
	return next
}
