package journal

import (
	"slices"
	"sync"
	"time"
)

// ledgerIndex is a ledger's state in memory: what replaying its records
// in order gives. Both ledger implementations keep one. It is safe for
// concurrent use.
type ledgerIndex struct {
	mu       sync.RWMutex
	next     uint64                   // guarded by mu: creation counter
	requests map[string]*requestEntry // guarded by mu: by requestId
	messages map[string]string        // guarded by mu: messageId → requestId
	inbound  map[string]InboundRecord // guarded by mu: by inboundKey
	records  int                      // guarded by mu: records applied since the last rewrite
	live     int                      // guarded by mu: records a snapshot would hold
}

type requestEntry struct {
	order      uint64
	rec        RequestRecord
	hasRequest bool
	history    []MessageRecord
	current    map[string]string // receiver → messageId of its latest transmission
}

func newLedgerIndex() *ledgerIndex {
	return &ledgerIndex{
		requests: make(map[string]*requestEntry),
		messages: make(map[string]string),
		inbound:  make(map[string]InboundRecord),
	}
}

func inboundKey(sender, requestID string) string { return sender + "\x00" + requestID }

func (x *ledgerIndex) entry(requestID string) *requestEntry {
	e := x.requests[requestID]
	if e == nil {
		x.next++
		e = &requestEntry{order: x.next, current: make(map[string]string)}
		e.rec.RequestID = requestID
		e.rec.Outcome = Unknown
		x.requests[requestID] = e
	}
	return e
}

// apply adds records; unknown kinds and empty records are ignored (so
// that a ledger written by a later version still loads).
func (x *ledgerIndex) apply(recs ...Record) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, r := range recs {
		x.records++
		switch {
		case r.Kind == KindRequest && r.Request != nil:
			e := x.entry(r.Request.RequestID)
			if !e.hasRequest {
				x.live++
			}
			e.rec = *r.Request
			if e.rec.Outcome == "" {
				e.rec.Outcome = Unknown
			}
			e.hasRequest = true
		case r.Kind == KindMessage && r.Message != nil:
			m := *r.Message
			e := x.entry(m.RequestID)
			e.history = append(e.history, m)
			x.live++
			x.messages[m.MessageID] = m.RequestID
			e.current[m.Receiver] = m.MessageID
		case r.Kind == KindOutcome && r.Outcome != nil:
			e := x.entry(r.Outcome.RequestID)
			e.rec.Outcome = r.Outcome.Outcome
			e.rec.Error = r.Outcome.Error
			if r.Outcome.CompletionRef != "" {
				e.rec.CompletionRef = r.Outcome.CompletionRef
			}
		case r.Kind == KindInbound && r.Inbound != nil:
			if _, ok := x.inbound[inboundKey(r.Inbound.Sender, r.Inbound.RequestID)]; !ok {
				x.live++
			}
			x.inbound[inboundKey(r.Inbound.Sender, r.Inbound.RequestID)] = *r.Inbound
		}
	}
}

func (x *ledgerIndex) request(requestID string) (RequestRecord, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	e := x.requests[requestID]
	if e == nil || !e.hasRequest {
		return RequestRecord{}, false
	}
	return e.rec, true
}

func (x *ledgerIndex) message(messageID string) (MessageRecord, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	e := x.requests[x.messages[messageID]]
	if e == nil {
		return MessageRecord{}, false
	}
	for i := len(e.history) - 1; i >= 0; i-- {
		if e.history[i].MessageID == messageID {
			return e.history[i], true
		}
	}
	return MessageRecord{}, false
}

func (x *ledgerIndex) delivery(requestID, receiver string) (MessageRecord, bool) {
	x.mu.RLock()
	e := x.requests[requestID]
	if e == nil {
		x.mu.RUnlock()
		return MessageRecord{}, false
	}
	id, ok := e.current[receiver]
	x.mu.RUnlock()
	if !ok {
		return MessageRecord{}, false
	}
	return x.message(id)
}

func (x *ledgerIndex) history(requestID string) []MessageRecord {
	x.mu.RLock()
	defer x.mu.RUnlock()
	e := x.requests[requestID]
	if e == nil {
		return nil
	}
	return slices.Clone(e.history)
}

func (x *ledgerIndex) inboundRec(sender, requestID string) (InboundRecord, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	r, ok := x.inbound[inboundKey(sender, requestID)]
	return r, ok
}

// sortedEntries returns the entries in creation order; x.mu must be held.
func (x *ledgerIndex) sortedEntries() []*requestEntry {
	out := make([]*requestEntry, 0, len(x.requests))
	for _, e := range x.requests {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *requestEntry) int {
		switch {
		case a.order < b.order:
			return -1
		case a.order > b.order:
			return 1
		}
		return 0
	})
	return out
}

// currentOf returns the latest version of each current transmission of e;
// x.mu must be held.
func currentOf(e *requestEntry) []MessageRecord {
	var out []MessageRecord
	for i := len(e.history) - 1; i >= 0; i-- {
		m := e.history[i]
		if e.current[m.Receiver] == m.MessageID && !slices.ContainsFunc(out, func(o MessageRecord) bool { return o.Receiver == m.Receiver }) {
			out = append(out, m)
		}
	}
	slices.Reverse(out)
	return out
}

func (x *ledgerIndex) unacknowledged(receiver string) []MessageRecord {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []MessageRecord
	for _, e := range x.sortedEntries() {
		for _, m := range currentOf(e) {
			if (receiver == "" || m.Receiver == receiver) && (m.State == Pending || m.State == InTransit) {
				out = append(out, m)
			}
		}
	}
	return out
}

func (x *ledgerIndex) pendingRequests(olderThan time.Time) []RequestRecord {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []RequestRecord
	for _, e := range x.sortedEntries() {
		if e.hasRequest && e.rec.Outcome == Unknown && (olderThan.IsZero() || e.rec.CreatedAt.Before(olderThan)) {
			out = append(out, e.rec)
		}
	}
	return out
}

func (x *ledgerIndex) messagesInState(state State, olderThan time.Time) []MessageRecord {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []MessageRecord
	for _, e := range x.sortedEntries() {
		for _, m := range currentOf(e) {
			if m.State == state && (olderThan.IsZero() || m.At.Before(olderThan)) {
				out = append(out, m)
			}
		}
	}
	return out
}

// purge deletes what expired at or before now and returns how many
// requests and inbound records it deleted.
func (x *ledgerIndex) purge(now time.Time) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := 0
	for id, e := range x.requests {
		exp := e.rec.ExpiresAt
		if !e.hasRequest { // orphan transmissions: their own expiry
			for _, m := range e.history {
				if m.ExpiresAt.After(exp) {
					exp = m.ExpiresAt
				}
			}
		}
		if !exp.IsZero() && !exp.After(now) {
			for _, m := range e.history {
				delete(x.messages, m.MessageID)
			}
			delete(x.requests, id)
			n++
		}
	}
	for k, r := range x.inbound {
		if !r.ExpiresAt.IsZero() && !r.ExpiresAt.After(now) {
			delete(x.inbound, k)
			n++
		}
	}
	x.recount()
	return n
}

// snapshot returns records that rebuild the current state: each request
// (with its outcome folded in) followed by its history, then the inbound
// records.
func (x *ledgerIndex) snapshot() []Record {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []Record
	for _, e := range x.sortedEntries() {
		if e.hasRequest {
			out = append(out, RequestRec(e.rec))
		} else if e.rec.Outcome != Unknown {
			out = append(out, OutcomeRec(OutcomeRecord{RequestID: e.rec.RequestID, Outcome: e.rec.Outcome, Error: e.rec.Error, CompletionRef: e.rec.CompletionRef}))
		}
		for _, m := range e.history {
			out = append(out, MessageRec(m))
		}
	}
	keys := make([]string, 0, len(x.inbound))
	for k := range x.inbound {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out = append(out, InboundRec(x.inbound[k]))
	}
	return out
}

// stats returns the number of records applied since the last reset and
// the number a snapshot would hold.
func (x *ledgerIndex) stats() (applied, live int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.records, x.live
}

// recount recomputes live; x.mu is held.
func (x *ledgerIndex) recount() {
	x.live = len(x.inbound)
	for _, e := range x.requests {
		x.live += len(e.history)
		if e.hasRequest {
			x.live++
		}
	}
}

func (x *ledgerIndex) resetApplied(n int) {
	x.mu.Lock()
	x.records = n
	x.mu.Unlock()
}
