package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
)

// Send sends a message from agentID (which this broker must host) and
// returns once it is durable: recorded in agentID's ledger and appended
// to every receiver's channel (on stable storage under fsync always).
//
// The receiver is one agent, or with agentId "*" every registered agent
// (but the sender) of receiver.type ("*" or empty: of any type). The
// payload is validated against messageType's schema. ACK and NACK are not
// sent this way: use Ack and Nack.
//
// Errors: the envelope and payload rules (E_VALIDATION_*, E_PROTOCOL_003
// for ids), E_ROUTING_001 when no registered agent matches the receiver
// (nothing is sent), E_ROUTING_002 for an unusable receiver, E_ROUTING_003
// when the channel cannot be written (the delivery is FAILED), and
// E_ROUTING_004 when a broadcast reached only some receivers (the output
// lists every delivery).
func (b *Broker) Send(ctx context.Context, agentID string, in SendInput) (SendOutput, error) {
	l, err := b.local(agentID)
	if err != nil {
		return SendOutput{}, err
	}
	if err := b.checkSend(&in); err != nil {
		return SendOutput{}, err
	}
	if in.RequestID != "" {
		if req, ok := l.ledger.Request(in.RequestID); ok {
			out := b.deliveries(l, req)
			out.Duplicate = true
			return out, nil
		}
	}
	receivers, err := b.route(ctx, agentID, in.Receiver)
	if err != nil {
		return SendOutput{}, err
	}
	now := b.now()
	ttl := b.ttl
	if in.TTLSeconds > 0 {
		ttl = time.Duration(in.TTLSeconds) * time.Second
	}
	reqID := in.RequestID
	if reqID == "" {
		reqID = b.ids.NewID()
	}
	from := l.agent()
	tmpl := envelope.Envelope{
		Version: envelope.Version, RequestID: reqID, CorrelationID: in.CorrelationID,
		Timestamp: envelope.FormatTime(now), Sender: from,
		Receiver:    envelope.Agent{AgentID: in.Receiver.AgentID, Type: in.Receiver.Type},
		MessageType: in.MessageType, Priority: in.Priority, Payload: in.Payload,
		Metadata: envelope.Metadata{TTL: max(1, int64(ttl/time.Second)), Tags: in.Tags},
	}
	if tmpl.Receiver.Type == "" {
		tmpl.Receiver.Type = envelope.AnyType
	}
	pol := b.policyFor(in.MessageType)
	req := journal.RequestRecord{
		RequestID: reqID, Sender: agentID, Envelope: tmpl, Outcome: journal.Unknown,
		CreatedAt: now, ExpiresAt: now.Add(ttl),
	}
	envs := make([]envelope.Envelope, len(receivers))
	recs := make([]journal.Record, 0, len(receivers)+1)
	msgs := make([]journal.MessageRecord, len(receivers))
	var encoded []byte
	for i, r := range receivers {
		req.Receivers = append(req.Receivers, r.AgentID)
		e := tmpl
		e.MessageID = b.ids.NewID()
		e.Receiver = envelope.Agent{AgentID: r.AgentID, Type: r.Type}
		e.Ack = l.ackFor(r.AgentID)
		if i == 0 {
			buf := encodeBufs.Get().(*[]byte)
			defer func() {
				if cap(encoded) <= 64<<10 {
					*buf = encoded[:0]
					encodeBufs.Put(buf)
				}
			}()
			var err error
			if encoded, err = b.v.Encode((*buf)[:0], &e); err != nil {
				return SendOutput{}, err
			}
		}
		envs[i] = e
		msgs[i] = journal.MessageRecord{
			MessageID: e.MessageID, RequestID: reqID, Sender: agentID, Receiver: r.AgentID,
			State: journal.InTransit, At: now, SentAt: now, ExpiresAt: req.ExpiresAt, // the ack timer starts when it is taken
		}
	}
	// One path for one receiver and many: each transmission's ledger
	// records (the request with the first) are written in one write under
	// its channel's lock, seq included, just ahead of the channel line;
	// the line's fsync makes the send durable (sendRecorder, transmit).
	seqs := make([]uint64, len(envs))
	errs := make([]error, len(envs))
	rec := &sendRecorder{ctx: ctx, ledger: l.ledger, req: req, msgs: msgs}
	if len(envs) == 1 {
		seqs[0], errs[0] = b.transmit(ctx, rec, envs, encoded, 0)
	} else {
		var wg sync.WaitGroup
		for i := range envs {
			wg.Go(func() { seqs[i], errs[i] = b.transmit(ctx, rec, envs, encoded, i) })
		}
		wg.Wait()
	}
	if !rec.requested {
		// No transmission got as far as its ledger write: when the
		// ledger refused it, nothing was sent; otherwise record the
		// request now, so that the failures below have a request to fail.
		var le *ledgerError
		if errors.As(errs[0], &le) {
			return SendOutput{}, envelope.Errorf(envelope.CodeChannelUnavailable, "record the request in the ledger of %q: %w", agentID, le.err)
		}
		recs = append(recs, journal.RequestRec(req))
		for _, m := range msgs {
			recs = append(recs, journal.MessageRec(m))
		}
		if err := l.ledger.Put(ctx, recs...); err != nil {
			return SendOutput{}, envelope.Errorf(envelope.CodeChannelUnavailable, "record the request in the ledger of %q: %w", agentID, err)
		}
	}
	var done []*envelope.Envelope
	for i := range envs {
		if errs[i] == nil {
			envs[i].Seq = seqs[i]
			done = append(done, &envs[i])
		}
	}
	b.appended(done...)
	out := SendOutput{MessageID: envs[0].MessageID, RequestID: reqID}
	var failed []string
	l.smu.Lock()
	for i, m := range msgs {
		cur, ok := l.ledger.Delivery(reqID, m.Receiver)
		if !ok || cur.MessageID != m.MessageID {
			cur = m
		}
		if errs[i] != nil {
			cur.Seq = 0 // the line was not written
			failed = append(failed, fmt.Sprintf("%s: %v", m.Receiver, errs[i]))
			b.fail(ctx, l, cur, envelope.CodeChannelUnavailable, fmt.Sprintf("channel to %s unavailable: %v", m.Receiver, errs[i]))
			cur.State = journal.Failed
		} else {
			recorded := cur.Seq == seqs[i] // under the channel's lock, before the line
			cur.Seq = seqs[i]
			if pol.AckTimeout <= 0 && cur.State == journal.InTransit {
				cur.State, cur.AckDeadline, recorded = journal.Delivered, time.Time{}, false
			}
			if !recorded {
				b.put(ctx, l, cur)
			}
			if cur.State == journal.InTransit {
				l.timers.push(timer{due: cur.ExpiresAt, requestID: reqID, receiver: m.Receiver, messageID: m.MessageID})
			}
		}
		out.Deliveries = append(out.Deliveries, Delivery{AgentID: m.Receiver, MessageID: m.MessageID, Seq: seqs[i], State: cur.State})
	}
	if pol.AckTimeout <= 0 {
		b.settle(ctx, l, reqID)
	}
	l.smu.Unlock()
	if b.syncSends && len(failed) < len(envs) {
		// The ledger records of what was sent leave the process before
		// the send returns, so a killed process keeps its sender's view.
		if err := l.ledger.Sync(ctx); err != nil {
			return out, envelope.Errorf(envelope.CodeChannelUnavailable,
				"the message was stored, but its record in the ledger of %q was not confirmed: %v; sending it again with the same requestId is safe (it is delivered once)", agentID, err)
		}
	}
	switch {
	case len(failed) == len(envs):
		return out, envelope.Errorf(envelope.CodeChannelUnavailable, "could not write the message: %s; it is in the dead-letter queue, requeue it later", strings.Join(failed, "; "))
	case len(failed) > 0:
		return out, envelope.Errorf(envelope.CodeBroadcastPartial, "the broadcast reached %d of %d agents; failed: %s; requeue the failed deliveries from the dead-letter queue",
			len(envs)-len(failed), len(envs), strings.Join(failed, "; ")).WithDetail("deliveries", out.Deliveries)
	}
	return out, nil
}

// encodeBufs holds buffers for the encoding of a sent envelope.
var encodeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// sendRecorder writes a send's ledger records from inside the appends of
// its transmissions.
type sendRecorder struct {
	ctx    context.Context
	ledger journal.Ledger
	req    journal.RequestRecord
	msgs   []journal.MessageRecord

	mu        sync.Mutex
	requested bool // guarded by mu: the request record is written
}

// before returns the Before hook of transmission i: it records the
// transmission with its seq (and the request, with the first
// transmission to get there) in one ledger write.
func (r *sendRecorder) before(i int) func(seq uint64) error {
	return func(seq uint64) error {
		m := r.msgs[i]
		m.Seq = seq
		r.mu.Lock()
		defer r.mu.Unlock()
		var err error
		if r.requested {
			err = r.ledger.Put(r.ctx, journal.MessageRec(m))
		} else {
			err = r.ledger.Put(r.ctx, journal.RequestRec(r.req), journal.MessageRec(m))
		}
		if err != nil {
			return &ledgerError{err}
		}
		r.requested = true
		return nil
	}
}

// transmit appends transmission i of a send (encoded is the first's
// encoding) with its ledger records written under the channel's lock.
func (b *Broker) transmit(ctx context.Context, rec *sendRecorder, envs []envelope.Envelope, encoded []byte, i int) (uint64, error) {
	opts := journal.AppendOptions{Before: rec.before(i)}
	if i == 0 {
		opts.Encoded = encoded
	}
	return journal.AppendWith(ctx, b.store, &envs[i], opts)
}

// ledgerError is a ledger failure inside an append's Before.
type ledgerError struct{ err error }

func (e *ledgerError) Error() string { return e.err.Error() }

func (e *ledgerError) Unwrap() error { return e.err }

// checkSend validates and normalises the parts of in that do not depend
// on routing.
func (b *Broker) checkSend(in *SendInput) error {
	switch {
	case in.MessageType == "":
		return envelope.Errorf(envelope.CodeMissingField, "messageType is missing; want one of %s or CUSTOM_*", strings.Join(envelope.CoreTypes(), ", ")).WithDetail("path", "/messageType")
	case in.MessageType == TakenType:
		return envelope.Errorf(envelope.CodeInvalidEnum, "%s is reserved for the broker's own notices; choose another CUSTOM_ type", in.MessageType).WithDetail("path", "/messageType")
	case in.MessageType == envelope.Ack || in.MessageType == envelope.Nack:
		return envelope.Errorf(envelope.CodeInvalidEnum, "%s messages are sent by Ack and Nack (aacp_ack, aacp_nack), not by Send", in.MessageType).WithDetail("path", "/messageType")
	}
	if in.Priority == "" {
		in.Priority = envelope.Normal
	}
	if in.Priority.Rank() > 2 {
		return envelope.Errorf(envelope.CodeInvalidEnum, "priority %q is unknown; want HIGH, NORMAL or LOW", in.Priority).WithDetail("path", "/priority")
	}
	if in.Receiver.AgentID == "" {
		return envelope.Errorf(envelope.CodeMissingField, "receiver.agentId is missing; want an agent id, or \"*\" to broadcast").WithDetail("path", "/receiver/agentId")
	}
	if err := envelope.CheckReceiver(envelope.Agent{AgentID: in.Receiver.AgentID, Type: in.Receiver.Type}); err != nil {
		return err
	}
	if in.CorrelationID != "" {
		if err := envelope.CheckID("correlationId", in.CorrelationID); err != nil {
			return err.WithDetail("path", "/correlationId")
		}
	}
	if in.RequestID != "" {
		if err := envelope.CheckID("requestId", in.RequestID); err != nil {
			return err.WithDetail("path", "/requestId")
		}
	}
	if in.TTLSeconds < 0 || in.TTLSeconds > MaxTTLSeconds {
		return envelope.Errorf(envelope.CodeSchema, "ttlSeconds is %d; want a positive number of seconds up to %d (10 years; 0: the default)", in.TTLSeconds, MaxTTLSeconds).WithDetail("path", "/ttlSeconds")
	}
	if !envelope.ValidType(in.MessageType) {
		return envelope.Errorf(envelope.CodeInvalidEnum, "messageType %q is unknown; want one of %s, or CUSTOM_ followed by upper-case letters, digits and '_'", in.MessageType, strings.Join(envelope.CoreTypes(), ", ")).WithDetail("path", "/messageType")
	}
	if err := envelope.CheckTags(in.Tags); err != nil {
		return err
	}
	return nil // the payload is checked with the envelope
}

// route resolves a receiver to registered agents.
func (b *Broker) route(ctx context.Context, sender string, r Receiver) ([]journal.AgentRecord, error) {
	if r.AgentID == envelope.Broadcast {
		recs, err := b.refreshRegistry(ctx)
		if err != nil {
			return nil, err
		}
		var out []journal.AgentRecord
		for _, a := range recs {
			if a.AgentID != sender && (r.Type == "" || r.Type == envelope.AnyType || a.Type == r.Type) {
				out = append(out, a)
			}
		}
		switch {
		case len(out) == 0:
			who := "no agent other than the sender " + strconv.Quote(sender) + " is registered"
			if r.Type != "" && r.Type != envelope.AnyType {
				who = "no agent of type " + string(r.Type) + " other than the sender " + strconv.Quote(sender) + " is registered"
			}
			return nil, envelope.Errorf(envelope.CodeAgentNotFound, "the broadcast to agentId \"*\" reached no one: %s (registered agent ids: %s); nothing was sent. Send to a registered agent id, or wait until another agent registers", who, listIDs(recs)).WithDetail("path", "/receiver/agentId")
		case len(out) > maxBroadcast:
			return nil, envelope.Errorf(envelope.CodeInvalidReceiver, "the broadcast would reach %d agents; the limit is %d: narrow it by type", len(out), maxBroadcast)
		}
		return out, nil
	}
	b.mu.Lock()
	a, ok := b.registry[r.AgentID]
	b.mu.Unlock()
	if !ok {
		recs, err := b.refreshRegistry(ctx)
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(recs, func(x journal.AgentRecord) bool { return x.AgentID == r.AgentID })
		if i < 0 {
			return nil, envelope.Errorf(envelope.CodeAgentNotFound, "agent %q is not registered (registered: %s); check the id, or wait for that agent to register", r.AgentID, listIDs(recs)).WithDetail("path", "/receiver/agentId")
		}
		a = recs[i]
	}
	if r.Type != "" && r.Type != envelope.AnyType && r.Type != a.Type {
		return nil, envelope.Errorf(envelope.CodeInvalidReceiver, "agent %q is registered as %s, not %s; fix receiver.type or leave it out", r.AgentID, a.Type, r.Type).WithDetail("path", "/receiver/type")
	}
	return []journal.AgentRecord{a}, nil
}

// listIDs names up to 10 agents.
func listIDs(recs []journal.AgentRecord) string {
	if len(recs) == 0 {
		return "none"
	}
	var ids []string
	for i, r := range recs {
		if i == 10 {
			ids = append(ids, fmt.Sprintf("and %d more", len(recs)-10))
			break
		}
		ids = append(ids, r.AgentID)
	}
	return strings.Join(ids, ", ")
}

// deliveries describes an existing request's deliveries.
func (b *Broker) deliveries(l *local, req journal.RequestRecord) SendOutput {
	out := SendOutput{RequestID: req.RequestID}
	for _, r := range req.Receivers {
		d, _ := l.ledger.Delivery(req.RequestID, r)
		out.Deliveries = append(out.Deliveries, Delivery{AgentID: r, MessageID: d.MessageID, Seq: d.Seq, State: d.State})
	}
	if len(out.Deliveries) > 0 {
		out.MessageID = out.Deliveries[0].MessageID
	}
	return out
}
