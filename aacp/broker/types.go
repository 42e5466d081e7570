package broker

import (
	"encoding/json"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/core"
)

// The input and output types of the Broker's methods. Each input maps
// one to one onto the arguments of an MCP tool (aacp_register_agent,
// aacp_agents, aacp_send, aacp_receive, aacp_ack, aacp_nack, aacp_status,
// aacp_dead_letters, aacp_requeue) through its json tags; the acting agent
// id is not part of the input, it is the tool's configuration.

// RegisterInput is the input of RegisterAgent (aacp_register_agent).
type RegisterInput struct {
	// Type is Manager, Implementation or AdHoc.
	Type envelope.AgentType `json:"type"`
	// SupportedVersions are the protocol versions the agent speaks;
	// empty means ["1.0.0"].
	SupportedVersions []string `json:"supportedVersions,omitempty"`
	// Capabilities are free-form (message types the agent handles, say).
	Capabilities []string `json:"capabilities,omitempty"`
	// Unlisted hosts the agent without writing it to the shared registry:
	// it can send, and receive the answers to what it sends, but no one
	// can address it. A process's made-up default id is hosted so.
	Unlisted bool `json:"-"`
}

// RegisterOutput is the result of RegisterAgent.
type RegisterOutput struct {
	AgentID string             `json:"agentId"`
	Type    envelope.AgentType `json:"type"`
	// ProtocolVersion is the negotiated version: the highest version both
	// the agent and the broker speak.
	ProtocolVersion string `json:"protocolVersion"`
	// PendingOutbound counts the agent's transmissions still awaiting an
	// acknowledgement, resumed from its ledger.
	PendingOutbound int `json:"pendingOutbound"`
	// QueuedInbound counts the messages waiting for the agent.
	QueuedInbound int `json:"queuedInbound"`
}

// AgentsInput is the input of Agents (aacp_agents).
type AgentsInput struct {
	// Type, when set, keeps only agents of that type.
	Type envelope.AgentType `json:"type,omitempty"`
}

// AgentInfo is one registered agent.
type AgentInfo struct {
	AgentID           string             `json:"agentId"`
	Type              envelope.AgentType `json:"type"`
	ProtocolVersion   string             `json:"protocolVersion"`
	SupportedVersions []string           `json:"supportedVersions,omitempty"`
	Capabilities      []string           `json:"capabilities,omitempty"`
	RegisteredAt      time.Time          `json:"registeredAt"`
	// Online: some process currently hosts the agent.
	Online bool `json:"online"`
	// Local: this broker hosts it.
	Local bool `json:"local"`
}

// AgentsOutput is the result of Agents.
type AgentsOutput struct {
	Agents []AgentInfo `json:"agents"`
}

// Receiver addresses a message: one agent, or with AgentID "*" every agent
// of Type ("*" or empty: every agent but the sender).
type Receiver struct {
	AgentID string             `json:"agentId"`
	Type    envelope.AgentType `json:"type,omitempty"`
}

// SendInput is the input of Send (aacp_send).
type SendInput struct {
	Receiver    Receiver        `json:"receiver"`
	MessageType string          `json:"messageType"`
	Payload     json.RawMessage `json:"payload"`
	// Priority is HIGH, NORMAL (default) or LOW.
	Priority      envelope.Priority `json:"priority,omitempty"`
	CorrelationID string            `json:"correlationId,omitempty"`
	// RequestID makes the send idempotent: a request id the agent has
	// already sent returns that request's deliveries and sends nothing.
	// Empty: a new id.
	RequestID string `json:"requestId,omitempty"`
	// TTLSeconds is the message's time to live; 0 means the broker's
	// DefaultTTL.
	TTLSeconds int64    `json:"ttlSeconds,omitempty"`
	Tags       []string `json:"tags,omitempty"`
}

// Delivery is one receiver of a request.
type Delivery struct {
	AgentID   string        `json:"agentId"`
	MessageID string        `json:"messageId"`
	Seq       uint64        `json:"seq"`
	State     journal.State `json:"state"`
}

// SendOutput is the result of Send, returned once the request is durable.
type SendOutput struct {
	// MessageID is the first delivery's message id (the only one unless
	// the request was broadcast; each delivery has its own).
	MessageID  string     `json:"messageId"`
	RequestID  string     `json:"requestId"`
	Deliveries []Delivery `json:"deliveries"`
	// Duplicate: the request id had been sent before; nothing was sent.
	Duplicate bool `json:"duplicate,omitempty"`
}

// ReceiveInput is the input of Receive (aacp_receive).
type ReceiveInput struct {
	// WaitMs is how long to wait for a first message when none is
	// waiting: 0 returns at once; at most MaxWait.
	WaitMs int64 `json:"waitMs,omitempty"`
	// Max is how many messages to return at most: 0 means 10, at most
	// MaxReceive.
	Max int `json:"max,omitempty"`
	// MessageTypes, when set, returns only messages of these types
	// (others stay queued).
	MessageTypes []string `json:"messageTypes,omitempty"`
}

// Message is a received message.
type Message struct {
	envelope.Envelope
	// Redelivered: this request was handed out before without an answer,
	// and the sender retried it.
	Redelivered bool `json:"redelivered,omitempty"`
}

// ReceiveOutput is the result of Receive.
type ReceiveOutput struct {
	Messages []Message `json:"messages"`
}

// AckInput is the input of Ack (aacp_ack).
type AckInput struct {
	MessageID string `json:"messageId"`
	// Status is received, processed or queued.
	Status string `json:"status"`
	Notes  string `json:"notes,omitempty"`
}

// AckAllInput is the input of AckAll: several received messages answered
// with one status.
type AckAllInput struct {
	MessageIDs []string `json:"messageIds"`
	// Status is received, processed or queued.
	Status string `json:"status"`
	Notes  string `json:"notes,omitempty"`
}

// AnswerResult is the outcome of one answer of AckAll: its output, or
// the error Ack would have returned for it (with the output too when
// only the reply could not be sent: the answer is recorded).
type AnswerResult struct {
	AnswerOutput
	Err error
}

// NackInput is the input of Nack (aacp_nack).
type NackInput struct {
	MessageID string `json:"messageId"`
	Reason    string `json:"reason"`
	// ErrorCode is a catalogue code (E_TASK_003, say) or any
	// UPPER_SNAKE_CASE code.
	ErrorCode string `json:"errorCode,omitempty"`
	// CanRetry asks the sender to retry (with the same request id).
	CanRetry bool `json:"canRetry"`
}

// AnswerOutput is the result of Ack and Nack.
type AnswerOutput struct {
	MessageID string `json:"messageId"`
	RequestID string `json:"requestId"`
	// Status is the ACK status given, or "nacked".
	Status string `json:"status"`
	// ReplyMessageID is the id of the ACK or NACK sent to the sender
	// (empty when the sender is the broker itself).
	ReplyMessageID string `json:"replyMessageId,omitempty"`
}

// StatusInput is the input of Status (aacp_status): one of the two ids.
type StatusInput struct {
	MessageID string `json:"messageId,omitempty"`
	RequestID string `json:"requestId,omitempty"`
}

// DeliveryStatus is the state of a request at one receiver.
type DeliveryStatus struct {
	AgentID   string        `json:"agentId"`
	MessageID string        `json:"messageId"`
	Seq       uint64        `json:"seq,omitempty"`
	State     journal.State `json:"state"`
	// Retries is how many retransmissions were made.
	Retries   int    `json:"retries"`
	AckStatus string `json:"ackStatus,omitempty"`
	// AckDeadline is set once the receiver took the transmission: with
	// no answer by then it is offered again. Unset while it waits in the
	// receiver's inbox, where only its ttl can end it.
	AckDeadline time.Time `json:"ackDeadline,omitzero"`
	NextRetryAt time.Time `json:"nextRetryAt,omitzero"`
	LastError   string    `json:"lastError,omitempty"`
	Code        core.Code `json:"code,omitempty"`
}

// Transition is one step of a request's history.
type Transition struct {
	At         time.Time     `json:"at"`
	AgentID    string        `json:"agentId"`
	MessageID  string        `json:"messageId"`
	State      journal.State `json:"state"`
	RetryCount int           `json:"retryCount"`
	Reason     string        `json:"reason,omitempty"`
	Code       core.Code     `json:"code,omitempty"`
}

// StatusOutput is the result of Status.
type StatusOutput struct {
	RequestID   string    `json:"requestId"`
	MessageType string    `json:"messageType"`
	CreatedAt   time.Time `json:"createdAt"`
	ExpiresAt   time.Time `json:"expiresAt,omitzero"`
	// State is the request's overall state: the least advanced of its
	// deliveries (FAILED counts as settled).
	State journal.State `json:"state"`
	// Outcome is COMPLETED (every receiver processed it), FAILED, or
	// UNKNOWN (still under way, or receipt confirmed but not processing).
	Outcome    journal.Outcome  `json:"outcome"`
	Error      *core.Error      `json:"error,omitempty"`
	Deliveries []DeliveryStatus `json:"deliveries"`
	History    []Transition     `json:"history"`
}

// DeadLettersInput is the input of DeadLetters (aacp_dead_letters).
type DeadLettersInput struct {
	// Limit bounds the entries returned: 0 means 50, at most 500.
	Limit int `json:"limit,omitempty"`
}

// DeadLettersOutput is the result of DeadLetters.
type DeadLettersOutput struct {
	DeadLetters []journal.DeadLetter `json:"deadLetters"`
	// Total counts the agent's entries, before Limit.
	Total int `json:"total"`
}

// RequeueInput is the input of Requeue (aacp_requeue).
type RequeueInput struct {
	MessageID string `json:"messageId"`
}

// RequeueOutput is the result of Requeue.
type RequeueOutput struct {
	RequestID string `json:"requestId"`
	// MessageID is the new transmission's id.
	MessageID string        `json:"messageId"`
	Seq       uint64        `json:"seq"`
	State     journal.State `json:"state"`
}

// PurgeOutput is the result of PurgeExpired.
type PurgeOutput struct {
	// LedgerRecords counts requests and inbound records deleted from the
	// ledgers of the local agents.
	LedgerRecords int `json:"ledgerRecords"`
	// DeadLetters counts dead-letter entries deleted.
	DeadLetters int `json:"deadLetters"`
	// Queued counts expired messages dropped from local inboxes.
	Queued int `json:"queued"`
}
