package broker

import (
	"context"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/core"
)

// ingest reads what is new in l's inbound channels.
// The read (journal I/O) holds only rmu: what it returns is applied
// under mu afterwards, so Receive's hand-out, Inbox and the answers of
// other callers never wait on the journal, and Send (which takes neither
// lock) never waits on a read. rmu keeps reads and their application in
// the order they were read. The sending side's replies (ACK, NACK, taken
// notices) read are applied under smu after mu is released, in order.
// When it queued messages it wakes the waiting receivers and, with its
// locks released, calls Options.OnInbox.
func (b *Broker) ingest(ctx context.Context, l *local) error {
	l.rmu.Lock()
	defer l.rmu.Unlock()
	select {
	case <-l.gone:
		// Shut down (released, unregistered, closed): its inbox is
		// closed and is not read again (a files inbox would open its
		// segments anew, never to close them). A Receive that held l
		// from before sees gone and says so.
		return nil
	default:
	}
	var batch []envelope.Envelope
	err := l.inbox.Read(ctx, func(env *envelope.Envelope) error {
		batch = append(batch, *env) // each is passed once: apply it even when the read stops early
		return nil
	})
	// What was read is applied in full, also when ctx ended the read (the
	// inbox goroutine's followReadTimeout, a Receive's wait, a cancelled
	// call): each transmission is passed once, so a state change dropped
	// here (an ACK's, recorded with the expired ctx) would be lost for
	// good. The application has a bound of its own.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), applyTimeout)
	defer cancel()
	added := false
	var replies []*envelope.Envelope
	if len(batch) > 0 {
		l.mu.Lock()
		for i := range batch {
			q, reply := b.accept(ctx, l, &batch[i])
			added = added || q
			if reply {
				replies = append(replies, &batch[i])
			}
		}
		if added {
			l.signal()
		}
		l.mu.Unlock()
	}
	for _, env := range replies {
		if env.MessageType == TakenType {
			b.onTaken(ctx, l, env)
		} else {
			b.onReply(ctx, l, env)
		}
	}
	if added && b.onInbox != nil {
		b.onInbox(l.id)
	}
	if err != nil {
		return fmt.Errorf("read the inbox of agent %q: %w", l.id, err)
	}
	return nil
}

// lastLook bounds the read of a Receive's last look, after its wait.
const lastLook = 250 * time.Millisecond

// applyTimeout bounds the application of what one inbox read returned
// (the ledger records of the state changes it brings, answers sent
// again), separately from the read's own bound.
const applyTimeout = 30 * time.Second

// ingestWithin is ingest for a Receive that waits up to wait: a journal
// that cannot answer within the wait (a NATS cluster electing a new
// leader) leaves what is already queued to be handed out, and the next
// look reads again, so the receive answers in time. Without a wait, the
// call's own deadline bounds the read.
// It reports whether the bound cut the read short.
func (b *Broker) ingestWithin(ctx context.Context, l *local, wait time.Duration) (cut bool, err error) {
	if wait <= 0 {
		return false, b.ingest(ctx, l)
	}
	rctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	err = b.ingest(rctx, l)
	if err != nil && rctx.Err() != nil && ctx.Err() == nil { // cut by the wait, not by the call
		return true, nil
	}
	return false, err
}

// accept takes in one transmission read from a channel into l (mu held)
// and reports whether it queued a message, and whether the transmission
// is a reply to l as a sender (ACK, NACK or taken notice), which the
// caller applies with mu released. It is where receivers
// deduplicate: a transmission whose messageId was seen is ignored; a
// retry of a request already answered is answered again (and not
// handed out); a retry of a request still queued is ignored; a retry of
// a request handed out but not answered is queued again, marked
// redelivered.
func (b *Broker) accept(ctx context.Context, l *local, env *envelope.Envelope) (added, reply bool) {
	sender := env.Sender.AgentID
	tr := l.trackers[sender]
	if tr == nil {
		tr = &SeqTracker{}
		tr.Start(env.Seq - 1) // what came before was compacted away
		l.trackers[sender] = tr
	}
	if env.Seq > tr.Ack()+1 {
		b.log.Warn("aacp: gap in a channel", "channel", envelope.Channel(sender, l.id), "ack", tr.Ack(), "seq", env.Seq)
	}
	tr.Observe(env.Seq)
	l.amu.Lock()
	l.acks[sender] = tr.Ack()
	l.amu.Unlock()
	ds := l.open[sender]
	if ds == nil {
		ds = &doneSet{}
		l.open[sender] = ds
	}
	ds.seen(env.Seq)

	switch env.MessageType {
	case envelope.Ack, envelope.Nack, TakenType:
		return false, true
	}
	if expiredAt(env.ExpiresAt(), b.now()) {
		return false, false
	}
	if l.items[env.MessageID] != nil {
		return false, false // a transmission seen before
	}
	key := reqKey(sender, env.RequestID)
	if sender != envelope.SystemAgentID {
		if inb, ok := l.ledger.Inbound(sender, env.RequestID); ok {
			if done := b.answeredBefore(ctx, l, env, inb); done {
				return false, false
			}
		}
	}
	if it := l.byReq[key]; it != nil {
		it.ids = append(it.ids, env.MessageID)
		it.seqs = append(it.seqs, env.Seq)
		l.items[env.MessageID] = it
		ds.add(env.Seq)
		if it.state != inHand {
			return false, false
		}
		it.env, it.redelivered = *env, true
		l.enqueue(it)
		return true, false
	}
	l.arrivals++
	it := &item{env: *env, ids: []string{env.MessageID}, seqs: []uint64{env.Seq}, order: l.arrivals}
	l.items[env.MessageID] = it
	l.byReq[key] = it
	ds.add(env.Seq)
	l.enqueue(it)
	return true, false
}

// answeredBefore handles a transmission of a request l has answered
// (inb); it reports true when the transmission needs nothing more.
func (b *Broker) answeredBefore(ctx context.Context, l *local, env *envelope.Envelope, inb journal.InboundRecord) bool {
	sender := env.Sender.AgentID
	acked := inb.Status != journal.InboundNacked
	if env.Seq > inb.Seq {
		// A retry made after the answer: the sender did not get it.
		switch {
		case acked:
			b.replyLogged(ctx, l, env, ackPayload(env.MessageID, inb.Status, "acknowledged before: "+inb.Status, b.now()), envelope.Ack)
		case !inb.CanRetry:
			b.replyLogged(ctx, l, env, nackPayload(env.MessageID, inb.Reason, inb.ErrorCode, false, b.now()), envelope.Nack)
		default:
			return false // NACKed with canRetry: this is the retry asked for
		}
		inb.Seq = env.Seq
		if err := l.ledger.Put(ctx, journal.InboundRec(inb)); err != nil {
			b.log.Warn("aacp: recording a repeated answer failed", "agent", l.id, "err", err)
		}
	}
	if acked && inb.Status != journal.InboundProcessed {
		// Answered received/queued: keep it findable for a later
		// "processed", but never hand it out again.
		key := reqKey(sender, env.RequestID)
		it := l.byReq[key]
		if it == nil {
			it = &item{env: *env, state: answered}
			l.byReq[key] = it
		}
		it.ids = append(it.ids, env.MessageID)
		it.seqs = append(it.seqs, env.Seq)
		l.items[env.MessageID] = it
		l.open[sender].add(env.Seq)
	}
	return true
}

// Receive returns up to in.Max messages waiting for agentID: HIGH before
// NORMAL before LOW, and within one priority in the order they arrived
// (so in seq order within each channel). A message returned is "handed
// out": it is not returned again unless its sender retries it before it
// is answered (then it comes back marked redelivered) or this process
// restarts before it is answered. Answer each with Ack or Nack.
//
// When no message is waiting, Receive waits up to in.WaitMs (at most
// MaxWait) for one, learning of new messages from file notifications;
// ctx ends the wait early with ctx's error.
func (b *Broker) Receive(ctx context.Context, agentID string, in ReceiveInput) (ReceiveOutput, error) {
	if in.WaitMs < 0 {
		return ReceiveOutput{}, envelope.Errorf(envelope.CodeSchema, "waitMs is %d; want 0 (no wait) to %d", in.WaitMs, MaxWait.Milliseconds()).WithDetail("path", "/waitMs")
	}
	if in.Max < 0 {
		return ReceiveOutput{}, envelope.Errorf(envelope.CodeSchema, "max is %d; want 1 to %d (0 means %d)", in.Max, MaxReceive, DefaultReceive).WithDetail("path", "/max")
	}
	for i, t := range in.MessageTypes {
		if !envelope.ValidType(t) {
			return ReceiveOutput{}, envelope.Errorf(envelope.CodeInvalidEnum, "messageTypes[%d] %q is not a message type; want a core type or CUSTOM_*", i, t).WithDetail("path", fmt.Sprintf("/messageTypes/%d", i))
		}
	}
	limit := in.Max
	if limit == 0 {
		limit = DefaultReceive
	}
	limit = min(limit, MaxReceive)
	wait := min(time.Duration(in.WaitMs)*time.Millisecond, MaxWait)
	l, err := b.local(agentID)
	if err != nil {
		return ReceiveOutput{}, err
	}
	var deadline <-chan time.Time
	// A read of the journal is bounded by the wait (and the one last look
	// after it by lastLook), so the answer comes in time; see ingestWithin.
	readBound := wait
	for {
		cut, err := b.ingestWithin(ctx, l, readBound)
		if err != nil {
			return ReceiveOutput{}, envelope.Errorf(envelope.CodeChannelUnavailable, "receive for agent %q: %w", agentID, err)
		}
		if cut && wait > 0 { // the read used up the wait: one last look, then return
			wait, readBound = 0, lastLook
			continue
		}
		msgs, wake := l.take(limit, in.MessageTypes, b.now())
		b.noteTaken(ctx, l, msgs)
		if len(msgs) > 0 || wait <= 0 {
			if msgs == nil {
				msgs = []Message{}
			}
			return ReceiveOutput{Messages: msgs}, nil
		}
		if deadline == nil {
			deadline = b.after(wait)
		}
		select {
		case <-wake:
		case <-l.inbox.Changed():
		case <-deadline:
			wait, readBound = 0, lastLook // one last look, then return
		case <-l.gone:
			return ReceiveOutput{}, core.Errorf(core.CodeInternal, "receive for agent %q: the agent was unregistered or %w", agentID, ErrClosed)
		case <-ctx.Done():
			return ReceiveOutput{}, fmt.Errorf("receive for agent %q: %w", agentID, context.Cause(ctx))
		}
	}
}
