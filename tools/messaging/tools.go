package messaging

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/mcp"
)

// The tools' inputs: the broker's inputs plus agentId, the agent the call
// acts for. Their schemas are derived from these types; values are
// checked by the broker, so that a bad value gets the protocol's error
// code (E_VALIDATION_*, E_ROUTING_*, E_PROTOCOL_*) rather than a schema
// failure. Descriptions are for a model deciding how to call: short.

type registerArgs struct {
	AgentID           string   `json:"agentId,omitempty" jsonschema:"This session's agent id. Default: the server's (aacp.agentId)."`
	Type              string   `json:"type" jsonschema:"Manager, Implementation or AdHoc."`
	SupportedVersions []string `json:"supportedVersions,omitempty"`
	Capabilities      []string `json:"capabilities,omitempty"`
}

type agentsArgs struct {
	AgentID string `json:"agentId,omitempty" jsonschema:"Only this agent."`
	Type    string `json:"type,omitempty" jsonschema:"Only this type."`
}

type heartbeatArgs struct {
	Status string `json:"status,omitempty" jsonschema:"What you are doing, in a few words."`
	Note   string `json:"note,omitempty"`
}

type receiverArg struct {
	AgentID string `json:"agentId" jsonschema:"An agent id, or \"*\" for every agent but you."`
	Type    string `json:"type,omitempty" jsonschema:"With \"*\": only agents of this type."`
}

type sendArgs struct {
	AgentID       string                     `json:"agentId,omitempty" jsonschema:"Send as this agent. Default: this session's agent."`
	Receiver      receiverArg                `json:"receiver"`
	MessageType   string                     `json:"messageType" jsonschema:"TASK_ASSIGNMENT, TASK_UPDATE, STATE_SYNC, ERROR_REPORT, HANDOFF_REQUEST or CUSTOM_<NAME>."`
	Payload       map[string]json.RawMessage `json:"payload" jsonschema:"JSON object. TASK_ASSIGNMENT needs taskId, taskRef, taskDescription, memoryLogPath, executionType; TASK_UPDATE taskId, status, progress; CUSTOM_* anything."`
	Priority      string                     `json:"priority,omitempty" jsonschema:"HIGH, NORMAL (default) or LOW."`
	Subject       string                     `json:"subject,omitempty" jsonschema:"A short title; searchable."`
	ThreadID      string                     `json:"threadId,omitempty" jsonschema:"Continue this thread (default: a new one)."`
	CorrelationID string                     `json:"correlationId,omitempty"`
	RequestID     string                     `json:"requestId,omitempty" jsonschema:"Idempotency key: a request id sent before sends nothing."`
	TTLSeconds    int64                      `json:"ttlSeconds,omitempty" jsonschema:"Expiry in seconds, at most 315360000 (10 years); default aacp.defaultTtlMs (24h)."`
	Tags          []string                   `json:"tags,omitempty"`
}

type receiveArgs struct {
	AgentID      string   `json:"agentId,omitempty" jsonschema:"Receive as this agent. Default: this session's agent."`
	WaitMs       int64    `json:"waitMs,omitempty" jsonschema:"Wait up to this long for a first message (max 60000). Default 0."`
	Max          int      `json:"max,omitempty" jsonschema:"Default 10, max 100."`
	MessageTypes []string `json:"messageTypes,omitempty" jsonschema:"Only these types; others stay queued."`
}

type replyArgs struct {
	AgentID     string                     `json:"agentId,omitempty"`
	MessageID   string                     `json:"messageId" jsonschema:"The message you answer."`
	Text        string                     `json:"text,omitempty" jsonschema:"Plain answer; or give payload."`
	Payload     map[string]json.RawMessage `json:"payload,omitempty"`
	MessageType string                     `json:"messageType,omitempty" jsonschema:"Default CUSTOM_REPLY."`
	Subject     string                     `json:"subject,omitempty"`
}

type threadArgs struct {
	ThreadID string `json:"threadId"`
	Limit    int    `json:"limit,omitempty" jsonschema:"Default 100, max 1000."`
}

type searchArgs struct {
	Query       string `json:"query" jsonschema:"Words to find in subjects and payload text."`
	AgentID     string `json:"agentId,omitempty" jsonschema:"Only messages this agent sent or received."`
	ThreadID    string `json:"threadId,omitempty"`
	MessageType string `json:"messageType,omitempty"`
	Since       string `json:"since,omitempty" jsonschema:"RFC 3339 time: only messages sent since."`
	Limit       int    `json:"limit,omitempty" jsonschema:"Default 20, max 100."`
}

type viewArgs struct {
	AgentID string `json:"agentId,omitempty"`
	View    string `json:"view" jsonschema:"unread, awaiting_my_ack, awaiting_their_ack or overdue (past ttl, unanswered)."`
	Limit   int    `json:"limit,omitempty" jsonschema:"Default 50, max 500."`
}

type peekArgs struct {
	AgentID string `json:"agentId,omitempty"`
}

type ackArgs struct {
	AgentID    string   `json:"agentId,omitempty"`
	MessageID  string   `json:"messageId,omitempty"`
	MessageIDs []string `json:"messageIds,omitempty" jsonschema:"Several at once, instead of messageId."`
	Status     string   `json:"status" jsonschema:"processed (done), or received/queued (got it, working on it)."`
	Notes      string   `json:"notes,omitempty"`
}

// ackOut is aacp_ack's answer: broker.AnswerOutput for one messageId;
// for messageIds, the status and the ids not answered ("id: why").
type ackOut struct {
	MessageID      string   `json:"messageId"`
	RequestID      string   `json:"requestId"`
	Status         string   `json:"status"`
	ReplyMessageID string   `json:"replyMessageId,omitempty"`
	Failed         []string `json:"failed,omitempty"`
}

type nackArgs struct {
	AgentID   string `json:"agentId,omitempty"`
	MessageID string `json:"messageId"`
	Reason    string `json:"reason"`
	ErrorCode string `json:"errorCode,omitempty" jsonschema:"UPPER_SNAKE_CASE, e.g. E_TASK_003."`
	CanRetry  bool   `json:"canRetry" jsonschema:"true: the sender retries later; false: it fails for good."`
}

type statusArgs struct {
	AgentID   string `json:"agentId,omitempty" jsonschema:"The sender. Default: this session's agent."`
	MessageID string `json:"messageId,omitempty" jsonschema:"Any transmission's id (or give requestId)."`
	RequestID string `json:"requestId,omitempty"`
}

type deadLettersArgs struct {
	AgentID string `json:"agentId,omitempty"`
	Limit   int    `json:"limit,omitempty" jsonschema:"Default 50, max 500."`
}

type requeueArgs struct {
	AgentID   string `json:"agentId,omitempty"`
	MessageID string `json:"messageId" jsonschema:"A dead letter's messageId."`
}

// receiveTimeout is aacp_receive's deadline: long enough for the longest
// wait the broker allows.
const receiveTimeout = broker.MaxWait + 5*time.Second

// deadlineMargin is kept between the end of aacp_receive's wait and the
// call's deadline, so that the call returns its (possibly empty) result
// rather than TIMEOUT.
const deadlineMargin = 250 * time.Millisecond

// Register registers the aacp_* tools on srv and, when the server's mode
// admits any of them, the inbox resource template (InboxTemplate). A tool
// the mode does not admit (mode READONLY keeps the read-only ones, MINIMAL
// none) is skipped; any other registration error fails Register, naming
// the tool. Registering opens nothing.
func (s *Service) Register(srv *mcp.Server) error {
	added, err := srv.AddTools(
		mcp.Typed(mcp.Tool{
			Name: "aacp_register_agent", Title: "Register a messaging agent",
			Description: "Sets this session's agent id and type so others can message it; call once at the start. " +
				"An id another live session holds is refused (E_ROUTING_003 names the holder). Registering again " +
				"resumes the agent: its unanswered messages are still there.",
			Annotations: writes("Register a messaging agent", false, true),
		}, anyOut(s.registerTool)),
		mcp.Typed(mcp.Tool{
			Name: "aacp_agents", Title: "List messaging agents",
			Description: "Lists registered agents with presence: online, idle, stale (no call for aacp.staleAfterMs) " +
				"or offline (no session), and lastSeen. Agents offline that long are retired.",
			Annotations: readOnly("List messaging agents"),
		}, anyOut(s.agentsTool)),
		mcp.Typed(mcp.Tool{
			Name: "aacp_heartbeat", Title: "Say you are alive",
			Description: "Marks this session's agent as alive, with an optional status others see in aacp_agents. " +
				"Any tool call counts as a heartbeat too; use this during long work without calls.",
			Annotations: writes("Say you are alive", false, true),
		}, s.heartbeatTool),
		mcp.Typed(mcp.Tool{
			Name: "aacp_send", Title: "Send a message to an agent",
			Description: "Sends a message to an agent (receiver.agentId \"*\": to all) and returns once it is on disk: " +
				"{messageId, requestId, deliveries}. It waits in their inbox until taken; follow it with aacp_status. " +
				"Only its ttl fails it (then an ERROR_REPORT comes back).",
			Annotations: writes("Send a message to an agent", false, false),
		}, s.sendTool),
		mcp.Typed(mcp.Tool{
			Name: "aacp_receive", Title: "Take messages",
			Description: "Takes up to max waiting messages (HIGH first). Taking starts the sender's ack timer: answer " +
				"each with aacp_ack or aacp_nack, or it is offered again. To look without taking, use aacp_peek.",
			Annotations: writes("Take messages", false, false),
			Timeout:     receiveTimeout,
		}, anyOut(s.receiveTool)),
		mcp.Typed(mcp.Tool{
			Name: "aacp_reply", Title: "Answer a message",
			Description: "Sends text or a payload back to the sender of a message you received, in its thread.",
			Annotations: writes("Answer a message", false, false),
		}, s.replyTool),
		mcp.Typed(mcp.Tool{
			Name: "aacp_thread", Title: "Read a thread",
			Description: "Returns a thread's messages, oldest first, each with its state (sent, taken, received, processed, nacked).",
			Annotations: readOnly("Read a thread"),
		}, anyOut(s.threadTool)),
		mcp.Typed(mcp.Tool{
			Name: "aacp_search", Title: "Search messages",
			Description: "Full-text search over every agent's message subjects and payloads, best match first, with snippets.",
			Annotations: readOnly("Search messages"),
		}, anyOut(s.searchTool)),
		mcp.Typed(mcp.Tool{
			Name: "aacp_view", Title: "Views of messages",
			Description: "Lists your messages in one view, newest first, from the message index.",
			Annotations: readOnly("Views of messages"),
		}, anyOut(s.viewTool)),
		mcp.Typed(mcp.Tool{
			Name: "aacp_peek", Title: "Look at the inbox",
			Description: "Lists this session's unfinished messages (queued, then taken but unanswered) without taking " +
				"or answering anything: {messages, queued, handedOut}.",
			Annotations: readOnly("Look at the inbox"),
		}, anyOut(s.peekTool)),
		mcp.Typed(mcp.Tool{
			Name: "aacp_ack", Title: "Acknowledge a message",
			Description: "Answers a taken message: processed when done (the sender's request completes), received " +
				"or queued to confirm you have it. A message past its ttl cannot be answered (E_PROTOCOL_004).",
			Annotations: writes("Acknowledge a message", false, false),
		}, s.ackTool),
		mcp.Typed(mcp.Tool{
			Name: "aacp_nack", Title: "Reject a message",
			Description: "Rejects a taken message with a reason; canRetry true asks the sender to send it again later, " +
				"false fails it for good.",
			Annotations: writes("Reject a message", true, false),
		}, s.nackTool),
		mcp.Typed(mcp.Tool{
			Name: "aacp_status", Title: "Follow a sent message",
			Description: "Reports a request you sent: state (IN_TRANSIT, PENDING, DELIVERED, PROCESSED, FAILED), " +
				"outcome (COMPLETED, FAILED, UNKNOWN), each delivery (ackDeadline once taken) and the history.",
			Annotations: readOnly("Follow a sent message"),
		}, anyOut(s.statusTool)),
		mcp.Typed(mcp.Tool{
			Name: "aacp_dead_letters", Title: "List failed sends",
			Description: "Lists your sends that failed for good (expired, or rejected), oldest first.",
			Annotations: readOnly("List failed sends"),
		}, anyOut(s.deadLettersTool)),
		mcp.Typed(mcp.Tool{
			Name: "aacp_requeue", Title: "Send a failed message again",
			Description: "Sends a dead letter again (same requestId, fresh retries) unless it has expired.",
			Annotations: writes("Send a failed message again", false, false),
		}, anyOut(s.requeueTool)),
	)
	if err != nil {
		return fmt.Errorf("messaging: %w", err)
	}
	admitted := len(added) > 0
	if !admitted {
		return nil // no aacp tool here (mode MINIMAL): no inbox resource either
	}
	if err := s.addInboxResource(srv); err != nil {
		return fmt.Errorf("messaging: the inbox resource: %w", err)
	}
	return nil
}

// anyOut drops a handler's output schema from the listing: these results
// (envelopes, agent lists) would cost a model more to read in every
// tools/list than the results themselves, which describe themselves; the
// aacp tools must fit 12 KB of tools/list.
func anyOut[In, Out any](h func(context.Context, *mcp.CallToolRequest, In) (Out, error)) func(context.Context, *mcp.CallToolRequest, In) (any, error) {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (any, error) {
		out, err := h(ctx, req, in)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false)}
}

func writes(title string, destructive, idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: mcp.Bool(false), DestructiveHint: mcp.Bool(destructive),
		IdempotentHint: mcp.Bool(idempotent), OpenWorldHint: mcp.Bool(false)}
}
