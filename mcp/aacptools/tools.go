package aacptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/mcp"
)

// The tools' inputs: the broker's inputs plus agentId, the agent the call
// acts for. Their schemas are derived from these types; values are
// checked by the broker, so that a bad value gets the protocol's error
// code (E_VALIDATION_*, E_ROUTING_*, E_PROTOCOL_*) rather than a schema
// failure.

type registerArgs struct {
	AgentID           string   `json:"agentId,omitempty" jsonschema:"The agent to register and host in this process. Default: this server's own agent (aacp.agentId)."`
	Type              string   `json:"type" jsonschema:"Manager, Implementation or AdHoc."`
	SupportedVersions []string `json:"supportedVersions,omitempty" jsonschema:"Protocol versions the agent speaks; default [\"1.0.0\"]."`
	Capabilities      []string `json:"capabilities,omitempty" jsonschema:"Free-form capabilities (1 to 64 bytes each), such as the message types the agent handles."`
}

type agentsArgs struct {
	AgentID string `json:"agentId,omitempty" jsonschema:"When set, list only this agent."`
	Type    string `json:"type,omitempty" jsonschema:"When set, list only agents of this type: Manager, Implementation or AdHoc."`
}

type receiverArg struct {
	AgentID string `json:"agentId" jsonschema:"The receiving agent's id, or \"*\" to broadcast to every registered agent (of type, when set) but the sender."`
	Type    string `json:"type,omitempty" jsonschema:"Manager, Implementation, AdHoc or \"*\"; with a named agent it must match its registration."`
}

type sendArgs struct {
	AgentID       string          `json:"agentId,omitempty" jsonschema:"The sending agent. Default: this server's own agent (aacp.agentId)."`
	Receiver      receiverArg     `json:"receiver" jsonschema:"Who gets the message."`
	MessageType   string          `json:"messageType" jsonschema:"TASK_ASSIGNMENT, TASK_UPDATE, STATE_SYNC, ERROR_REPORT, HANDOFF_REQUEST, or CUSTOM_ followed by upper-case letters, digits and '_'."`
	Payload       json.RawMessage `json:"payload" jsonschema:"The message body, a JSON object; core types have required fields (TASK_ASSIGNMENT: taskId, taskRef, taskDescription, memoryLogPath, executionType; TASK_UPDATE: taskId, status, progress; ERROR_REPORT: errorType, errorMessage, severity; HANDOFF_REQUEST: taskId, reason, sourceAgent, targetAgent, handoffContext; STATE_SYNC: entityType, entityId, operation, state, syncTimestamp)."`
	Priority      string          `json:"priority,omitempty" jsonschema:"HIGH, NORMAL (default) or LOW."`
	CorrelationID string          `json:"correlationId,omitempty" jsonschema:"Ties related messages together (a task's thread, say)."`
	RequestID     string          `json:"requestId,omitempty" jsonschema:"Makes the send idempotent: sending a request id again returns the first send's deliveries and sends nothing."`
	TTLSeconds    int64           `json:"ttlSeconds,omitempty" jsonschema:"Time to live in seconds; default aacp.defaultTtlMs."`
	Tags          []string        `json:"tags,omitempty" jsonschema:"Up to 32 tags of 1 to 64 bytes."`
}

type receiveArgs struct {
	AgentID      string   `json:"agentId,omitempty" jsonschema:"The receiving agent. Default: this server's own agent (aacp.agentId)."`
	WaitMs       int64    `json:"waitMs,omitempty" jsonschema:"How long to wait for a first message when none is waiting, in milliseconds: 0 (default) returns at once, at most 60000; cut short to fit the call's deadline."`
	Max          int      `json:"max,omitempty" jsonschema:"Most messages to return: default 10, at most 100."`
	MessageTypes []string `json:"messageTypes,omitempty" jsonschema:"When set, return only messages of these types; the others stay queued."`
}

type ackArgs struct {
	AgentID   string `json:"agentId,omitempty" jsonschema:"The agent this call acts for; it must be registered by this process (aacp_register_agent). Default: this server's own agent (aacp.agentId)."`
	MessageID string `json:"messageId" jsonschema:"The id of a message aacp_receive returned."`
	Status    string `json:"status" jsonschema:"received or queued (receipt confirmed; the message is not handed out again), or processed (done: the sender's request completes)."`
	Notes     string `json:"notes,omitempty" jsonschema:"Free text for the sender."`
}

type nackArgs struct {
	AgentID   string `json:"agentId,omitempty" jsonschema:"The agent this call acts for; it must be registered by this process (aacp_register_agent). Default: this server's own agent (aacp.agentId)."`
	MessageID string `json:"messageId" jsonschema:"The id of a message aacp_receive returned."`
	Reason    string `json:"reason" jsonschema:"Why the message is rejected."`
	ErrorCode string `json:"errorCode,omitempty" jsonschema:"An UPPER_SNAKE_CASE code, such as E_TASK_003."`
	CanRetry  bool   `json:"canRetry" jsonschema:"true asks the sender to send it again later; false fails the delivery for good (dead letter and ERROR_REPORT to the sender)."`
}

type statusArgs struct {
	AgentID   string `json:"agentId,omitempty" jsonschema:"The agent that sent the message. Default: this server's own agent (aacp.agentId)."`
	MessageID string `json:"messageId,omitempty" jsonschema:"The messageId of any transmission of the request (give this or requestId)."`
	RequestID string `json:"requestId,omitempty" jsonschema:"The request's id (give this or messageId)."`
}

type deadLettersArgs struct {
	AgentID string `json:"agentId,omitempty" jsonschema:"The agent whose failed sends to list. Default: this server's own agent (aacp.agentId)."`
	Limit   int    `json:"limit,omitempty" jsonschema:"Most entries to return: default 50, at most 500."`
}

type requeueArgs struct {
	AgentID   string `json:"agentId,omitempty" jsonschema:"The agent that sent the message. Default: this server's own agent (aacp.agentId)."`
	MessageID string `json:"messageId" jsonschema:"The messageId of a dead letter (see aacp_dead_letters)."`
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
	admitted := false
	for _, add := range []func(*mcp.Server) error{
		func(srv *mcp.Server) error {
			return mcp.AddTypedTool(srv, mcp.Tool{
				Name: "aacp_register_agent", Title: "Register a messaging agent",
				Description: "Registers an agent with the shared agent registry and hosts it in this process: its messages " +
					"are received here and its sends resume here. Registering again updates type and capabilities. " +
					"The server's own agent (aacp.agentId) is registered with aacp.agentType by the first aacp_* call " +
					"anyway; call this to choose its type or to host another agent. Returns {agentId, type, protocolVersion, " +
					"pendingOutbound, queuedInbound}. Errors: E_ROUTING_002 unusable agent id; E_VALIDATION_003 unknown type; " +
					"E_PROTOCOL_001 no protocol version in common; E_ROUTING_003 another process hosts the agent, or the " +
					"journal cannot be written.",
				Annotations: writes("Register a messaging agent", false, true),
			}, s.registerTool)
		},
		func(srv *mcp.Server) error {
			return mcp.AddTypedTool(srv, mcp.Tool{
				Name: "aacp_agents", Title: "List messaging agents",
				Description: "Lists the agents in the shared registry, sorted by id: {agents: [{agentId, type, protocolVersion, " +
					"capabilities, registeredAt, online (some process hosts it now), local (this process does)}]}. " +
					"Errors: E_VALIDATION_003 unknown type; E_ROUTING_002 unusable agentId; E_ROUTING_003 the journal cannot be read.",
				Annotations: readOnly("List messaging agents"),
			}, s.agentsTool)
		},
		func(srv *mcp.Server) error {
			return mcp.AddTypedTool(srv, mcp.Tool{
				Name: "aacp_send", Title: "Send a message to an agent",
				Description: "Sends a message to a registered agent (or broadcasts it with receiver.agentId \"*\") and returns " +
					"once it is durable on disk: {messageId, requestId, deliveries: [{agentId, messageId, seq, state}], duplicate?}. " +
					"Unanswered messages are retried with backoff; one that fails for good goes to the dead-letter queue and " +
					"comes back to the sender as an ERROR_REPORT from \"_broker\". Follow it with aacp_status. Errors: " +
					"E_VALIDATION_001..005 (missing field, wrong type, unknown messageType or priority, payload or other rule, " +
					"message over 1 MiB); E_PROTOCOL_003 bad requestId or correlationId; E_ROUTING_001 no such registered " +
					"agent (nothing sent); E_ROUTING_002 unusable receiver or agent id; E_ROUTING_003 the journal cannot be " +
					"written (retry later); E_ROUTING_004 a broadcast reached only some agents; RESOURCE_EXHAUSTED arguments " +
					"over tools.maxPayloadBytes.",
				Annotations: writes("Send a message to an agent", false, false),
			}, s.sendTool)
		},
		func(srv *mcp.Server) error {
			return mcp.AddTypedTool(srv, mcp.Tool{
				Name: "aacp_receive", Title: "Receive messages",
				Description: "Returns up to max messages waiting for the agent, HIGH before NORMAL before LOW and in order " +
					"within each sender: {messages: [envelope + redelivered?]}. With waitMs it waits (long poll) for a first " +
					"message. A message returned is not returned again unless its sender retries it before you answer; " +
					"answer each with aacp_ack or aacp_nack. Errors: E_VALIDATION_003 unknown message type in messageTypes; " +
					"E_VALIDATION_004 negative waitMs or max; E_ROUTING_001 agentId not hosted by this process; " +
					"E_ROUTING_002 unusable agentId; E_ROUTING_003 the journal cannot be read.",
				Annotations: readOnly("Receive messages"),
				Timeout:     receiveTimeout,
			}, s.receiveTool)
		},
		func(srv *mcp.Server) error {
			return mcp.AddTypedTool(srv, mcp.Tool{
				Name: "aacp_ack", Title: "Acknowledge a message",
				Description: "Acknowledges a received message: status received or queued confirms receipt, processed says it " +
					"is done (the sender's request completes). Recorded durably before the ACK is sent, so a retry of the " +
					"same request is answered, never handed out again. Returns {messageId, requestId, status, replyMessageId}. " +
					"Errors: NOT_FOUND unknown id, or already processed or NACKed; E_VALIDATION_001/003 missing or unknown " +
					"status; E_ROUTING_001/002 agentId; E_ROUTING_003 the journal cannot be written.",
				Annotations: writes("Acknowledge a message", false, false),
			}, s.ackTool)
		},
		func(srv *mcp.Server) error {
			return mcp.AddTypedTool(srv, mcp.Tool{
				Name: "aacp_nack", Title: "Reject a message",
				Description: "Rejects a received message with a reason: canRetry true asks the sender to retry later, false " +
					"fails its delivery for good (dead letter + ERROR_REPORT to the sender). Returns {messageId, requestId, " +
					"status: \"nacked\", replyMessageId}. Errors: NOT_FOUND unknown or already answered id; E_VALIDATION_001 " +
					"missing reason; E_VALIDATION_004 errorCode not UPPER_SNAKE_CASE; E_ROUTING_001/002 agentId; " +
					"E_ROUTING_003 the journal cannot be written.",
				Annotations: writes("Reject a message", true, false),
			}, s.nackTool)
		},
		func(srv *mcp.Server) error {
			return mcp.AddTypedTool(srv, mcp.Tool{
				Name: "aacp_status", Title: "Follow a sent message",
				Description: "Reports a request the agent sent, by requestId or by the messageId of any of its transmissions: " +
					"{requestId, messageType, state (PENDING, IN_TRANSIT, DELIVERED, PROCESSED, FAILED), outcome (COMPLETED, " +
					"FAILED, UNKNOWN), deliveries: [{agentId, state, retries, ackStatus, nextRetryAt, lastError}], history}. " +
					"Errors: E_VALIDATION_001 neither id given; NOT_FOUND unknown (or expired) id; E_PROTOCOL_003 the two " +
					"ids do not belong together; E_ROUTING_001/002 agentId.",
				Annotations: readOnly("Follow a sent message"),
			}, s.statusTool)
		},
		func(srv *mcp.Server) error {
			return mcp.AddTypedTool(srv, mcp.Tool{
				Name: "aacp_dead_letters", Title: "List failed sends",
				Description: "Lists the agent's sends that failed for good and were not requeued, oldest first: {deadLetters: " +
					"[{messageId, requestId, receiver, messageType, code, reason, retryCount, failedAt, envelope}], total}. " +
					"Errors: E_VALIDATION_004 negative limit; E_ROUTING_001/002 agentId; E_ROUTING_003 the journal cannot be read.",
				Annotations: readOnly("List failed sends"),
			}, s.deadLettersTool)
		},
		func(srv *mcp.Server) error {
			return mcp.AddTypedTool(srv, mcp.Tool{
				Name: "aacp_requeue", Title: "Send a failed message again",
				Description: "Sends a dead letter again: a new transmission (new messageId, same requestId) with a fresh retry " +
					"budget. Returns {requestId, messageId, seq, state}. Errors: E_VALIDATION_001 missing messageId; " +
					"NOT_FOUND not in the agent's dead-letter queue (or its request expired); E_PROTOCOL_004 the message " +
					"expired (send it anew); E_ROUTING_003 the channel cannot be written; E_ROUTING_001/002 agentId.",
				Annotations: writes("Send a failed message again", false, false),
			}, s.requeueTool)
		},
	} {
		err := add(srv)
		if err != nil && !errors.Is(err, mcp.ErrNotAdmitted) {
			return fmt.Errorf("aacptools: %w", err)
		}
		admitted = admitted || err == nil
	}
	if !admitted {
		return nil // no aacp tool here (mode MINIMAL): no inbox resource either
	}
	if err := s.addInboxResource(srv); err != nil {
		return fmt.Errorf("aacptools: the inbox resource: %w", err)
	}
	return nil
}

func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false)}
}

func writes(title string, destructive, idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: mcp.Bool(false), DestructiveHint: mcp.Bool(destructive),
		IdempotentHint: mcp.Bool(idempotent), OpenWorldHint: mcp.Bool(false)}
}

func (s *Service) registerTool(ctx context.Context, _ *mcp.CallToolRequest, in registerArgs) (broker.RegisterOutput, error) {
	b, err := s.broker()
	if err != nil {
		return broker.RegisterOutput{}, err
	}
	id := in.AgentID
	if id == "" {
		id = s.agentID
	}
	return s.register(ctx, b, id, broker.RegisterInput{
		Type: envelope.AgentType(in.Type), SupportedVersions: in.SupportedVersions, Capabilities: in.Capabilities,
	})
}

func (s *Service) agentsTool(ctx context.Context, _ *mcp.CallToolRequest, in agentsArgs) (broker.AgentsOutput, error) {
	if in.AgentID != "" {
		if err := envelope.CheckAgentID(in.AgentID); err != nil {
			return broker.AgentsOutput{}, err.WithDetail("path", "/agentId")
		}
	}
	b, err := s.broker()
	if err != nil {
		return broker.AgentsOutput{}, err
	}
	out, err := b.Agents(ctx, broker.AgentsInput{Type: envelope.AgentType(in.Type)})
	if err != nil || in.AgentID == "" {
		return out, err
	}
	kept := out.Agents[:0]
	for _, a := range out.Agents {
		if a.AgentID == in.AgentID {
			kept = append(kept, a)
		}
	}
	out.Agents = kept
	return out, nil
}

func (s *Service) sendTool(ctx context.Context, _ *mcp.CallToolRequest, in sendArgs) (broker.SendOutput, error) {
	b, id, err := s.act(ctx, in.AgentID)
	if err != nil {
		return broker.SendOutput{}, err
	}
	return b.Send(ctx, id, broker.SendInput{
		Receiver:    broker.Receiver{AgentID: in.Receiver.AgentID, Type: envelope.AgentType(in.Receiver.Type)},
		MessageType: in.MessageType, Payload: in.Payload, Priority: envelope.Priority(in.Priority),
		CorrelationID: in.CorrelationID, RequestID: in.RequestID, TTLSeconds: in.TTLSeconds, Tags: in.Tags,
	})
}

func (s *Service) receiveTool(ctx context.Context, _ *mcp.CallToolRequest, in receiveArgs) (broker.ReceiveOutput, error) {
	b, id, err := s.act(ctx, in.AgentID)
	if err != nil {
		return broker.ReceiveOutput{}, err
	}
	if dl, ok := ctx.Deadline(); ok && in.WaitMs > 0 {
		room := time.Until(dl) - deadlineMargin
		in.WaitMs = max(0, min(in.WaitMs, room.Milliseconds()))
	}
	var out broker.ReceiveOutput
	// A long poll holds no execution slot while it waits (mcp.WaitWithoutSlot).
	err = mcp.WaitWithoutSlot(ctx, func(ctx context.Context) (err error) {
		out, err = b.Receive(ctx, id, broker.ReceiveInput{WaitMs: in.WaitMs, Max: in.Max, MessageTypes: in.MessageTypes})
		return err
	})
	return out, err
}

func (s *Service) ackTool(ctx context.Context, _ *mcp.CallToolRequest, in ackArgs) (broker.AnswerOutput, error) {
	b, id, err := s.act(ctx, in.AgentID)
	if err != nil {
		return broker.AnswerOutput{}, err
	}
	return b.Ack(ctx, id, broker.AckInput{MessageID: in.MessageID, Status: in.Status, Notes: in.Notes})
}

func (s *Service) nackTool(ctx context.Context, _ *mcp.CallToolRequest, in nackArgs) (broker.AnswerOutput, error) {
	b, id, err := s.act(ctx, in.AgentID)
	if err != nil {
		return broker.AnswerOutput{}, err
	}
	return b.Nack(ctx, id, broker.NackInput{MessageID: in.MessageID, Reason: in.Reason, ErrorCode: in.ErrorCode, CanRetry: in.CanRetry})
}

func (s *Service) statusTool(ctx context.Context, _ *mcp.CallToolRequest, in statusArgs) (broker.StatusOutput, error) {
	b, id, err := s.act(ctx, in.AgentID)
	if err != nil {
		return broker.StatusOutput{}, err
	}
	return b.Status(ctx, id, broker.StatusInput{MessageID: in.MessageID, RequestID: in.RequestID})
}

func (s *Service) deadLettersTool(ctx context.Context, _ *mcp.CallToolRequest, in deadLettersArgs) (broker.DeadLettersOutput, error) {
	b, id, err := s.act(ctx, in.AgentID)
	if err != nil {
		return broker.DeadLettersOutput{}, err
	}
	return b.DeadLetters(ctx, id, broker.DeadLettersInput{Limit: in.Limit})
}

func (s *Service) requeueTool(ctx context.Context, _ *mcp.CallToolRequest, in requeueArgs) (broker.RequeueOutput, error) {
	b, id, err := s.act(ctx, in.AgentID)
	if err != nil {
		return broker.RequeueOutput{}, err
	}
	return b.Requeue(ctx, id, broker.RequeueInput{MessageID: in.MessageID})
}
