package journal

import (
	"fmt"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
)

// FsyncPolicy says when appended data is forced to stable storage.
type FsyncPolicy string

// The fsync policies.
const (
	// FsyncAlways: an append returns only after its data is on stable
	// storage. Concurrent appenders to one file share one fsync (group
	// commit).
	FsyncAlways FsyncPolicy = "always"
	// FsyncBatch: an append returns once written; Store.Sync, called
	// periodically by the owner, forces everything written so far.
	FsyncBatch FsyncPolicy = "batch"
	// FsyncNever: the operating system decides; a machine crash may lose
	// the last appends (a process crash loses nothing).
	FsyncNever FsyncPolicy = "never"
)

// ParseFsyncPolicy parses "always", "batch" or "never"; "" is always.
func ParseFsyncPolicy(s string) (FsyncPolicy, error) {
	switch FsyncPolicy(s) {
	case "", FsyncAlways:
		return FsyncAlways, nil
	case FsyncBatch, FsyncNever:
		return FsyncPolicy(s), nil
	}
	return "", fmt.Errorf("fsync policy %q is unknown; want always, batch or never", s)
}

// State is the delivery state of one message to one receiver.
type State string

// The delivery states. PENDING → IN_TRANSIT → DELIVERED → PROCESSED, and
// FAILED from any state before DELIVERED. A retry goes from IN_TRANSIT
// back to PENDING until its transmission.
const (
	Pending   State = "PENDING"
	InTransit State = "IN_TRANSIT"
	Delivered State = "DELIVERED"
	Processed State = "PROCESSED"
	Failed    State = "FAILED"
)

// Terminal reports whether no further transmission will happen in state s
// on its own (a FAILED delivery may still be requeued by hand).
func (s State) Terminal() bool { return s == Delivered || s == Processed || s == Failed }

// Outcome is the result of a request as a whole.
type Outcome string

// The outcomes.
const (
	// Completed: every receiver confirmed processing.
	Completed Outcome = "COMPLETED"
	// OutcomeFailed: the request failed permanently for some receiver and
	// no delivery is still under way.
	OutcomeFailed Outcome = "FAILED"
	// Unknown: not yet known (in progress, or only receipt confirmed).
	Unknown Outcome = "UNKNOWN"
)

// RequestRecord is a logical request as its sender's ledger keeps it.
type RequestRecord struct {
	RequestID string `json:"requestId"`
	Sender    string `json:"sender"`
	// Receivers are the agents the request was routed to.
	Receivers []string `json:"receivers"`
	// Envelope is the template every transmission is made from: its
	// messageId, seq, ack, timestamp and receiver are set per
	// transmission.
	Envelope      envelope.Envelope `json:"envelope"`
	Outcome       Outcome           `json:"outcome"`
	CreatedAt     time.Time         `json:"createdAt"`
	ExpiresAt     time.Time         `json:"expiresAt,omitzero"`
	Error         *core.Error       `json:"error,omitempty"`
	CompletionRef string            `json:"completionRef,omitempty"`
	// PayloadAt, set by the file ledger (callers leave it nil), names the
	// channel line that holds the payload: on disk the record then
	// leaves the payload out (null), so a send writes it once.
	PayloadAt *LineRef `json:"payloadAt,omitempty"`
}

// LineRef names one transmission's line in a channel from the ledger's
// agent.
type LineRef struct {
	Receiver  string `json:"receiver"`
	Seq       uint64 `json:"seq"`
	MessageID string `json:"messageId"`
}

// MessageRecord is one transmission (one messageId) to one receiver, in
// one state. A ledger keeps every version it was given: the latest is the
// current state, and all of them in order are the request's history.
type MessageRecord struct {
	MessageID  string `json:"messageId"`
	RequestID  string `json:"requestId"`
	Sender     string `json:"sender"`
	Receiver   string `json:"receiver"`
	Seq        uint64 `json:"seq,omitempty"`
	State      State  `json:"state"`
	RetryCount int    `json:"retryCount"`
	// RetryBase is the RetryCount at which the current retry budget
	// started (non-zero after a requeue).
	RetryBase int `json:"retryBase,omitempty"`
	// At is when the record entered State.
	At time.Time `json:"at"`
	// SentAt is when the transmission was appended to its channel.
	SentAt time.Time `json:"sentAt,omitzero"`
	// AckDeadline (IN_TRANSIT): no ACK by then means a timeout.
	AckDeadline time.Time `json:"ackDeadline,omitzero"`
	// NextRetryAt (PENDING after a timeout or NACK): when to transmit
	// again.
	NextRetryAt time.Time `json:"nextRetryAt,omitzero"`
	ExpiresAt   time.Time `json:"expiresAt,omitzero"`
	// AckStatus is the receiver's ACK status (received, processed,
	// queued) once there is one.
	AckStatus string    `json:"ackStatus,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Code      core.Code `json:"code,omitempty"`
}

// OutcomeRecord changes a request's outcome.
type OutcomeRecord struct {
	RequestID     string      `json:"requestId"`
	Outcome       Outcome     `json:"outcome"`
	Error         *core.Error `json:"error,omitempty"`
	CompletionRef string      `json:"completionRef,omitempty"`
}

// Inbound statuses: how a receiver answered a request.
const (
	InboundReceived  = "received"
	InboundProcessed = "processed"
	InboundQueued    = "queued"
	InboundNacked    = "nacked"
)

// InboundRecord is a receiver's durable answer to a request: the ACK
// status it gave, or a NACK. It is what lets the receiver recognise a
// retry of a request it already answered, across restarts.
type InboundRecord struct {
	Sender    string `json:"sender"`
	RequestID string `json:"requestId"`
	MessageID string `json:"messageId"`
	// Seq is the highest channel seq of the request's transmissions this
	// answer covers: a transmission with a higher seq is a new retry.
	Seq       uint64    `json:"seq,omitempty"`
	Status    string    `json:"status"`
	CanRetry  bool      `json:"canRetry,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	ErrorCode string    `json:"errorCode,omitempty"`
	At        time.Time `json:"at"`
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
}

// Record kinds.
const (
	KindRequest = "request"
	KindMessage = "message"
	KindOutcome = "outcome"
	KindInbound = "inbound"
)

// Record is one line of a ledger: exactly one of its pointers is set,
// the one Kind names.
type Record struct {
	Kind    string         `json:"kind"`
	Request *RequestRecord `json:"request,omitempty"`
	Message *MessageRecord `json:"message,omitempty"`
	Outcome *OutcomeRecord `json:"outcome,omitempty"`
	Inbound *InboundRecord `json:"inbound,omitempty"`
}

// RequestRec, MessageRec, OutcomeRec and InboundRec wrap a record.
func RequestRec(r RequestRecord) Record { return Record{Kind: KindRequest, Request: &r} }

// MessageRec wraps a MessageRecord.
func MessageRec(m MessageRecord) Record { return Record{Kind: KindMessage, Message: &m} }

// OutcomeRec wraps an OutcomeRecord.
func OutcomeRec(o OutcomeRecord) Record { return Record{Kind: KindOutcome, Outcome: &o} }

// InboundRec wraps an InboundRecord.
func InboundRec(i InboundRecord) Record { return Record{Kind: KindInbound, Inbound: &i} }

// AgentRecord is an agent in the registry.
type AgentRecord struct {
	AgentID           string             `json:"agentId"`
	Type              envelope.AgentType `json:"type"`
	ProtocolVersion   string             `json:"protocolVersion"`
	SupportedVersions []string           `json:"supportedVersions,omitempty"`
	Capabilities      []string           `json:"capabilities,omitempty"`
	RegisteredAt      time.Time          `json:"registeredAt"`
	// Removed marks an unregistration.
	Removed bool `json:"removed,omitempty"`
	PID     int  `json:"pid,omitempty"`
	// Online (filled in by Agents, never stored) tells whether a process
	// currently holds the agent's claim.
	Online bool `json:"-"`
}

// Dead-letter states.
const (
	DeadActive   = "dead"
	DeadRequeued = "requeued"
	DeadResolved = "resolved" // a late ACK arrived after the failure
)

// DeadLetter is a failed transmission in the dead-letter queue.
type DeadLetter struct {
	MessageID   string    `json:"messageId"`
	RequestID   string    `json:"requestId"`
	Sender      string    `json:"sender"`
	Receiver    string    `json:"receiver"`
	MessageType string    `json:"messageType,omitempty"`
	Code        core.Code `json:"code,omitempty"`
	Reason      string    `json:"reason,omitempty"`
	RetryCount  int       `json:"retryCount"`
	FailedAt    time.Time `json:"failedAt"`
	ExpiresAt   time.Time `json:"expiresAt,omitzero"`
	// Status is DeadActive, DeadRequeued or DeadResolved; the latest line
	// for a messageId wins.
	Status string `json:"status"`
	// Envelope is the failed transmission, so that the queue can be read
	// on its own.
	Envelope *envelope.Envelope `json:"envelope,omitempty"`
}
