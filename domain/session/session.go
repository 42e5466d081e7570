package session

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"
)

// Status is a session's state. A session starts active and ends, once,
// completed or failed.
type Status string

// The states of a session.
const (
	StatusActive    Status = "active"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
)

// Terminal reports whether s is an end state.
func (s Status) Terminal() bool { return s == StatusCompleted || s == StatusFailed }

func (s Status) valid() bool { return s == StatusActive || s.Terminal() }

// RoleInitiator is the role of the agent that created a session.
const RoleInitiator = "initiator"

// DefaultRole is the role of a participant that joins without naming one.
const DefaultRole = "participant"

// Participant is an agent taking part in a session.
type Participant struct {
	AgentID   string
	Role      string
	JoinedAt  time.Time
	TaskCount int
}

// AppliedPolicy records a guard policy applied to a session.
type AppliedPolicy struct {
	PolicyID  string
	AppliedAt time.Time
}

// Session is a collaboration session.
type Session struct {
	ID        string
	Initiator string
	Task      string
	Workspace string
	// Metadata is a compact JSON object, or nil.
	Metadata  json.RawMessage
	Status    Status
	CreatedAt time.Time
	UpdatedAt time.Time
	// CompletedAt is when the session ended (completed or failed); zero
	// while it is active.
	CompletedAt   time.Time
	Summary       string
	FailureReason string
	// Participants are in join order; the initiator joins first.
	Participants []Participant
	// Policies are in the order they were applied.
	Policies []AppliedPolicy
}

// Clone returns a deep copy of s.
func (s Session) Clone() Session {
	s.Metadata = slices.Clone(s.Metadata)
	s.Participants = slices.Clone(s.Participants)
	s.Policies = slices.Clone(s.Policies)
	return s
}

// participant returns the index of agentID among the participants, or -1.
func (s *Session) participant(agentID string) int {
	return slices.IndexFunc(s.Participants, func(p Participant) bool { return p.AgentID == agentID })
}

// Summary is a session as List shows it.
type Summary struct {
	ID               string
	Initiator        string
	Task             string
	Status           Status
	ParticipantCount int
	CreatedAt        time.Time
}

// Filter selects sessions for List: empty fields match everything.
// Results are newest first.
type Filter struct {
	Status    Status
	Initiator string
	Limit     int
}

// ErrNotFound is returned by a Store for an unknown session id; Service
// turns it into SESSION_NOT_FOUND.
var ErrNotFound = errors.New("session not found")

// Store persists sessions. Implementations must be safe for concurrent use
// (shared backends: by several processes too) and make each method atomic.
// Arguments have been validated by Service.
type Store interface {
	// Create stores a new session; its ID is fresh.
	Create(ctx context.Context, s Session) error
	// Get returns the session, or ErrNotFound.
	Get(ctx context.Context, id string) (Session, error)
	// List returns at most f.Limit matching sessions, newest first, and
	// how many match in all.
	List(ctx context.Context, f Filter) (page []Summary, total int, err error)
	// Update reads the session, lets fn change it and writes it back,
	// atomically: no other update of the session comes in between. If
	// fn returns an error nothing is written and that error is returned
	// unchanged. An unknown id is ErrNotFound (fn is not called).
	Update(ctx context.Context, id string, fn func(*Session) error) (Session, error)
}
