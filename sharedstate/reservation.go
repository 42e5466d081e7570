package sharedstate

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcprt/mcprt/domain/reservation"
	"github.com/mcprt/mcprt/store"
)

// DomainReservation is the subject token of reservation events.
const DomainReservation = "reservation"

// Reservations is the reservation.Store of a node that shares its
// reservations: Reserve, Renew and Release are events decided where they
// land in the stream, identically on every node, so of racing reserves
// on any machines exactly one wins. Reads are the local store's.
type Reservations struct {
	r     *Replicator
	local *store.Reservations
}

var _ reservation.Store = (*Reservations)(nil)

// resReserve is a Reserve with everything its writer decided: the
// normalised patterns, the times and the ids of the leases it may create.
type resReserve struct {
	AgentID        string    `json:"agentId"`
	Patterns       []string  `json:"patterns"`
	Exclusive      bool      `json:"exclusive"`
	Reason         string    `json:"reason"`
	IdempotencyKey string    `json:"idempotencyKey"`
	Now            time.Time `json:"now"`
	ExpiresAt      time.Time `json:"expiresAt"`
	MaxPerAgent    int       `json:"maxPerAgent"`
	IDs            []string  `json:"ids"`
}

type resReserved struct {
	Granted   []reservation.Lease    `json:"granted"`
	Conflicts []reservation.Conflict `json:"conflicts"`
}

type resRenew struct {
	AgentID   string    `json:"agentId"`
	IDs       []string  `json:"ids"`
	Now       time.Time `json:"now"`
	ExpiresAt time.Time `json:"expiresAt"`
}

type resRelease struct {
	AgentID string    `json:"agentId"`
	IDs     []string  `json:"ids"`
	By      string    `json:"by"`
	Reason  string    `json:"reason"`
	Now     time.Time `json:"now"`
}

// NewReservations registers the reservation events on r and returns the
// shared reservation.Store over local.
func NewReservations(r *Replicator, local *store.Reservations) *Reservations {
	r.Handle("reservation.reserve", func(ctx context.Context, data json.RawMessage) (any, error) {
		var op resReserve
		if err := decode(data, &op); err != nil {
			return nil, err
		}
		pats := make([]reservation.Pattern, len(op.Patterns))
		for i, p := range op.Patterns {
			var err error
			if pats[i], err = reservation.ParsePattern(p); err != nil {
				return nil, err
			}
		}
		ids := op.IDs
		granted, conflicts, err := local.Reserve(ctx, reservation.ReserveOp{AgentID: op.AgentID, Patterns: pats,
			Exclusive: op.Exclusive, Reason: op.Reason, IdempotencyKey: op.IdempotencyKey, Now: op.Now,
			ExpiresAt: op.ExpiresAt, MaxPerAgent: op.MaxPerAgent, NewID: func() string {
				id := ids[0]
				ids = ids[1:]
				return id
			}})
		return resReserved{Granted: granted, Conflicts: conflicts}, err
	})
	r.Handle("reservation.renew", func(ctx context.Context, data json.RawMessage) (any, error) {
		var op resRenew
		if err := decode(data, &op); err != nil {
			return nil, err
		}
		return local.Renew(ctx, op.AgentID, op.IDs, op.Now, op.ExpiresAt)
	})
	r.Handle("reservation.release", func(ctx context.Context, data json.RawMessage) (any, error) {
		var op resRelease
		if err := decode(data, &op); err != nil {
			return nil, err
		}
		return local.Release(ctx, op.AgentID, op.IDs, op.By, op.Reason, op.Now)
	})
	return &Reservations{r: r, local: local}
}

// Reserve implements reservation.Store.
func (s *Reservations) Reserve(ctx context.Context, op reservation.ReserveOp) ([]reservation.Lease, []reservation.Conflict, error) {
	ev := resReserve{AgentID: op.AgentID, Exclusive: op.Exclusive, Reason: op.Reason, IdempotencyKey: op.IdempotencyKey,
		Now: op.Now, ExpiresAt: op.ExpiresAt, MaxPerAgent: op.MaxPerAgent}
	for _, p := range op.Patterns {
		ev.Patterns = append(ev.Patterns, p.Text)
		ev.IDs = append(ev.IDs, op.NewID())
	}
	var out resReserved
	err := s.r.Do(ctx, DomainReservation, "reservation.reserve", ev, &out)
	return out.Granted, out.Conflicts, err
}

// Renew implements reservation.Store.
func (s *Reservations) Renew(ctx context.Context, agentID string, ids []string, now, expiresAt time.Time) (out []reservation.Lease, err error) {
	err = s.r.Do(ctx, DomainReservation, "reservation.renew", resRenew{AgentID: agentID, IDs: ids, Now: now, ExpiresAt: expiresAt}, &out)
	return out, err
}

// Release implements reservation.Store.
func (s *Reservations) Release(ctx context.Context, agentID string, ids []string, by, reason string, now time.Time) (out []reservation.Lease, err error) {
	err = s.r.Do(ctx, DomainReservation, "reservation.release", resRelease{AgentID: agentID, IDs: ids, By: by, Reason: reason, Now: now}, &out)
	return out, err
}

// Overlapping implements reservation.Store from the local store.
func (s *Reservations) Overlapping(ctx context.Context, patterns []reservation.Pattern, exceptAgent string, now time.Time) ([]reservation.Conflict, error) {
	return s.local.Overlapping(ctx, patterns, exceptAgent, now)
}

// Get implements reservation.Store from the local store.
func (s *Reservations) Get(ctx context.Context, id string) (reservation.Lease, bool, error) {
	return s.local.Get(ctx, id)
}

// List implements reservation.Store from the local store.
func (s *Reservations) List(ctx context.Context, agentID string, now time.Time, limit int) ([]reservation.Lease, int, error) {
	return s.local.List(ctx, agentID, now, limit)
}
