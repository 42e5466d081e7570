package session

import (
	"context"
	"encoding/json"
	"github.com/mcprt/mcprt/domain/internal/check"
	"time"

	"github.com/mcprt/mcprt/domain/toolspec"
)

// Tools holds the typed handlers of the session_* MCP tools, each a
// func(ctx, In) (Out, error) ready for mcp.AddTypedTool. Errors are
// *core.Error values with the codes of this package.
type Tools struct{ svc *Service }

// NewTools returns the tool handlers over svc.
func NewTools(svc *Service) *Tools { return &Tools{svc: svc} }

// ToolSpecs returns the names, descriptions and annotations of the
// session tools.
func ToolSpecs() []toolspec.Spec {
	return []toolspec.Spec{
		{Name: "session_create", Title: "Create a session", Description: "Start a collaboration session; the initiator is its first participant."},
		{Name: "session_status", Title: "Session status", Description: "Show a session: status, participants, applied policies.",
			ReadOnly: true, Idempotent: true},
		{Name: "session_list", Title: "List sessions", Description: "List sessions, newest first, by status and initiator.",
			ReadOnly: true, Idempotent: true},
		{Name: "session_complete", Title: "Complete a session", Description: "End an active session as completed.",
			Destructive: true, Idempotent: true},
		{Name: "session_join", Title: "Join a session", Description: "Add an agent to an active session with a role (again: no change).",
			Idempotent: true},
		{Name: "session_leave", Title: "Leave a session", Description: "Remove an agent from an active session (left=false when it was not in it).",
			Destructive: true, Idempotent: true},
		{Name: "session_fail", Title: "Fail a session", Description: "End an active session as failed, with a reason.",
			Destructive: true, Idempotent: true},
	}
}

func stamp(t time.Time) string { return check.Stamp(t) }

// CreateInput is the input of session_create.
type CreateInput struct {
	Initiator string          `json:"initiator" jsonschema:"Your agent id"`
	Task      string          `json:"task"`
	Workspace string          `json:"workspace,omitempty"`
	Metadata  toolspec.Object `json:"metadata,omitempty" jsonschema:"At most 16 KiB"`
}

// CreateOutput is the result of session_create.
type CreateOutput struct {
	SessionID string `json:"sessionId" jsonschema:"The new session's id"`
	Initiator string `json:"initiator" jsonschema:"The initiating agent"`
	Task      string `json:"task" jsonschema:"The task"`
	Status    Status `json:"status" jsonschema:"Always active"`
	CreatedAt string `json:"createdAt" jsonschema:"When the session was created (RFC 3339, UTC)"`
	Workspace string `json:"workspace,omitempty" jsonschema:"The workspace, when given"`
}

// Create is the session_create handler.
func (t *Tools) Create(ctx context.Context, in CreateInput) (CreateOutput, error) {
	s, err := t.svc.Create(ctx, CreateRequest{Initiator: in.Initiator, Task: in.Task, Workspace: in.Workspace,
		Metadata: json.RawMessage(in.Metadata)})
	if err != nil {
		return CreateOutput{}, err
	}
	return CreateOutput{SessionID: s.ID, Initiator: s.Initiator, Task: s.Task, Status: s.Status,
		CreatedAt: stamp(s.CreatedAt), Workspace: s.Workspace}, nil
}

// IDInput is the input of session_status.
type IDInput struct {
	SessionID string `json:"sessionId"`
}

// ParticipantOutput is one participant in session_status.
type ParticipantOutput struct {
	AgentID   string `json:"agentId" jsonschema:"The agent"`
	Role      string `json:"role" jsonschema:"Its role (the creator's is initiator)"`
	JoinedAt  string `json:"joinedAt" jsonschema:"When it joined (RFC 3339, UTC)"`
	TaskCount int    `json:"taskCount" jsonschema:"Tasks it has run in this session"`
}

// PolicyOutput is one applied policy in session_status.
type PolicyOutput struct {
	PolicyID  string `json:"policyId" jsonschema:"The guard policy"`
	AppliedAt string `json:"appliedAt" jsonschema:"When it was applied (RFC 3339, UTC)"`
}

// StatusOutput is the result of session_status, session_join,
// session_leave, session_complete and session_fail: the session as it is
// after the call.
type StatusOutput struct {
	SessionID     string              `json:"sessionId"`
	Status        Status              `json:"status" jsonschema:"active, completed or failed"`
	Initiator     string              `json:"initiator" jsonschema:"The initiating agent"`
	Task          string              `json:"task" jsonschema:"The task"`
	Workspace     string              `json:"workspace,omitempty" jsonschema:"The workspace, when given"`
	Metadata      json.RawMessage     `json:"metadata,omitempty" jsonschema:"The metadata, when given"`
	Participants  []ParticipantOutput `json:"participants" jsonschema:"Participants in join order"`
	Policies      []PolicyOutput      `json:"policies" jsonschema:"Guard policies applied, in order"`
	CreatedAt     string              `json:"createdAt" jsonschema:"When the session was created"`
	UpdatedAt     string              `json:"updatedAt" jsonschema:"When it last changed"`
	CompletedAt   string              `json:"completedAt,omitempty" jsonschema:"When it ended (completed or failed)"`
	Summary       string              `json:"summary,omitempty" jsonschema:"Completion summary"`
	FailureReason string              `json:"failureReason,omitempty"`
}

// StatusOf returns the StatusOutput form of s.
func StatusOf(s Session) StatusOutput {
	out := StatusOutput{SessionID: s.ID, Status: s.Status, Initiator: s.Initiator, Task: s.Task, Workspace: s.Workspace,
		Metadata: s.Metadata, CreatedAt: stamp(s.CreatedAt), UpdatedAt: stamp(s.UpdatedAt), CompletedAt: stamp(s.CompletedAt),
		Summary: s.Summary, FailureReason: s.FailureReason,
		Participants: make([]ParticipantOutput, len(s.Participants)), Policies: make([]PolicyOutput, len(s.Policies))}
	for i, p := range s.Participants {
		out.Participants[i] = ParticipantOutput{AgentID: p.AgentID, Role: p.Role, JoinedAt: stamp(p.JoinedAt), TaskCount: p.TaskCount}
	}
	for i, p := range s.Policies {
		out.Policies[i] = PolicyOutput{PolicyID: p.PolicyID, AppliedAt: stamp(p.AppliedAt)}
	}
	return out
}

// Status is the session_status handler.
func (t *Tools) Status(ctx context.Context, in IDInput) (StatusOutput, error) {
	s, err := t.svc.Get(ctx, in.SessionID)
	if err != nil {
		return StatusOutput{}, err
	}
	return StatusOf(s), nil
}

// ListInput is the input of session_list.
type ListInput struct {
	Status    Status `json:"status,omitempty" jsonschema:"active, completed or failed"`
	Initiator string `json:"initiator,omitempty"`
	Limit     int    `json:"limit,omitempty" jsonschema:"1-100, default 20"`
}

// ListItem is one session of session_list.
type ListItem struct {
	SessionID        string `json:"sessionId"`
	Initiator        string `json:"initiator" jsonschema:"The initiating agent"`
	Task             string `json:"task" jsonschema:"The task"`
	Status           Status `json:"status" jsonschema:"active, completed or failed"`
	ParticipantCount int    `json:"participantCount" jsonschema:"Number of participants"`
	CreatedAt        string `json:"createdAt" jsonschema:"When it was created (RFC 3339, UTC)"`
}

// ListOutput is the result of session_list.
type ListOutput struct {
	Sessions []ListItem `json:"sessions" jsonschema:"Matching sessions, newest first"`
	Total    int        `json:"total" jsonschema:"Number of matching sessions, listed or not"`
}

// List is the session_list handler.
func (t *Tools) List(ctx context.Context, in ListInput) (ListOutput, error) {
	page, total, err := t.svc.List(ctx, Filter(in))
	if err != nil {
		return ListOutput{}, err
	}
	out := ListOutput{Sessions: make([]ListItem, len(page)), Total: total}
	for i, s := range page {
		out.Sessions[i] = ListItem{SessionID: s.ID, Initiator: s.Initiator, Task: s.Task, Status: s.Status,
			ParticipantCount: s.ParticipantCount, CreatedAt: stamp(s.CreatedAt)}
	}
	return out, nil
}

// CompleteInput is the input of session_complete.
type CompleteInput struct {
	SessionID string `json:"sessionId"`
	Summary   string `json:"summary,omitempty"`
}

// Complete is the session_complete handler.
func (t *Tools) Complete(ctx context.Context, in CompleteInput) (StatusOutput, error) {
	s, err := t.svc.Complete(ctx, in.SessionID, in.Summary)
	if err != nil {
		return StatusOutput{}, err
	}
	return StatusOf(s), nil
}

// FailInput is the input of session_fail.
type FailInput struct {
	SessionID string `json:"sessionId"`
	Reason    string `json:"reason"`
}

// Fail is the session_fail handler.
func (t *Tools) Fail(ctx context.Context, in FailInput) (StatusOutput, error) {
	s, err := t.svc.Fail(ctx, in.SessionID, in.Reason)
	if err != nil {
		return StatusOutput{}, err
	}
	return StatusOf(s), nil
}

// JoinInput is the input of session_join.
type JoinInput struct {
	SessionID string `json:"sessionId"`
	AgentID   string `json:"agentId"`
	Role      string `json:"role,omitempty" jsonschema:"Default participant"`
}

// JoinOutput is the result of session_join.
type JoinOutput struct {
	Joined  bool         `json:"joined" jsonschema:"False when the agent was already a participant (nothing changed)"`
	Session StatusOutput `json:"session" jsonschema:"The session after the call"`
}

// Join is the session_join handler.
func (t *Tools) Join(ctx context.Context, in JoinInput) (JoinOutput, error) {
	s, joined, err := t.svc.Join(ctx, in.SessionID, in.AgentID, in.Role)
	if err != nil {
		return JoinOutput{}, err
	}
	return JoinOutput{Joined: joined, Session: StatusOf(s)}, nil
}

// LeaveInput is the input of session_leave.
type LeaveInput struct {
	SessionID string `json:"sessionId"`
	AgentID   string `json:"agentId"`
}

// LeaveOutput is the result of session_leave.
type LeaveOutput struct {
	Left    bool         `json:"left" jsonschema:"False when the agent was not a participant (nothing changed)"`
	Session StatusOutput `json:"session" jsonschema:"The session after the call"`
}

// Leave is the session_leave handler.
func (t *Tools) Leave(ctx context.Context, in LeaveInput) (LeaveOutput, error) {
	s, left, err := t.svc.Leave(ctx, in.SessionID, in.AgentID)
	if err != nil {
		return LeaveOutput{}, err
	}
	return LeaveOutput{Left: left, Session: StatusOf(s)}, nil
}
