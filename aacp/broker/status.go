package broker

import (
	"context"
	"errors"
	"slices"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/core"
)

// Status reports a request agentID sent, found by its requestId or by
// the messageId of any of its transmissions: its state and outcome, each
// delivery, and the history of every transition. An unknown id is
// NOT_FOUND.
func (b *Broker) Status(_ context.Context, agentID string, in StatusInput) (StatusOutput, error) {
	if in.MessageID == "" && in.RequestID == "" {
		return StatusOutput{}, envelope.Errorf(envelope.CodeMissingField, "give messageId or requestId")
	}
	l, err := b.local(agentID)
	if err != nil {
		return StatusOutput{}, err
	}
	reqID := in.RequestID
	if reqID == "" {
		m, ok := l.ledger.Message(in.MessageID)
		if !ok {
			return StatusOutput{}, core.Errorf(core.CodeNotFound, "agent %q sent no message %q (or it expired and was purged)", agentID, in.MessageID)
		}
		reqID = m.RequestID
	}
	req, ok := l.ledger.Request(reqID)
	if !ok {
		return StatusOutput{}, core.Errorf(core.CodeNotFound, "agent %q sent no request %q (or it expired and was purged)", agentID, reqID)
	}
	if in.MessageID != "" {
		if m, ok := l.ledger.Message(in.MessageID); !ok || m.RequestID != reqID {
			return StatusOutput{}, envelope.Errorf(envelope.CodeInvalidCorrelationID, "message %q does not belong to request %q; give one of the two", in.MessageID, reqID)
		}
	}
	out := StatusOutput{
		RequestID: reqID, MessageType: req.Envelope.MessageType, CreatedAt: req.CreatedAt, ExpiresAt: req.ExpiresAt,
		Outcome: req.Outcome, Error: req.Error, Deliveries: []DeliveryStatus{}, History: []Transition{},
	}
	rank := map[journal.State]int{journal.Pending: 0, journal.InTransit: 1, journal.Failed: 2, journal.Delivered: 3, journal.Processed: 4}
	out.State = journal.Processed
	for _, r := range req.Receivers {
		d, ok := l.ledger.Delivery(reqID, r)
		if !ok {
			continue
		}
		out.Deliveries = append(out.Deliveries, DeliveryStatus{
			AgentID: r, MessageID: d.MessageID, Seq: d.Seq, State: d.State, Retries: d.RetryCount,
			AckStatus: d.AckStatus, AckDeadline: d.AckDeadline, NextRetryAt: d.NextRetryAt, LastError: d.Reason, Code: d.Code,
		})
		if rank[d.State] < rank[out.State] {
			out.State = d.State
		}
	}
	for _, h := range l.ledger.History(reqID) {
		out.History = append(out.History, Transition{At: h.At, AgentID: h.Receiver, MessageID: h.MessageID, State: h.State, RetryCount: h.RetryCount, Reason: h.Reason, Code: h.Code})
	}
	// Drop repeats (a record re-put with only its seq filled in).
	out.History = slices.CompactFunc(out.History, func(a, b Transition) bool {
		return a.MessageID == b.MessageID && a.State == b.State && a.Reason == b.Reason
	})
	return out, nil
}

// DeadLetters lists agentID's failed transmissions that are still in the
// dead-letter queue (not requeued, not acknowledged late), oldest first.
func (b *Broker) DeadLetters(ctx context.Context, agentID string, in DeadLettersInput) (DeadLettersOutput, error) {
	if in.Limit < 0 {
		return DeadLettersOutput{}, envelope.Errorf(envelope.CodeSchema, "limit is %d; want 1 to %d (0 means %d)", in.Limit, MaxDeadLetters, DefaultDeadLetters).WithDetail("path", "/limit")
	}
	if _, err := b.local(agentID); err != nil {
		return DeadLettersOutput{}, err
	}
	limit := in.Limit
	if limit == 0 {
		limit = DefaultDeadLetters
	}
	limit = min(limit, MaxDeadLetters)
	all, err := b.store.DeadLetters(ctx)
	if err != nil {
		return DeadLettersOutput{}, envelope.Errorf(envelope.CodeChannelUnavailable, "read the dead-letter queue: %w", err)
	}
	out := DeadLettersOutput{DeadLetters: []journal.DeadLetter{}}
	for _, d := range all {
		if d.Sender != agentID || d.Status != journal.DeadActive {
			continue
		}
		out.Total++
		if len(out.DeadLetters) < limit {
			out.DeadLetters = append(out.DeadLetters, d)
		}
	}
	return out, nil
}

// Requeue sends a dead-lettered transmission of agentID again: a new
// transmission (new messageId, same requestId, retryCount one higher) with
// a fresh retry budget. It fails with NOT_FOUND for an id not in the
// queue, and E_PROTOCOL_004 when the message has expired (send it anew).
func (b *Broker) Requeue(ctx context.Context, agentID string, in RequeueInput) (RequeueOutput, error) {
	if in.MessageID == "" {
		return RequeueOutput{}, envelope.Errorf(envelope.CodeMissingField, "messageId is missing; pass the id of a dead letter").WithDetail("path", "/messageId")
	}
	l, err := b.local(agentID)
	if err != nil {
		return RequeueOutput{}, err
	}
	all, err := b.store.DeadLetters(ctx)
	if err != nil {
		return RequeueOutput{}, envelope.Errorf(envelope.CodeChannelUnavailable, "read the dead-letter queue: %w", err)
	}
	i := slices.IndexFunc(all, func(d journal.DeadLetter) bool {
		return d.MessageID == in.MessageID && d.Sender == agentID && d.Status == journal.DeadActive
	})
	if i < 0 {
		return RequeueOutput{}, core.Errorf(core.CodeNotFound, "agent %q has no dead letter %q; list them with DeadLetters (aacp_dead_letters)", agentID, in.MessageID)
	}
	d := all[i]
	l.smu.Lock()
	defer l.smu.Unlock()
	cur, ok := l.ledger.Delivery(d.RequestID, d.Receiver)
	if !ok {
		return RequeueOutput{}, core.Errorf(core.CodeNotFound, "the request %q of dead letter %q is no longer in the ledger (expired); send the message anew", d.RequestID, in.MessageID)
	}
	if cur.State != journal.Failed {
		return RequeueOutput{}, core.Errorf(core.CodeInvalidArgument, "the delivery of request %q to %q is %s, not FAILED; nothing to requeue", d.RequestID, d.Receiver, cur.State)
	}
	if req, _ := l.ledger.Request(d.RequestID); expiredAt(req.ExpiresAt, b.now()) {
		return RequeueOutput{}, envelope.Errorf(envelope.CodeTimeout, "request %q expired at %s; send the message anew", d.RequestID, req.ExpiresAt.Format(envelope.TimestampLayout))
	}
	next := b.retransmit(ctx, l, cur, cur.RetryCount+1)
	if next.State != journal.InTransit || next.Seq == 0 {
		return RequeueOutput{}, envelope.Errorf(envelope.CodeChannelUnavailable, "requeue %q: the channel to %q could not be written; try again later", in.MessageID, d.Receiver)
	}
	d.Status = journal.DeadRequeued
	if err := b.store.AddDeadLetter(ctx, d); err != nil {
		b.log.Warn("aacp: marking a dead letter requeued failed", "messageId", d.MessageID, "err", err)
	}
	b.settle(ctx, l, d.RequestID)
	return RequeueOutput{RequestID: d.RequestID, MessageID: next.MessageID, Seq: next.Seq, State: next.State}, nil
}

// PurgeExpired deletes what has expired at the clock's current time: the
// local agents' ledger records, the dead letters, and queued messages.
// The maintenance goroutine calls it now and then.
func (b *Broker) PurgeExpired(ctx context.Context) (PurgeOutput, error) {
	now := b.now()
	var out PurgeOutput
	var errs []error
	for _, l := range b.locals() {
		n, err := l.ledger.PurgeExpired(ctx, now)
		out.LedgerRecords += n
		errs = append(errs, err)
		l.mu.Lock()
		for _, it := range l.itemsOnce() {
			if expiredAt(it.env.ExpiresAt(), now) {
				l.forget(it)
				out.Queued++
			}
		}
		l.mu.Unlock()
	}
	n, err := b.store.PurgeExpired(ctx, now)
	out.DeadLetters = n
	errs = append(errs, err)
	return out, errors.Join(errs...)
}

// itemsOnce lists each item once; mu is held.
func (l *local) itemsOnce() []*item {
	seen := make(map[*item]bool, len(l.items))
	var out []*item
	for _, it := range l.items {
		if !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	return out
}

// Compact makes the journal durable and removes the segments of the
// local agents' inbound channels that hold nothing they still need. The
// maintenance goroutine calls it now and then.
func (b *Broker) Compact(ctx context.Context) error {
	if err := b.store.Sync(ctx); err != nil {
		return err
	}
	var errs []error
	for _, l := range b.locals() {
		l.mu.Lock()
		lows := make(map[string]uint64, len(l.open))
		for sender, ds := range l.open {
			lows[sender] = ds.low()
		}
		l.mu.Unlock()
		for sender, low := range lows {
			if _, err := b.store.CompactChannel(ctx, sender, l.id, low); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
