package messaging

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
	"github.com/mcprt/mcprt/store"
)

// Threads, subjects and search. A thread is the protocol's correlationId
// (threadId is its name in the tools; a message sent without one starts a
// thread named by its requestId); a subject is the payload's "subject"
// field. Both are read back from the message index.

// maxSubject bounds a subject, in bytes.
const maxSubject = 200

// withSubject returns payload with subject set (nil payload: a new
// object), refusing a payload whose own subject differs.
func withSubject(payload map[string]json.RawMessage, subject string) (map[string]json.RawMessage, error) {
	if subject == "" {
		return payload, nil
	}
	if len(subject) > maxSubject {
		return nil, envelope.Errorf(envelope.CodeSchema, "subject is %d bytes; want at most %d", len(subject), maxSubject).WithDetail("path", "/subject")
	}
	enc, _ := json.Marshal(subject) // a string always encodes
	if old, ok := payload["subject"]; ok && string(old) != string(enc) {
		return nil, envelope.Errorf(envelope.CodeSchema, "subject %q and payload.subject %s differ; give one of them", subject, old).WithDetail("path", "/subject")
	}
	out := make(map[string]json.RawMessage, len(payload)+1)
	for k, v := range payload {
		out[k] = v
	}
	out["subject"] = enc
	return out, nil
}

// threadOf returns the correlation id for threadID and correlationID,
// refusing two that differ.
func threadOf(threadID, correlationID string) (string, error) {
	if threadID != "" && correlationID != "" && threadID != correlationID {
		return "", envelope.Errorf(envelope.CodeInvalidCorrelationID, "threadId %q and correlationId %q differ; a thread is its correlation id: give one of them", threadID, correlationID).WithDetail("path", "/threadId")
	}
	if threadID != "" {
		return threadID, nil
	}
	return correlationID, nil
}

func (s *Service) replyTool(ctx context.Context, _ *mcp.CallToolRequest, in replyArgs) (broker.SendOutput, error) {
	if in.MessageID == "" {
		return broker.SendOutput{}, envelope.Errorf(envelope.CodeMissingField, "messageId is missing; pass the id of the message you answer").WithDetail("path", "/messageId")
	}
	if (in.Text == "") == (in.Payload == nil) {
		return broker.SendOutput{}, envelope.Errorf(envelope.CodeMissingField, "give the answer as text or as payload (one of them)").WithDetail("path", "/text")
	}
	b, id, err := s.act(ctx, in.AgentID)
	if err != nil {
		return broker.SendOutput{}, err
	}
	x, err := s.freshIndex(ctx)
	if err != nil {
		return broker.SendOutput{}, err
	}
	orig, ok, err := x.Message(ctx, in.MessageID)
	if err != nil {
		return broker.SendOutput{}, err
	}
	if !ok || orig.Receiver != id {
		return broker.SendOutput{}, core.Errorf(core.CodeNotFound, "agent %q received no message %q; answer the id of a message aacp_receive or aacp_peek showed you", id, in.MessageID).WithDetail("path", "/messageId")
	}
	if orig.Sender == envelope.SystemAgentID {
		return broker.SendOutput{}, envelope.Errorf(envelope.CodeInvalidReceiver, "message %q comes from the messaging system itself (%s); it takes no reply", in.MessageID, envelope.SystemAgentID)
	}
	payload := in.Payload
	if in.Text != "" {
		enc, _ := json.Marshal(in.Text) // a string always encodes
		payload = map[string]json.RawMessage{"text": enc}
	}
	subject := in.Subject
	if subject == "" && orig.Subject != "" && payload["subject"] == nil {
		subject = "Re: " + strings.TrimPrefix(orig.Subject, "Re: ")
		subject = subject[:min(len(subject), maxSubject)]
	}
	if payload, err = withSubject(payload, subject); err != nil {
		return broker.SendOutput{}, err
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return broker.SendOutput{}, envelope.Errorf(envelope.CodeInvalidType, "payload cannot be encoded: %v; send a JSON object", err).WithDetail("path", "/payload")
	}
	typ := in.MessageType
	if typ == "" {
		typ = "CUSTOM_REPLY"
	}
	return b.Send(ctx, id, broker.SendInput{Receiver: broker.Receiver{AgentID: orig.Sender}, MessageType: typ,
		Payload: raw, CorrelationID: orig.ThreadID})
}

// ThreadOutput is aacp_thread's result.
type ThreadOutput struct {
	ThreadID string                 `json:"threadId"`
	Messages []store.IndexedMessage `json:"messages"`
}

func (s *Service) threadTool(ctx context.Context, _ *mcp.CallToolRequest, in threadArgs) (ThreadOutput, error) {
	if in.ThreadID == "" {
		return ThreadOutput{}, envelope.Errorf(envelope.CodeMissingField, "threadId is missing; pass a message's threadId (its correlationId)").WithDetail("path", "/threadId")
	}
	limit, err := bounded("limit", in.Limit, 100, 1000)
	if err != nil {
		return ThreadOutput{}, err
	}
	x, err := s.freshIndex(ctx)
	if err != nil {
		return ThreadOutput{}, err
	}
	msgs, err := x.Thread(ctx, in.ThreadID, limit)
	return ThreadOutput{ThreadID: in.ThreadID, Messages: msgs}, err
}

// SearchOutput is aacp_search's result.
type SearchOutput struct {
	Hits []store.MessageHit `json:"hits"`
}

func (s *Service) searchTool(ctx context.Context, _ *mcp.CallToolRequest, in searchArgs) (SearchOutput, error) {
	limit, err := bounded("limit", in.Limit, 20, 100)
	if err != nil {
		return SearchOutput{}, err
	}
	q := store.MessageQuery{Query: in.Query, AgentID: in.AgentID, ThreadID: in.ThreadID, MessageType: in.MessageType, Limit: limit}
	if in.Since != "" {
		if q.Since, err = time.Parse(time.RFC3339Nano, in.Since); err != nil {
			return SearchOutput{}, envelope.Errorf(envelope.CodeSchema, "since %q is not an RFC 3339 time; want e.g. 2026-01-02T15:04:05Z", in.Since).WithDetail("path", "/since")
		}
	}
	x, err := s.freshIndex(ctx)
	if err != nil {
		return SearchOutput{}, err
	}
	hits, err := x.Search(ctx, q)
	return SearchOutput{Hits: hits}, err
}

// bounded checks a limit: 0 means def; otherwise 1 to max.
func bounded(name string, v, def, max int) (int, error) {
	switch {
	case v == 0:
		return def, nil
	case v < 0 || v > max:
		return 0, envelope.Errorf(envelope.CodeSchema, "%s is %d; want 1 to %d (0 means %d)", name, v, max, def).WithDetail("path", "/"+name)
	}
	return v, nil
}

// freshIndex returns the message index holding everything the journal
// holds now (see msgIndex.fresh).
func (s *Service) freshIndex(ctx context.Context) (*store.MessageIndex, error) {
	b, err := s.broker()
	if err != nil {
		return nil, err
	}
	return s.index.fresh(ctx, func(sender, receiver string) (uint64, error) {
		return b.Store().LastSequence(ctx, sender, receiver)
	})
}

// ViewOutput is aacp_view's result.
type ViewOutput struct {
	AgentID  string                 `json:"agentId"`
	View     string                 `json:"view"`
	Messages []store.IndexedMessage `json:"messages"`
}

func (s *Service) viewTool(ctx context.Context, _ *mcp.CallToolRequest, in viewArgs) (ViewOutput, error) {
	limit, err := bounded("limit", in.Limit, 50, 500)
	if err != nil {
		return ViewOutput{}, err
	}
	_, id, err := s.act(ctx, in.AgentID)
	if err != nil {
		return ViewOutput{}, err
	}
	x, err := s.freshIndex(ctx)
	if err != nil {
		return ViewOutput{}, err
	}
	msgs, err := x.InboxView(ctx, id, in.View, s.now(), limit)
	if err != nil {
		return ViewOutput{}, err
	}
	return ViewOutput{AgentID: id, View: in.View, Messages: msgs}, nil
}

// SearchMessages runs q over the message index once it holds everything
// the journal holds, as aacp_search does; q.Limit must be positive.
// The overseer's console searches through it.
func (s *Service) SearchMessages(ctx context.Context, q store.MessageQuery) ([]store.MessageHit, error) {
	if q.Limit <= 0 {
		return nil, core.Errorf(core.CodeInvalidArgument, "the message search limit is %d; give a positive limit such as 20", q.Limit)
	}
	x, err := s.freshIndex(ctx)
	if err != nil {
		return nil, err
	}
	return x.Search(ctx, q)
}
