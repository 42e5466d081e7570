package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/internal/check"
)

// The domain error codes of sessions.
const (
	// CodeNotFound: no session has the given id.
	CodeNotFound core.Code = "SESSION_NOT_FOUND"
	// CodeAlreadyCompleted: the session has already ended (completed
	// or failed) and the operation needs an active one, or asks for the
	// end it already has.
	CodeAlreadyCompleted core.Code = "SESSION_ALREADY_COMPLETED"
	// CodeInvalidTransition: the operation would move an ended session
	// to a different end (completed → failed, failed → completed).
	CodeInvalidTransition core.Code = "SESSION_INVALID_TRANSITION"
	// CodePolicyAlreadyApplied: the policy is already applied to the
	// session.
	CodePolicyAlreadyApplied core.Code = "POLICY_ALREADY_APPLIED"
)

// Limits of the session domain; a request over one fails and changes
// nothing.
const (
	MaxIDBytes        = 128
	MaxAgentIDBytes   = 128
	MaxRoleBytes      = 64
	MaxTaskBytes      = 4096
	MaxWorkspaceBytes = 1024
	MaxTextBytes      = 4096 // summary, failure reason
	MaxMetadataBytes  = 16 * 1024
	MaxMetadataDepth  = 32
	MaxParticipants   = 256
	MaxPolicies       = 64
	// DefaultListLimit and MaxListLimit bound List.
	DefaultListLimit, MaxListLimit = 20, 100
)

// Service is the session domain: validation, the state machine, ids and
// times over a Store. It is safe for concurrent use when its Store is.
type Service struct {
	store Store
	clock core.Clock
	ids   core.IDGenerator
}

// NewService returns a Service. A nil clock means core.SystemClock; nil
// ids means random UUIDs.
func NewService(store Store, clock core.Clock, ids core.IDGenerator) *Service {
	if clock == nil {
		clock = core.SystemClock{}
	}
	if ids == nil {
		ids = &core.UUIDGenerator{}
	}
	return &Service{store: store, clock: clock, ids: ids}
}

// CreateRequest describes a new session.
type CreateRequest struct {
	Initiator string
	Task      string
	Workspace string
	// Metadata is a JSON object, or empty.
	Metadata json.RawMessage
}

// Create starts an active session whose first participant is the initiator
// (role RoleInitiator).
func (s *Service) Create(ctx context.Context, req CreateRequest) (Session, error) {
	if err := check.Text("initiator", req.Initiator, MaxAgentIDBytes, true); err != nil {
		return Session{}, err
	}
	if err := check.Text("task", req.Task, MaxTaskBytes, true); err != nil {
		return Session{}, err
	}
	if err := check.Text("workspace", req.Workspace, MaxWorkspaceBytes, false); err != nil {
		return Session{}, err
	}
	meta, err := normMetadata(req.Metadata)
	if err != nil {
		return Session{}, err
	}
	now := s.clock.Now().UTC()
	sess := Session{
		ID:           s.ids.NewID(),
		Initiator:    req.Initiator,
		Task:         req.Task,
		Workspace:    req.Workspace,
		Metadata:     meta,
		Status:       StatusActive,
		CreatedAt:    now,
		UpdatedAt:    now,
		Participants: []Participant{{AgentID: req.Initiator, Role: RoleInitiator, JoinedAt: now}},
		Policies:     []AppliedPolicy{},
	}
	if err := s.store.Create(ctx, sess); err != nil {
		return Session{}, err
	}
	return sess, nil
}

// Get returns the session with the given id.
func (s *Service) Get(ctx context.Context, id string) (Session, error) {
	if err := checkID(id); err != nil {
		return Session{}, err
	}
	sess, err := s.store.Get(ctx, id)
	return sess, s.mapErr(id, err)
}

// List returns sessions matching f, newest first, and the total matching.
// A zero Limit means DefaultListLimit.
func (s *Service) List(ctx context.Context, f Filter) ([]Summary, int, error) {
	if f.Status != "" && !f.Status.valid() {
		return nil, 0, check.Invalid("status", "is %q; give active, completed or failed", f.Status)
	}
	if err := check.Text("initiator", f.Initiator, MaxAgentIDBytes, false); err != nil {
		return nil, 0, err
	}
	switch {
	case f.Limit == 0:
		f.Limit = DefaultListLimit
	case f.Limit < 0 || f.Limit > MaxListLimit:
		return nil, 0, check.Invalid("limit", "is %d; give a number from 1 to %d", f.Limit, MaxListLimit)
	}
	return s.store.List(ctx, f)
}

// Complete ends an active session as completed, with an optional summary.
func (s *Service) Complete(ctx context.Context, id, summary string) (Session, error) {
	if err := check.Text("summary", summary, MaxTextBytes, false); err != nil {
		return Session{}, err
	}
	return s.update(ctx, id, func(sess *Session, now core.Clock) error {
		if err := end(sess, StatusCompleted); err != nil {
			return err
		}
		sess.Summary = summary
		return nil
	})
}

// Fail ends an active session as failed, saying why.
func (s *Service) Fail(ctx context.Context, id, reason string) (Session, error) {
	if err := check.Text("reason", reason, MaxTextBytes, true); err != nil {
		return Session{}, err
	}
	return s.update(ctx, id, func(sess *Session, _ core.Clock) error {
		if err := end(sess, StatusFailed); err != nil {
			return err
		}
		sess.FailureReason = reason
		return nil
	})
}

// Join adds agentID to an active session with role (DefaultRole when "").
// Joining again changes nothing (the first role stays; leave and join to
// change it); joined reports whether the agent was new.
func (s *Service) Join(ctx context.Context, id, agentID, role string) (sess Session, joined bool, err error) {
	if err := check.Text("agentId", agentID, MaxAgentIDBytes, true); err != nil {
		return Session{}, false, err
	}
	if role == "" {
		role = DefaultRole
	}
	if err := check.Text("role", role, MaxRoleBytes, true); err != nil {
		return Session{}, false, err
	}
	sess, err = s.update(ctx, id, func(sess *Session, _ core.Clock) error {
		if err := needActive(sess, "join"); err != nil {
			return err
		}
		if sess.participant(agentID) >= 0 {
			return errUnchanged
		}
		if len(sess.Participants) >= MaxParticipants {
			e := core.NewError(core.CodeResourceExhausted,
				fmt.Sprintf("session %s already has %d participants, the limit; someone must leave first", sess.ID, MaxParticipants)).
				WithDetail("limit", MaxParticipants)
			return e
		}
		sess.Participants = append(sess.Participants, Participant{AgentID: agentID, Role: role, JoinedAt: sess.UpdatedAt})
		joined = true
		return nil
	})
	return sess, joined, err
}

// Leave removes agentID from an active session. Leaving a session one is
// not part of succeeds with left false.
func (s *Service) Leave(ctx context.Context, id, agentID string) (sess Session, left bool, err error) {
	if err := check.Text("agentId", agentID, MaxAgentIDBytes, true); err != nil {
		return Session{}, false, err
	}
	sess, err = s.update(ctx, id, func(sess *Session, _ core.Clock) error {
		if err := needActive(sess, "leave"); err != nil {
			return err
		}
		i := sess.participant(agentID)
		if i < 0 {
			return errUnchanged
		}
		sess.Participants = append(sess.Participants[:i:i], sess.Participants[i+1:]...)
		left = true
		return nil
	})
	return sess, left, err
}

// RecordTask adds n (≥ 1) to the task count of a participant of an active
// session. It is the hook for task-running tools.
func (s *Service) RecordTask(ctx context.Context, id, agentID string, n int) (Session, error) {
	if err := check.Text("agentId", agentID, MaxAgentIDBytes, true); err != nil {
		return Session{}, err
	}
	if n < 1 || n > 1_000_000 {
		return Session{}, check.Invalid("count", "is %d; give a number from 1 to 1000000", n)
	}
	return s.update(ctx, id, func(sess *Session, _ core.Clock) error {
		if err := needActive(sess, "record a task in"); err != nil {
			return err
		}
		i := sess.participant(agentID)
		if i < 0 {
			return core.NewError(core.CodeNotFound,
				fmt.Sprintf("agent %q is not a participant of session %s; join it first", agentID, sess.ID)).
				WithDetail("sessionId", sess.ID).WithDetail("agentId", agentID)
		}
		sess.Participants[i].TaskCount += n
		return nil
	})
}

// ApplyPolicy records policyID as applied to an active session; applying
// it twice is POLICY_ALREADY_APPLIED. Whether the policy exists is the
// caller's business (the guard domain checks).
func (s *Service) ApplyPolicy(ctx context.Context, id, policyID string) (Session, error) {
	if err := check.Text("policyId", policyID, MaxIDBytes, true); err != nil {
		return Session{}, err
	}
	return s.update(ctx, id, func(sess *Session, _ core.Clock) error {
		if err := needActive(sess, "apply a policy to"); err != nil {
			return err
		}
		for _, p := range sess.Policies {
			if p.PolicyID == policyID {
				return core.NewError(CodePolicyAlreadyApplied,
					fmt.Sprintf("policy %q is already applied to session %s (since %s); nothing to do", policyID, sess.ID, p.AppliedAt.Format(TimeFormat))).
					WithDetail("sessionId", sess.ID).WithDetail("policyId", policyID)
			}
		}
		if len(sess.Policies) >= MaxPolicies {
			return core.NewError(core.CodeResourceExhausted,
				fmt.Sprintf("session %s already has %d policies, the limit", sess.ID, MaxPolicies)).WithDetail("limit", MaxPolicies)
		}
		sess.Policies = append(sess.Policies, AppliedPolicy{PolicyID: policyID, AppliedAt: sess.UpdatedAt})
		return nil
	})
}

// update validates id, stamps UpdatedAt before fn runs (fn may use it as
// "now") and maps store errors. When fn returns errUnchanged nothing is
// written and the session is returned as it is.
func (s *Service) update(ctx context.Context, id string, fn func(*Session, core.Clock) error) (Session, error) {
	if err := checkID(id); err != nil {
		return Session{}, err
	}
	var unchanged *Session
	sess, err := s.store.Update(ctx, id, func(sess *Session) error {
		prev := sess.UpdatedAt
		sess.UpdatedAt = s.clock.Now().UTC()
		if err := fn(sess, s.clock); err != nil {
			sess.UpdatedAt = prev
			if errors.Is(err, errUnchanged) {
				c := sess.Clone()
				unchanged = &c
			}
			return err
		}
		if sess.Status.Terminal() && sess.CompletedAt.IsZero() {
			sess.CompletedAt = sess.UpdatedAt
		}
		return nil
	})
	if unchanged != nil && errors.Is(err, errUnchanged) {
		return *unchanged, nil
	}
	return sess, s.mapErr(id, err)
}

// errUnchanged tells update that fn changed nothing: nothing is written
// and the session is returned as it was.
var errUnchanged = errors.New("unchanged")

func (s *Service) mapErr(id string, err error) error {
	if errors.Is(err, ErrNotFound) {
		return core.NewError(CodeNotFound,
			fmt.Sprintf("no session has id %q; create one with session_create or list them with session_list", id)).
			WithDetail("sessionId", id)
	}
	return err
}

// end moves an active session to the end state to.
func end(sess *Session, to Status) error {
	switch {
	case sess.Status == StatusActive:
		sess.Status = to
		return nil
	case sess.Status == to:
		return core.NewError(CodeAlreadyCompleted,
			fmt.Sprintf("session %s already ended as %s at %s; it cannot end again", sess.ID, sess.Status, sess.CompletedAt.Format(TimeFormat))).
			WithDetail("sessionId", sess.ID).WithDetail("status", string(sess.Status))
	default:
		return core.NewError(CodeInvalidTransition,
			fmt.Sprintf("session %s ended as %s; it cannot become %s (only an active session can complete or fail)", sess.ID, sess.Status, to)).
			WithDetail("sessionId", sess.ID).WithDetail("from", string(sess.Status)).WithDetail("to", string(to))
	}
}

// needActive fails with SESSION_ALREADY_COMPLETED when sess has ended.
func needActive(sess *Session, doing string) error {
	if sess.Status == StatusActive {
		return nil
	}
	return core.NewError(CodeAlreadyCompleted,
		fmt.Sprintf("session %s ended as %s at %s; cannot %s it: only an active session can change", sess.ID, sess.Status, sess.CompletedAt.Format(TimeFormat), doing)).
		WithDetail("sessionId", sess.ID).WithDetail("status", string(sess.Status))
}
