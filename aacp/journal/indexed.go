package journal

import (
	"time"

	"github.com/mcprt/mcprt/core"
)

// IndexedLedger is the in-memory index of one ledger, for Store
// implementations kept outside this package (the NATS journal): they
// persist the records themselves and Apply them here, and the index
// answers every Ledger query exactly as the file and memory ledgers do.
// Its methods are safe for concurrent use. Make one with NewIndexedLedger.
type IndexedLedger struct{ x *ledgerIndex }

// NewIndexedLedger returns an empty index.
func NewIndexedLedger() *IndexedLedger { return &IndexedLedger{x: newLedgerIndex()} }

// Apply adds records to the index, as a replay or a Put does.
func (l *IndexedLedger) Apply(recs ...Record) { l.x.apply(recs...) }

// Snapshot returns records that rebuild the current state when applied
// to an empty index.
func (l *IndexedLedger) Snapshot() []Record { return l.x.snapshot() }

// Purge drops requests (with their transmissions) and inbound records
// whose expiry is at or before now and returns how many records it
// dropped.
func (l *IndexedLedger) Purge(now time.Time) int { return l.x.purge(now) }

// Stats returns the number of records applied since the last
// ResetApplied and the number a Snapshot would hold.
func (l *IndexedLedger) Stats() (applied, live int) { return l.x.stats() }

// ResetApplied sets the applied count (after a rewrite from a snapshot).
func (l *IndexedLedger) ResetApplied(n int) { l.x.resetApplied(n) }

// Request implements the query of Ledger.
func (l *IndexedLedger) Request(id string) (RequestRecord, bool) { return l.x.request(id) }

// Message implements the query of Ledger.
func (l *IndexedLedger) Message(id string) (MessageRecord, bool) { return l.x.message(id) }

// Delivery implements the query of Ledger.
func (l *IndexedLedger) Delivery(id, recv string) (MessageRecord, bool) {
	return l.x.delivery(id, recv)
}

// History implements the query of Ledger.
func (l *IndexedLedger) History(id string) []MessageRecord { return l.x.history(id) }

// Inbound implements the query of Ledger.
func (l *IndexedLedger) Inbound(sender, id string) (InboundRecord, bool) {
	return l.x.inboundRec(sender, id)
}

// Unacknowledged implements the query of Ledger.
func (l *IndexedLedger) Unacknowledged(receiver string) []MessageRecord {
	return l.x.unacknowledged(receiver)
}

// PendingRequests implements the query of Ledger.
func (l *IndexedLedger) PendingRequests(olderThan time.Time) []RequestRecord {
	return l.x.pendingRequests(olderThan)
}

// MessagesInState implements the query of Ledger.
func (l *IndexedLedger) MessagesInState(st State, olderThan time.Time) []MessageRecord {
	return l.x.messagesInState(st, olderThan)
}

// CompletedRecord returns the record MarkCompleted writes.
func CompletedRecord(requestID string, o Outcome, ref string) Record {
	return OutcomeRec(OutcomeRecord{RequestID: requestID, Outcome: o, CompletionRef: ref})
}

// FailedRecord returns the record MarkFailed writes.
func FailedRecord(requestID string, err *core.Error) Record {
	return OutcomeRec(OutcomeRecord{RequestID: requestID, Outcome: OutcomeFailed, Error: err})
}

// FoldDeadLetters keeps the latest version of each messageId, in the
// order the messageIds first appeared.
func FoldDeadLetters(all []DeadLetter) []DeadLetter { return foldDeadLetters(all) }
