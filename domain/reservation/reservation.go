package reservation

import (
	"context"
	"time"

	"github.com/mcprt/mcprt/core"
)

// The domain error codes of reservations.
const (
	// CodeNotFound: no active reservation of the caller has the id.
	CodeNotFound core.Code = "RESERVATION_NOT_FOUND"
	// CodeHolderLive: force_release was asked for a reservation whose
	// holder is still online or idle.
	CodeHolderLive core.Code = "RESERVATION_HOLDER_LIVE"
	// CodeNoIdentity: the server cannot tell which agent is calling.
	CodeNoIdentity core.Code = "AGENT_IDENTITY_UNAVAILABLE"
)

// Limits of the reservation domain; a request over one fails and changes
// nothing.
const (
	MaxPathsPerCall     = 100
	MaxReasonBytes      = 1024
	MaxIdempotencyBytes = 128
	MaxTTLSeconds       = 7 * 24 * 3600
	// DefaultMaxPerAgent is how many active reservations one agent may
	// hold when Options.MaxPerAgent is zero.
	DefaultMaxPerAgent = 1000
	// MaxListed bounds what List returns.
	MaxListed = 500
)

// Presence states as the messaging service reports them. Only online and
// idle holders (and unknown ones, which cannot be proven gone) block.
const (
	PresenceOnline  = "online"
	PresenceIdle    = "idle"
	PresenceStale   = "stale"
	PresenceOffline = "offline"
	PresenceUnknown = "unknown"
)

// Messaging is what reservations need of the agent messaging service:
// who is calling, whether another agent is still there, and a way to tell
// it that its reservation was released. Package tools/messaging's *Service satisfies it.
type Messaging interface {
	Caller(ctx context.Context) (string, error)
	Presence(ctx context.Context, agentID string) (state string, lastSeen time.Time, err error)
	Tell(ctx context.Context, agentID, subject string, payload map[string]any) error
}

// Lease is one reservation: an agent's claim on the paths a pattern
// matches, until ExpiresAt.
type Lease struct {
	ID             string
	AgentID        string
	Pattern        string // normalised (ParsePattern)
	Prefix         string // literal prefix of Pattern (Pattern.Prefix)
	Exclusive      bool
	Reason         string
	IdempotencyKey string
	CreatedAt      time.Time
	ExpiresAt      time.Time
	// ReleasedAt is zero while the lease is held; a released lease keeps
	// who released it and why (the record of its end).
	ReleasedAt    time.Time
	ReleasedBy    string
	ReleaseReason string
}

// Active reports whether l counts at now: not released and not expired.
func (l Lease) Active(now time.Time) bool { return l.ReleasedAt.IsZero() && now.Before(l.ExpiresAt) }

// Conflict is an active lease of another agent that overlaps a requested
// pattern in a way that blocks it.
type Conflict struct {
	Path  string // the requested pattern
	Lease Lease  // the lease in the way
}

// ReserveOp is one atomic reservation request.
type ReserveOp struct {
	AgentID        string
	Patterns       []Pattern
	Exclusive      bool
	Reason         string
	IdempotencyKey string
	Now            time.Time
	ExpiresAt      time.Time
	MaxPerAgent    int
	// NewID names each new lease.
	NewID func() string
}

// Store keeps leases. Implementations make Reserve atomic across
// processes: two concurrent Reserve calls never both grant overlapping
// leases that conflict.
type Store interface {
	// Reserve grants all of op's patterns or none: it returns the
	// conflicts with other agents' active leases (an exclusive request
	// conflicts with any overlapping lease, a shared one with exclusive
	// leases) and grants nothing when there is one. A pattern the agent
	// already holds is updated in place (kept id). With an
	// IdempotencyKey the agent used before, it returns the leases that
	// key granted and changes nothing.
	Reserve(ctx context.Context, op ReserveOp) (granted []Lease, conflicts []Conflict, err error)
	// Overlapping returns the active leases at now that overlap any of
	// patterns, excluding those of exceptAgent ("" for none).
	Overlapping(ctx context.Context, patterns []Pattern, exceptAgent string, now time.Time) ([]Conflict, error)
	// Renew sets the expiry of agentID's active leases with the given
	// ids (all of them when ids is empty) and returns them.
	Renew(ctx context.Context, agentID string, ids []string, now, expiresAt time.Time) ([]Lease, error)
	// Release ends leases: those of agentID with the given ids (all of
	// agentID's when ids is empty; any holder's when agentID is ""),
	// recording by and reason. It returns the leases it ended.
	Release(ctx context.Context, agentID string, ids []string, by, reason string, now time.Time) ([]Lease, error)
	// Get returns the lease with the id, active or not.
	Get(ctx context.Context, id string) (Lease, bool, error)
	// List returns at most limit active leases, of agentID when not "",
	// ordered by creation, and how many active ones match.
	List(ctx context.Context, agentID string, now time.Time, limit int) ([]Lease, int, error)
}
