package messaging

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/mcp"
)

// The tool handlers: each resolves the agent it acts for (act), then
// calls the broker.

func (s *Service) registerTool(ctx context.Context, _ *mcp.CallToolRequest, in registerArgs) (broker.RegisterOutput, error) {
	b, err := s.broker()
	if err != nil {
		return broker.RegisterOutput{}, err
	}
	sess := mcp.SessionOf(ctx)
	id := in.AgentID
	if id == "" {
		id = cmp.Or(s.identity(sess), s.agentID)
	}
	return s.register(ctx, b, sess, id, broker.RegisterInput{
		Type: envelope.AgentType(in.Type), SupportedVersions: in.SupportedVersions, Capabilities: in.Capabilities,
	}, true)
}

// AgentsOutput is aacp_agents' result.
type AgentsOutput struct {
	Agents []AgentPresence `json:"agents"`
}

func (s *Service) agentsTool(ctx context.Context, _ *mcp.CallToolRequest, in agentsArgs) (AgentsOutput, error) {
	if in.AgentID != "" {
		if err := envelope.CheckAgentID(in.AgentID); err != nil {
			return AgentsOutput{}, err.WithDetail("path", "/agentId")
		}
	}
	typ := envelope.AgentType(in.Type)
	if typ != "" && typ != envelope.AnyType && !typ.Valid() {
		return AgentsOutput{}, envelope.Errorf(envelope.CodeInvalidEnum, "type %q is unknown; want Manager, Implementation or AdHoc", in.Type).WithDetail("path", "/type")
	}
	b, err := s.broker()
	if err != nil {
		return AgentsOutput{}, err
	}
	all, err := s.agents(ctx, b)
	if err != nil {
		return AgentsOutput{}, err
	}
	out := AgentsOutput{Agents: []AgentPresence{}}
	for _, a := range all {
		if (in.AgentID == "" || a.AgentID == in.AgentID) && (typ == "" || typ == envelope.AnyType || a.Type == typ) {
			out.Agents = append(out.Agents, a)
		}
	}
	return out, nil
}

// HeartbeatOutput is aacp_heartbeat's result.
type HeartbeatOutput struct {
	AgentID  string    `json:"agentId"`
	Presence string    `json:"presence"`
	LastSeen time.Time `json:"lastSeen"`
}

func (s *Service) heartbeatTool(ctx context.Context, _ *mcp.CallToolRequest, in heartbeatArgs) (HeartbeatOutput, error) {
	if len(in.Status) > 200 || len(in.Note) > 2000 {
		return HeartbeatOutput{}, envelope.Errorf(envelope.CodeSchema, "status is %d bytes and note %d; want at most 200 and 2000", len(in.Status), len(in.Note))
	}
	_, id, err := s.act(ctx, "")
	if err != nil {
		return HeartbeatOutput{}, err
	}
	if err := s.presence.beat(id, in.Status, in.Note, true); err != nil {
		return HeartbeatOutput{}, envelope.Errorf(envelope.CodeChannelUnavailable, "%v; make aacp.dataDir writable", err)
	}
	state, seen, err := s.Presence(ctx, id)
	if err != nil {
		return HeartbeatOutput{}, err
	}
	return HeartbeatOutput{AgentID: id, Presence: state, LastSeen: seen}, nil
}

func (s *Service) sendTool(ctx context.Context, _ *mcp.CallToolRequest, in sendArgs) (broker.SendOutput, error) {
	b, id, err := s.act(ctx, in.AgentID)
	if err != nil {
		return broker.SendOutput{}, err
	}
	corr, err := threadOf(in.ThreadID, in.CorrelationID)
	if err != nil {
		return broker.SendOutput{}, err
	}
	obj, err := withSubject(in.Payload, in.Subject)
	if err != nil {
		return broker.SendOutput{}, err
	}
	var payload json.RawMessage
	if obj != nil {
		if payload, err = json.Marshal(obj); err != nil {
			return broker.SendOutput{}, envelope.Errorf(envelope.CodeInvalidType, "payload cannot be encoded: %v; send a JSON object", err).WithDetail("path", "/payload")
		}
	}
	return b.Send(ctx, id, broker.SendInput{
		Receiver:    broker.Receiver{AgentID: in.Receiver.AgentID, Type: envelope.AgentType(in.Receiver.Type)},
		MessageType: in.MessageType, Payload: payload, Priority: envelope.Priority(in.Priority),
		CorrelationID: corr, RequestID: in.RequestID, TTLSeconds: in.TTLSeconds, Tags: in.Tags,
	})
}

func (s *Service) peekTool(ctx context.Context, _ *mcp.CallToolRequest, in peekArgs) (broker.InboxOutput, error) {
	b, id, err := s.act(ctx, in.AgentID)
	if err != nil {
		return broker.InboxOutput{}, err
	}
	return b.Inbox(ctx, id)
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

// ackTool answers one message (messageId), or several at once
// (messageIds: broker.AckAll, one ledger write and one reply write for
// them all). With messageIds, an id that cannot be answered is listed
// in failed, with why; the call fails only when none was answered.
func (s *Service) ackTool(ctx context.Context, _ *mcp.CallToolRequest, in ackArgs) (ackOut, error) {
	b, id, err := s.act(ctx, in.AgentID)
	if err != nil {
		return ackOut{}, err
	}
	if in.MessageIDs == nil {
		out, err := b.Ack(ctx, id, broker.AckInput{MessageID: in.MessageID, Status: in.Status, Notes: in.Notes})
		return ackOut{MessageID: out.MessageID, RequestID: out.RequestID, Status: out.Status, ReplyMessageID: out.ReplyMessageID}, err
	}
	if in.MessageID != "" {
		return ackOut{}, envelope.Errorf(envelope.CodeSchema, "both messageId and messageIds are given; pass one id as messageId, or several as messageIds").WithDetail("path", "/messageIds")
	}
	res, err := b.AckAll(ctx, id, broker.AckAllInput{MessageIDs: in.MessageIDs, Status: in.Status, Notes: in.Notes})
	if err != nil {
		return ackOut{}, err
	}
	out := ackOut{Status: in.Status}
	var firstErr error
	answered := 0
	for i, r := range res {
		if r.RequestID != "" {
			answered++ // recorded (even when only its reply failed)
		}
		if r.Err != nil {
			out.Failed = append(out.Failed, in.MessageIDs[i]+": "+r.Err.Error())
			if firstErr == nil {
				firstErr = r.Err
			}
		}
	}
	if answered == 0 {
		return ackOut{}, fmt.Errorf("none of the %d messageIds was answered; the first: %w", len(in.MessageIDs), firstErr)
	}
	return out, nil
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
