package journal

import (
	"errors"
	"slices"

	"github.com/mcprt/mcprt/aacp/envelope"
)

// A send writes its payload once: in the channel line. The request
// record that a sender's ledger gets in the same step (under the
// channel's lock, ahead of the line) names that line (PayloadAt) and
// leaves the payload out. The payload stays in memory in this process;
// after a restart the ledger reads it back from the channel, one pass
// per channel, when a request's payload is first asked for. The channel
// keeps the line as long as its receiver has not processed it (the
// receiver compacts only what it no longer needs), and a request that
// may need its payload later — a retry (PENDING), a failure (FAILED,
// for the dead-letter queue) — gets a full request record written at that
// moment, so the payload outlives the channel line.

// errStop ends a channel scan early.
var errStop = errors.New("stop")

// prepare returns the records of one Put as they go to the file and the
// index: a request recorded with its first transmission's line names the
// line; a transmission that may outlive that line (a retry, a failure)
// brings a full request record of its request ahead of it.
func (l *fileLedger) prepare(recs []Record) []Record {
	var out []Record
	for i, r := range recs {
		switch {
		case r.Kind == KindRequest && r.Request != nil && r.Request.PayloadAt == nil && !noPayload(r.Request.Envelope.Payload):
			if at := lineOf(r.Request.RequestID, recs); at != nil {
				q := *r.Request
				q.PayloadAt = at
				if out == nil {
					out = slices.Clone(recs[:i])
				}
				out = append(out, RequestRec(q))
				continue
			}
		case r.Kind == KindMessage && r.Message != nil && outlivesLine(r.Message) && !hasRequest(r.Message.RequestID, recs):
			if full, ok := l.unelided(r.Message.RequestID); ok {
				if out == nil {
					out = slices.Clone(recs[:i])
				}
				out = append(out, RequestRec(full), r)
				continue
			}
		}
		if out != nil {
			out = append(out, r)
		}
	}
	if out == nil {
		return recs
	}
	return out
}

// lineOf names the first transmission of requestID among recs that has a
// channel line.
func lineOf(requestID string, recs []Record) *LineRef {
	for _, r := range recs {
		if m := r.Message; r.Kind == KindMessage && m != nil && m.RequestID == requestID && m.Seq > 0 && m.State == InTransit && m.RetryCount == 0 {
			return &LineRef{Receiver: m.Receiver, Seq: m.Seq, MessageID: m.MessageID}
		}
	}
	return nil
}

// outlivesLine: after m, the request may need its payload when the line
// of its first transmission is gone.
func outlivesLine(m *MessageRecord) bool {
	return m.State == Pending || m.State == Failed || m.RetryCount > 0 || m.RetryBase > 0
}

func hasRequest(requestID string, recs []Record) bool {
	return slices.ContainsFunc(recs, func(r Record) bool {
		return r.Kind == KindRequest && r.Request != nil && r.Request.RequestID == requestID
	})
}

// noPayload: a payload left out (nil, or null as read back).
func noPayload(p []byte) bool { return len(p) == 0 || string(p) == "null" }

// unelided returns requestID's record with its payload and without
// PayloadAt, when the ledger holds it with PayloadAt and the payload can
// be found.
func (l *fileLedger) unelided(requestID string) (RequestRecord, bool) {
	rec, ok := l.request(requestID)
	if !ok || rec.PayloadAt == nil {
		return RequestRecord{}, false
	}
	if noPayload(rec.Envelope.Payload) {
		rec = l.loadPayload(rec)
		if noPayload(rec.Envelope.Payload) {
			return RequestRecord{}, false
		}
	}
	rec.PayloadAt = nil
	return rec, true
}

// loadPayload reads the payload of rec (recorded with PayloadAt, loaded
// from the file) back from its channels.
func (l *fileLedger) loadPayload(rec RequestRecord) RequestRecord {
	receivers := append([]string{rec.PayloadAt.Receiver}, rec.Receivers...)
	for _, r := range receivers {
		l.fill(r)
		if got, ok := l.request(rec.RequestID); ok && !noPayload(got.Envelope.Payload) {
			return got
		}
	}
	l.log.Warn("aacp journal: a request's payload is no longer in its channel", "requestId", rec.RequestID, "receiver", rec.PayloadAt.Receiver, "seq", rec.PayloadAt.Seq)
	return rec
}

// fill reads, once per channel, the payloads that the ledger left in the
// channel to receiver.
func (l *fileLedger) fill(receiver string) {
	l.fillMu.Lock()
	defer l.fillMu.Unlock()
	if l.filled[receiver] {
		return
	}
	l.filled[receiver] = true
	want := l.elided(l.agent, receiver)
	if len(want) == 0 {
		return
	}
	from := uint64(0)
	for seq := range want {
		if from == 0 || seq < from {
			from = seq
		}
	}
	err := ScanChannel(l.dir, l.agent, receiver, from-1, func(env *envelope.Envelope) error {
		if w, ok := want[env.Seq]; ok && w.messageID == env.MessageID && env.Sender.AgentID == l.agent {
			l.setPayload(w.requestID, env.Payload)
			delete(want, env.Seq)
			if len(want) == 0 {
				return errStop
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		l.log.Warn("aacp journal: reading payloads back from a channel failed", "agent", l.agent, "receiver", receiver, "err", err)
	}
}

// elidedLine is a transmission whose line holds its request's payload.
type elidedLine struct{ requestID, messageID string }

// elided lists, by seq, the transmissions to receiver of the requests
// that have no payload in memory.
func (x *ledgerIndex) elided(sender, receiver string) map[uint64]elidedLine {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := map[uint64]elidedLine{}
	for id, e := range x.requests {
		if !e.hasRequest || e.rec.PayloadAt == nil || !noPayload(e.rec.Envelope.Payload) {
			continue
		}
		for _, m := range e.history {
			if m.Receiver == receiver && m.Sender == sender && m.Seq > 0 {
				out[m.Seq] = elidedLine{requestID: id, messageID: m.MessageID}
			}
		}
	}
	return out
}

// setPayload gives a request read back without its payload the payload
// found in its channel.
func (x *ledgerIndex) setPayload(requestID string, payload []byte) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if e := x.requests[requestID]; e != nil && e.rec.PayloadAt != nil && noPayload(e.rec.Envelope.Payload) {
		e.rec.Envelope.Payload = slices.Clone(payload)
	}
}
