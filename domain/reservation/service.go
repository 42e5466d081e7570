package reservation

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/internal/check"
)

// Options configure a Service.
type Options struct {
	Store Store
	// Messaging names the caller and tells holders; nil until Connect.
	Messaging Messaging
	Clock     core.Clock
	IDs       core.IDGenerator
	// MaxPerAgent bounds one agent's active reservations (0:
	// DefaultMaxPerAgent).
	MaxPerAgent int
	// DefaultTTL is the lease time when a request gives none (0: one
	// hour).
	DefaultTTL time.Duration
}

// Service is the reservation domain: validation, caller identity,
// liveness of holders and notices over a Store. It is safe for concurrent
// use when its Store and Messaging are.
type Service struct {
	opts Options
	msg  Messaging
}

// NewService returns a Service.
func NewService(opts Options) *Service {
	if opts.Clock == nil {
		opts.Clock = core.SystemClock{}
	}
	if opts.IDs == nil {
		opts.IDs = &core.UUIDGenerator{}
	}
	if opts.MaxPerAgent <= 0 {
		opts.MaxPerAgent = DefaultMaxPerAgent
	}
	if opts.DefaultTTL <= 0 {
		opts.DefaultTTL = time.Hour
	}
	return &Service{opts: opts, msg: opts.Messaging}
}

// Connect sets the messaging service. Call it before serving.
func (s *Service) Connect(m Messaging) { s.msg = m }

// Caller returns the agent the call of ctx acts for.
func (s *Service) Caller(ctx context.Context) (string, error) {
	if s.msg == nil {
		return "", core.NewError(CodeNoIdentity, "this server has no agent messaging, so it cannot tell which agent is calling; run mcprt with agent messaging (aacp.dataDir)")
	}
	id, err := s.msg.Caller(ctx)
	if err != nil {
		return "", fmt.Errorf("reservations: identifying the calling agent: %w", err)
	}
	return id, nil
}

// Live reports whether agentID still counts as present: online or idle,
// or unknown to messaging (it cannot be proven gone). Without messaging
// every agent is live.
func (s *Service) Live(ctx context.Context, agentID string) (bool, string) {
	if s.msg == nil {
		return true, PresenceUnknown
	}
	st, _, err := s.msg.Presence(ctx, agentID)
	if err != nil {
		return true, PresenceUnknown
	}
	return st != PresenceStale && st != PresenceOffline, st
}

// Request is a reserve request.
type Request struct {
	Paths          []string
	Exclusive      bool
	TTL            time.Duration
	Reason         string
	IdempotencyKey string
}

// Result is what Reserve did: the leases granted (none when there is a
// conflict), the conflicts with live holders, and the leases of gone
// holders that were released on the way.
type Result struct {
	Granted  []Lease
	Conflict []Conflict
	Released []Lease
}

// Reserve reserves req.Paths for the caller, all or none.
func (s *Service) Reserve(ctx context.Context, req Request) (Result, error) {
	pats, err := parseAll("paths", req.Paths)
	if err != nil {
		return Result{}, err
	}
	ttl, err := s.ttl(req.TTL)
	if err != nil {
		return Result{}, err
	}
	if err := check.Text("reason", req.Reason, MaxReasonBytes, false); err != nil {
		return Result{}, err
	}
	if err := check.Text("idempotencyKey", req.IdempotencyKey, MaxIdempotencyBytes, false); err != nil {
		return Result{}, err
	}
	me, err := s.Caller(ctx)
	if err != nil {
		return Result{}, err
	}
	var res Result
	// A conflict with a gone holder releases its leases and tries again;
	// two rounds suffice unless holders keep vanishing.
	for round := 0; ; round++ {
		now := s.opts.Clock.Now()
		op := ReserveOp{AgentID: me, Patterns: pats, Exclusive: req.Exclusive, Reason: req.Reason,
			IdempotencyKey: req.IdempotencyKey, Now: now, ExpiresAt: now.Add(ttl), MaxPerAgent: s.opts.MaxPerAgent,
			NewID: s.opts.IDs.NewID}
		granted, conflicts, err := s.opts.Store.Reserve(ctx, op)
		if err != nil {
			return Result{}, fmt.Errorf("reserve_paths: %w", err)
		}
		live, released, err := s.dropGone(ctx, me, conflicts, true)
		if err != nil {
			return Result{}, err
		}
		res.Released = append(res.Released, released...)
		if len(conflicts) == 0 || len(released) == 0 || round == 2 {
			res.Granted, res.Conflict = granted, live
			return res, nil
		}
	}
}

// dropGone splits conflicts into those of live holders and, with release,
// releases the leases of gone ones (recorded, holders told).
func (s *Service) dropGone(ctx context.Context, me string, conflicts []Conflict, release bool) ([]Conflict, []Lease, error) {
	var live []Conflict
	gone := map[string]string{}
	state := map[string]bool{}
	for _, c := range conflicts {
		h := c.Lease.AgentID
		ok, known := state[h]
		if !known {
			var st string
			ok, st = s.Live(ctx, h)
			state[h] = ok
			if !ok {
				gone[h] = st
			}
		}
		if ok {
			live = append(live, c)
		}
	}
	var released []Lease
	if !release {
		return live, nil, nil
	}
	for _, h := range slices.Sorted(maps.Keys(gone)) {
		ls, err := s.opts.Store.Release(ctx, h, nil, me, "holder "+h+" is "+gone[h], s.opts.Clock.Now())
		if err != nil {
			return nil, nil, fmt.Errorf("releasing the reservations of %s, which is %s: %w", h, gone[h], err)
		}
		released = append(released, ls...)
		if len(ls) > 0 {
			s.tell(ctx, h, "reservations released", map[string]any{"reason": "you were " + gone[h],
				"releasedBy": me, "reservations": leaseIDs(ls)})
		}
	}
	return live, released, nil
}

func leaseIDs(ls []Lease) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.ID
	}
	return out
}

// tell notifies agentID; a failed notice does not undo what was done.
func (s *Service) tell(ctx context.Context, agentID, subject string, payload map[string]any) {
	if s.msg != nil {
		_ = s.msg.Tell(ctx, agentID, subject, payload)
	}
}

func (s *Service) ttl(d time.Duration) (time.Duration, error) {
	switch {
	case d == 0:
		return s.opts.DefaultTTL, nil
	case d < time.Second || d > MaxTTLSeconds*time.Second:
		return 0, check.Invalid("ttlSeconds", "is %d; give 1 to %d seconds", int64(d/time.Second), MaxTTLSeconds)
	}
	return d, nil
}

func parseAll(field string, paths []string) ([]Pattern, error) {
	switch {
	case len(paths) == 0:
		return nil, check.Invalid(field, "is empty; give at least one relative path or glob, such as src/** or src/main.go")
	case len(paths) > MaxPathsPerCall:
		return nil, check.Invalid(field, "has %d items; the limit is %d per call: reserve a broader glob such as src/**", len(paths), MaxPathsPerCall).
			WithDetail("limit", MaxPathsPerCall)
	}
	out := make([]Pattern, 0, len(paths))
	seen := map[string]bool{}
	for _, p := range paths {
		pat, err := ParsePattern(p)
		if err != nil {
			return nil, err
		}
		if !seen[pat.Text] {
			seen[pat.Text] = true
			out = append(out, pat)
		}
	}
	return out, nil
}

// Renew extends the caller's active leases with the ids (all of them when
// ids is empty) to now+ttl. It returns the leases renewed and the ids
// that name none of the caller's active leases; when no id matches, that
// is RESERVATION_NOT_FOUND.
func (s *Service) Renew(ctx context.Context, ids []string, ttl time.Duration) ([]Lease, []string, error) {
	ttl, err := s.ttl(ttl)
	if err != nil {
		return nil, nil, err
	}
	if err := checkIDs(ids); err != nil {
		return nil, nil, err
	}
	me, err := s.Caller(ctx)
	if err != nil {
		return nil, nil, err
	}
	now := s.opts.Clock.Now()
	ls, err := s.opts.Store.Renew(ctx, me, ids, now, now.Add(ttl))
	if err != nil {
		return nil, nil, fmt.Errorf("renew_reservations: %w", err)
	}
	miss, err := missing(ids, ls, me)
	return ls, miss, err
}

// Release ends the caller's leases with the ids (all of them when ids is
// empty), like Renew for what it returns.
func (s *Service) Release(ctx context.Context, ids []string) ([]Lease, []string, error) {
	if err := checkIDs(ids); err != nil {
		return nil, nil, err
	}
	me, err := s.Caller(ctx)
	if err != nil {
		return nil, nil, err
	}
	ls, err := s.opts.Store.Release(ctx, me, ids, me, "released by its holder", s.opts.Clock.Now())
	if err != nil {
		return nil, nil, fmt.Errorf("release_reservations: %w", err)
	}
	miss, err := missing(ids, ls, me)
	return ls, miss, err
}

// ForceRelease ends another agent's lease when its holder is stale or
// offline: recorded with the reason, and the holder is told.
func (s *Service) ForceRelease(ctx context.Context, id, reason string) (Lease, error) {
	if err := check.Text("id", id, 128, true); err != nil {
		return Lease{}, err
	}
	if err := check.Text("reason", reason, MaxReasonBytes, true); err != nil {
		return Lease{}, err
	}
	me, err := s.Caller(ctx)
	if err != nil {
		return Lease{}, err
	}
	l, ok, err := s.opts.Store.Get(ctx, id)
	if err != nil {
		return Lease{}, fmt.Errorf("force_release_reservation: %w", err)
	}
	if !ok || !l.Active(s.opts.Clock.Now()) {
		return Lease{}, core.NewError(CodeNotFound, fmt.Sprintf("id: no active reservation has id %q (it may have expired or been released); list_reservations shows the active ones", id)).
			WithDetail("id", id)
	}
	if live, st := s.Live(ctx, l.AgentID); live && l.AgentID != me {
		return Lease{}, core.NewError(CodeHolderLive, fmt.Sprintf("reservation %s is held by %s, which is %s: only a stale or offline holder's reservation can be forced; ask %s to release it, or wait until %s",
			id, l.AgentID, st, l.AgentID, check.Stamp(l.ExpiresAt))).WithDetail("holder", l.AgentID).WithDetail("presence", st)
	}
	ls, err := s.opts.Store.Release(ctx, "", []string{id}, me, reason, s.opts.Clock.Now())
	if err != nil {
		return Lease{}, fmt.Errorf("force_release_reservation: %w", err)
	}
	if len(ls) == 0 {
		return Lease{}, core.NewError(CodeNotFound, fmt.Sprintf("id: reservation %q ended while it was being forced", id))
	}
	if l.AgentID != me {
		s.tell(ctx, l.AgentID, "reservation force-released", map[string]any{"reservation": id, "pattern": l.Pattern,
			"releasedBy": me, "reason": reason})
	}
	return ls[0], nil
}

// List returns active leases (of agentID when not "", overlapping path
// when not ""), at most MaxListed, and how many match.
func (s *Service) List(ctx context.Context, agentID, path string) ([]Lease, int, error) {
	if err := check.Text("agentId", agentID, 256, false); err != nil {
		return nil, 0, err
	}
	now := s.opts.Clock.Now()
	if path == "" {
		ls, total, err := s.opts.Store.List(ctx, agentID, now, MaxListed)
		if err != nil {
			return nil, 0, fmt.Errorf("list_reservations: %w", err)
		}
		return ls, total, nil
	}
	pats, err := parseAll("path", []string{path})
	if err != nil {
		return nil, 0, err
	}
	cs, err := s.opts.Store.Overlapping(ctx, pats, "", now)
	if err != nil {
		return nil, 0, fmt.Errorf("list_reservations: %w", err)
	}
	var out []Lease
	for _, c := range cs {
		if agentID == "" || c.Lease.AgentID == agentID {
			out = append(out, c.Lease)
		}
	}
	return out[:min(len(out), MaxListed)], len(out), nil
}

// Check returns, for each path, the other agents' active leases that
// overlap it, of live holders only (a gone holder's leases do not block;
// the next reserve in their way releases them). It changes nothing.
func (s *Service) Check(ctx context.Context, paths []string) ([]Conflict, error) {
	pats, err := parseAll("paths", paths)
	if err != nil {
		return nil, err
	}
	me, err := s.Caller(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := s.opts.Store.Overlapping(ctx, pats, me, s.opts.Clock.Now())
	if err != nil {
		return nil, fmt.Errorf("check_reservations: %w", err)
	}
	live, _, err := s.dropGone(ctx, me, cs, false)
	return live, err
}

// Blocking returns the exclusive leases of live agents other than agentID
// ("" for none) that cover any of the normalised changed paths: the guard
// gate. It changes nothing.
func (s *Service) Blocking(ctx context.Context, agentID string, paths []string) ([]Conflict, error) {
	pats := make([]Pattern, len(paths))
	for i, p := range paths {
		pats[i] = LiteralPattern(p)
	}
	cs, err := s.opts.Store.Overlapping(ctx, pats, agentID, s.opts.Clock.Now())
	if err != nil {
		return nil, fmt.Errorf("checking reservations: %w", err)
	}
	var excl []Conflict
	for _, c := range cs {
		if c.Lease.Exclusive {
			c.Path = pathOf(c.Path)
			excl = append(excl, c)
		}
	}
	live, _, err := s.dropGone(ctx, agentID, excl, false)
	return live, err
}

// pathOf undoes EscapePath.
func pathOf(p string) string {
	b := make([]rune, 0, len(p))
	esc := false
	for _, r := range p {
		if r == '\\' && !esc {
			esc = true
			continue
		}
		esc = false
		b = append(b, r)
	}
	return string(b)
}

func checkIDs(ids []string) error {
	if len(ids) > MaxListed {
		return check.Invalid("ids", "has %d items; the limit is %d", len(ids), MaxListed)
	}
	for _, id := range ids {
		if err := check.Text("ids", id, 128, true); err != nil {
			return err
		}
	}
	return nil
}

// missing returns the ids not among ls; when none is, that is
// RESERVATION_NOT_FOUND.
func missing(ids []string, ls []Lease, me string) ([]string, error) {
	miss := []string{}
	for _, id := range ids {
		if !slices.ContainsFunc(ls, func(l Lease) bool { return l.ID == id }) {
			miss = append(miss, id)
		}
	}
	if len(miss) == 0 || len(ls) > 0 {
		return miss, nil
	}
	return nil, core.NewError(CodeNotFound, fmt.Sprintf("ids: %d of %d ids name no active reservation of %s (first %q): they expired, were released, or belong to another agent; list_reservations {agentId:%q} shows yours",
		len(miss), len(ids), me, miss[0], me)).WithDetail("missing", miss)
}
