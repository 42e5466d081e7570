package envelope

import (
	"encoding/json"
	"strings"
	"time"
)

// Version is the protocol version this package speaks.
const Version = "1.0.0"

// Limits of the protocol.
const (
	// DefaultMaxBytes is the default size limit of one encoded envelope:
	// 1 MiB.
	DefaultMaxBytes = 1 << 20
	// MaxAgentIDBytes is the longest agent id.
	MaxAgentIDBytes = 64
	// MaxIDBytes is the longest messageId, requestId or correlationId.
	MaxIDBytes = 128
	// MaxTags and MaxTagBytes bound metadata.tags.
	MaxTags     = 32
	MaxTagBytes = 64
	// Broadcast is the receiver agentId (and type) that addresses every
	// matching agent.
	Broadcast = "*"
	// SystemAgentID is the sender of the reports the broker itself writes
	// (an ERROR_REPORT after a delivery failed). Agent ids must start with
	// a letter or digit, so no agent can register it.
	SystemAgentID = "_broker"
	// TimestampLayout is the form of every timestamp the package writes:
	// RFC 3339, UTC, milliseconds.
	TimestampLayout = "2006-01-02T15:04:05.000Z07:00"
)

// AgentType is the role of an agent.
type AgentType string

// The agent types. AnyType is valid only in a receiver.
const (
	Manager        AgentType = "Manager"
	Implementation AgentType = "Implementation"
	AdHoc          AgentType = "AdHoc"
	AnyType        AgentType = "*"
)

// Valid reports whether t is one of the three agent types (AnyType is
// not).
func (t AgentType) Valid() bool {
	return t == Manager || t == Implementation || t == AdHoc
}

// Priority orders messages within a receiver's inbox.
type Priority string

// The priorities, from first served to last.
const (
	High   Priority = "HIGH"
	Normal Priority = "NORMAL"
	Low    Priority = "LOW"
)

// Rank is 0 for HIGH, 1 for NORMAL, 2 for LOW, and 3 for anything else.
func (p Priority) Rank() int {
	switch p {
	case High:
		return 0
	case Normal:
		return 1
	case Low:
		return 2
	}
	return 3
}

// The message types. Any type starting with CustomPrefix is also valid and
// has a free-form object payload.
const (
	TaskAssignment = "TASK_ASSIGNMENT"
	TaskUpdate     = "TASK_UPDATE"
	StateSync      = "STATE_SYNC"
	ErrorReport    = "ERROR_REPORT"
	HandoffRequest = "HANDOFF_REQUEST"
	Ack            = "ACK"
	Nack           = "NACK"
	CustomPrefix   = "CUSTOM_"
)

// CoreTypes lists the seven core message types.
func CoreTypes() []string {
	return []string{TaskAssignment, TaskUpdate, StateSync, ErrorReport, HandoffRequest, Ack, Nack}
}

// IsCoreType reports whether t is one of the seven core message types.
func IsCoreType(t string) bool {
	switch t {
	case TaskAssignment, TaskUpdate, StateSync, ErrorReport, HandoffRequest, Ack, Nack:
		return true
	}
	return false
}

// IsCustomType reports whether t is a custom type: CUSTOM_ followed by one
// or more upper-case letters, digits and underscores, at most 64 bytes in
// all.
func IsCustomType(t string) bool {
	rest, ok := strings.CutPrefix(t, CustomPrefix)
	if !ok || rest == "" || len(t) > 64 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// ValidType reports whether t is a core or custom message type.
func ValidType(t string) bool { return IsCoreType(t) || IsCustomType(t) }

// Agent names a sender or receiver.
type Agent struct {
	AgentID string    `json:"agentId"`
	Type    AgentType `json:"type"`
}

// Metadata is the envelope's metadata object.
type Metadata struct {
	// RetryCount is 0 for the first transmission of a request and grows
	// by one with each retry.
	RetryCount int `json:"retryCount"`
	// TTL is the message's time to live in seconds, counted from the
	// request's first transmission.
	TTL int64 `json:"ttl,omitempty"`
	// Tags categorise the message.
	Tags []string `json:"tags,omitempty"`
}

// Envelope is one transmission of a message. Its JSON form is one line of
// a channel file.
type Envelope struct {
	// Seq numbers the transmissions of one sender→receiver channel from
	// 1, without gaps; the journal assigns it when it appends.
	Seq uint64 `json:"seq"`
	// Ack is the sender's cumulative acknowledgement of the reverse
	// channel: every seq up to Ack has been received. Zero: none yet.
	Ack           uint64 `json:"ack,omitempty"`
	Version       string `json:"version"`
	MessageID     string `json:"messageId"`
	RequestID     string `json:"requestId"`
	CorrelationID string `json:"correlationId,omitempty"`
	// Timestamp is when this transmission was made (TimestampLayout).
	Timestamp   string          `json:"timestamp"`
	Sender      Agent           `json:"sender"`
	Receiver    Agent           `json:"receiver"`
	MessageType string          `json:"messageType"`
	Priority    Priority        `json:"priority"`
	Payload     json.RawMessage `json:"payload"`
	Metadata    Metadata        `json:"metadata"`
}

// Time parses Timestamp; the zero time when it does not parse.
func (e *Envelope) Time() time.Time {
	t, err := time.Parse(time.RFC3339Nano, e.Timestamp)
	if err != nil {
		return time.Time{}
	}
	return t
}

// ExpiresAt is the envelope's time plus its TTL; the zero time when it
// has no TTL or no valid timestamp. A retry carries the TTL that remains,
// so the expiry is the same for every transmission of a request.
func (e *Envelope) ExpiresAt() time.Time {
	t := e.Time()
	if t.IsZero() || e.Metadata.TTL <= 0 {
		return time.Time{}
	}
	return t.Add(time.Duration(e.Metadata.TTL) * time.Second)
}

// Channel is the directory name of the sender→receiver channel:
// "{sender}_to_{receiver}".
func Channel(sender, receiver string) string { return sender + "_to_" + receiver }

// SplitChannel undoes Channel. It reports false when name is not the
// channel of two valid agent ids (SystemAgentID counts as valid sender).
func SplitChannel(name string) (sender, receiver string, ok bool) {
	i := strings.Index(name, "_to_")
	if i < 0 {
		return "", "", false
	}
	sender, receiver = name[:i], name[i+4:]
	if (CheckAgentID(sender) != nil && sender != SystemAgentID) || CheckAgentID(receiver) != nil {
		return "", "", false
	}
	return sender, receiver, true
}

// FormatTime formats t in TimestampLayout (UTC, milliseconds).
func FormatTime(t time.Time) string { return t.UTC().Format(TimestampLayout) }
