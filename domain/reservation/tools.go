package reservation

import (
	"context"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/domain/internal/check"
	"github.com/mcprt/mcprt/domain/toolspec"
)

// Tools holds the typed handlers of the reservation MCP tools, each a
// func(ctx, In) (Out, error) ready for mcp.AddTypedTool. Errors are
// *core.Error values.
type Tools struct{ svc *Service }

// NewTools returns the tool handlers over svc.
func NewTools(svc *Service) *Tools { return &Tools{svc: svc} }

// ToolSpecs returns the names, descriptions and annotations of the
// reservation tools.
func ToolSpecs() []toolspec.Spec {
	return []toolspec.Spec{
		{Name: "reserve_paths", Title: "Reserve paths before editing", Description: "Reserve files or doublestar globs (relative to the project root) before editing them, all or none. Exclusive (default) conflicts with any overlapping reservation, shared only with exclusive ones. Returns the leases or, per conflict, who holds what until when."},
		{Name: "renew_reservations", Title: "Renew reservations", Description: "Extend your active reservations (the ids given, or all) to now + ttlSeconds."},
		{Name: "release_reservations", Title: "Release reservations", Description: "Release your reservations (the ids given, or all) so other agents may edit those paths.",
			Destructive: true, Idempotent: true},
		{Name: "force_release_reservation", Title: "Force-release a reservation", Description: "Release another agent's reservation when that agent is stale or offline (RESERVATION_HOLDER_LIVE otherwise). Recorded with the reason; the holder is told.",
			Destructive: true},
		{Name: "list_reservations", Title: "List reservations", Description: "List active reservations, of one agent and/or overlapping one path or glob.",
			ReadOnly: true, Idempotent: true},
		{Name: "check_reservations", Title: "Check paths for reservations", Description: "Who holds reservations overlapping these paths or globs (other agents only), and whether they would block you.",
			ReadOnly: true, Idempotent: true},
	}
}

// LeaseOutput is one reservation as the tools show it.
type LeaseOutput struct {
	ID        string `json:"id"`
	AgentID   string `json:"agentId"`
	Path      string `json:"path" jsonschema:"The normalised path or glob"`
	Exclusive bool   `json:"exclusive"`
	Reason    string `json:"reason,omitempty"`
	CreatedAt string `json:"createdAt"`
	ExpiresAt string `json:"expiresAt"`
	// ReleasedAt and the rest are set on leases that have ended.
	ReleasedAt    string `json:"releasedAt,omitempty"`
	ReleasedBy    string `json:"releasedBy,omitempty"`
	ReleaseReason string `json:"releaseReason,omitempty"`
}

// Output returns the tool view of l.
func Output(l Lease) LeaseOutput {
	return LeaseOutput{ID: l.ID, AgentID: l.AgentID, Path: l.Pattern, Exclusive: l.Exclusive, Reason: l.Reason,
		CreatedAt: check.Stamp(l.CreatedAt), ExpiresAt: check.Stamp(l.ExpiresAt), ReleasedAt: check.Stamp(l.ReleasedAt),
		ReleasedBy: l.ReleasedBy, ReleaseReason: l.ReleaseReason}
}

// Outputs returns the tool view of ls (never nil).
func Outputs(ls []Lease) []LeaseOutput {
	out := make([]LeaseOutput, len(ls))
	for i, l := range ls {
		out[i] = Output(l)
	}
	return out
}

// ConflictOutput is one conflict.
type ConflictOutput struct {
	Path    string `json:"path" jsonschema:"Your path or glob"`
	HeldBy  string `json:"heldBy"`
	Holding string `json:"holding" jsonschema:"The holder's path or glob"`
	Until   string `json:"until"`
	// Exclusive says whether the holder's lease is exclusive.
	Exclusive     bool   `json:"exclusive"`
	ReservationID string `json:"reservationId"`
	Reason        string `json:"reason,omitempty"`
}

func conflictOutputs(cs []Conflict) []ConflictOutput {
	out := make([]ConflictOutput, len(cs))
	for i, c := range cs {
		out[i] = ConflictOutput{Path: c.Path, HeldBy: c.Lease.AgentID, Holding: c.Lease.Pattern, Until: check.Stamp(c.Lease.ExpiresAt),
			Exclusive: c.Lease.Exclusive, ReservationID: c.Lease.ID, Reason: c.Lease.Reason}
	}
	return out
}

// ReserveInput is the input of reserve_paths.
type ReserveInput struct {
	Paths          []string `json:"paths" jsonschema:"Paths or globs relative to the project root, e.g. src/api/** (at most 100)"`
	Exclusive      *bool    `json:"exclusive,omitempty" jsonschema:"false for a shared reservation (default true)"`
	TTLSeconds     int      `json:"ttlSeconds,omitempty" jsonschema:"Lease time in seconds (default 3600, at most 604800)"`
	Reason         string   `json:"reason,omitempty"`
	IdempotencyKey string   `json:"idempotencyKey,omitempty"`
}

// ReserveOutput is the result of reserve_paths.
type ReserveOutput struct {
	Granted   bool             `json:"granted" jsonschema:"true when every path was reserved; false when nothing was (see conflicts)"`
	Leases    []LeaseOutput    `json:"leases"`
	Conflicts []ConflictOutput `json:"conflicts"`
	// Released are leases of stale or offline holders that were released
	// because they were in the way.
	Released []LeaseOutput `json:"released,omitempty"`
	Message  string        `json:"message"`
}

// Reserve is the reserve_paths handler. A conflict is a normal result
// with granted=false.
func (t *Tools) Reserve(ctx context.Context, in ReserveInput) (ReserveOutput, error) {
	excl := in.Exclusive == nil || *in.Exclusive
	res, err := t.svc.Reserve(ctx, Request{Paths: in.Paths, Exclusive: excl, TTL: time.Duration(in.TTLSeconds) * time.Second,
		Reason: in.Reason, IdempotencyKey: in.IdempotencyKey})
	if err != nil {
		return ReserveOutput{}, err
	}
	out := ReserveOutput{Granted: len(res.Conflict) == 0, Leases: Outputs(res.Granted), Conflicts: conflictOutputs(res.Conflict)}
	if len(res.Released) > 0 {
		out.Released = Outputs(res.Released)
	}
	if out.Granted {
		out.Message = fmt.Sprintf("reserved %d path(s)", len(out.Leases))
	} else {
		c := res.Conflict[0]
		out.Message = fmt.Sprintf("nothing reserved: %d conflict(s); first: %s is held by %s (%s) until %s — work elsewhere, ask them, or retry later",
			len(res.Conflict), c.Path, c.Lease.AgentID, c.Lease.Pattern, check.Stamp(c.Lease.ExpiresAt))
	}
	return out, nil
}

// RenewInput is the input of renew_reservations.
type RenewInput struct {
	IDs        []string `json:"ids,omitempty" jsonschema:"Reservation ids (default: all of yours)"`
	TTLSeconds int      `json:"ttlSeconds,omitempty" jsonschema:"New lease time from now in seconds (default 3600)"`
}

// ChangedOutput is the result of renew_reservations and
// release_reservations.
type ChangedOutput struct {
	Leases   []LeaseOutput `json:"leases"`
	NotFound []string      `json:"notFound" jsonschema:"Ids that named none of your active reservations"`
}

// Renew is the renew_reservations handler.
func (t *Tools) Renew(ctx context.Context, in RenewInput) (ChangedOutput, error) {
	ls, miss, err := t.svc.Renew(ctx, in.IDs, time.Duration(in.TTLSeconds)*time.Second)
	if err != nil {
		return ChangedOutput{}, err
	}
	return ChangedOutput{Leases: Outputs(ls), NotFound: miss}, nil
}

// ReleaseInput is the input of release_reservations.
type ReleaseInput struct {
	IDs []string `json:"ids,omitempty" jsonschema:"Reservation ids (default: all of yours)"`
}

// Release is the release_reservations handler.
func (t *Tools) Release(ctx context.Context, in ReleaseInput) (ChangedOutput, error) {
	ls, miss, err := t.svc.Release(ctx, in.IDs)
	if err != nil {
		return ChangedOutput{}, err
	}
	return ChangedOutput{Leases: Outputs(ls), NotFound: miss}, nil
}

// ForceInput is the input of force_release_reservation.
type ForceInput struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Force is the force_release_reservation handler.
func (t *Tools) Force(ctx context.Context, in ForceInput) (LeaseOutput, error) {
	l, err := t.svc.ForceRelease(ctx, in.ID, in.Reason)
	if err != nil {
		return LeaseOutput{}, err
	}
	return Output(l), nil
}

// ListInput is the input of list_reservations.
type ListInput struct {
	AgentID string `json:"agentId,omitempty"`
	Path    string `json:"path,omitempty" jsonschema:"Only reservations overlapping this path or glob"`
}

// ListOutput is the result of list_reservations.
type ListOutput struct {
	Reservations []LeaseOutput `json:"reservations"`
	Total        int           `json:"total" jsonschema:"How many match (at most 500 are listed)"`
}

// List is the list_reservations handler.
func (t *Tools) List(ctx context.Context, in ListInput) (ListOutput, error) {
	ls, total, err := t.svc.List(ctx, in.AgentID, in.Path)
	if err != nil {
		return ListOutput{}, err
	}
	return ListOutput{Reservations: Outputs(ls), Total: total}, nil
}

// CheckInput is the input of check_reservations.
type CheckInput struct {
	Paths []string `json:"paths" jsonschema:"Paths or globs relative to the project root (at most 100)"`
}

// CheckOutput is the result of check_reservations.
type CheckOutput struct {
	// Free is true when no other live agent holds an overlapping lease.
	Free bool `json:"free"`
	// BlocksExclusive / BlocksShared: whether reserve_paths with these
	// paths would be refused now.
	BlocksExclusive bool             `json:"blocksExclusive"`
	BlocksShared    bool             `json:"blocksShared"`
	Conflicts       []ConflictOutput `json:"conflicts"`
}

// Check is the check_reservations handler.
func (t *Tools) Check(ctx context.Context, in CheckInput) (CheckOutput, error) {
	cs, err := t.svc.Check(ctx, in.Paths)
	if err != nil {
		return CheckOutput{}, err
	}
	out := CheckOutput{Free: len(cs) == 0, BlocksExclusive: len(cs) > 0, Conflicts: conflictOutputs(cs)}
	for _, c := range cs {
		out.BlocksShared = out.BlocksShared || c.Lease.Exclusive
	}
	return out, nil
}
