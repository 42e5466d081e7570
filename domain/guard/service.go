package guard

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/internal/check"
	"github.com/mcprt/mcprt/domain/session"
)

// The domain error codes of guard.
const (
	// CodePolicyNotFound: no policy has the given id.
	CodePolicyNotFound core.Code = "POLICY_NOT_FOUND"
	// CodePolicyAlreadyApplied: the policy is already applied to the
	// session.
	CodePolicyAlreadyApplied = session.CodePolicyAlreadyApplied
)

// DefaultListLimit and MaxListLimit bound List.
const DefaultListLimit, MaxListLimit = 20, MaxPolicies

// Service is the guard domain: a registry of policies (built-in ones plus
// a policies directory), checks of changed paths, and applying policies to
// sessions. It is safe for concurrent use.
type Service struct {
	dir      string
	sessions *session.Service
	root     string // the workspace root on disk; set before use (SetWorkspaceRoot)

	gate ReservationGate // set before serving

	mu       sync.RWMutex
	policies map[string]Policy // by id; guarded by mu
}

// NewService loads the built-in policies and those of dir ("" for none;
// a missing directory holds none) and returns the Service. sessions may be
// nil when policies are never applied to sessions (Apply and Check with a
// session id then fail).
func NewService(dir string, sessions *session.Service) (*Service, error) {
	s := &Service{dir: dir, sessions: sessions}
	if err := s.Reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// Reload rereads the policies directory. On error the loaded policies stay
// as they were.
func (s *Service) Reload() error {
	m := map[string]Policy{}
	for _, p := range Builtin() {
		n, err := p.normalize()
		if err != nil {
			return core.Errorf(core.CodeInternal, "built-in policy %q: %w", p.ID, err)
		}
		m[n.ID] = n
	}
	if s.dir != "" {
		files, err := LoadDir(s.dir)
		if err != nil {
			return err
		}
		for _, p := range files {
			m[p.ID] = p
		}
	}
	s.mu.Lock()
	s.policies = m
	s.mu.Unlock()
	return nil
}

// Add registers p (replacing a policy with its id) after checking it: a
// bad glob is INVALID_PATH_PATTERN. It is for embedding programs; a Reload
// drops policies added this way.
func (s *Service) Add(p Policy) error {
	if p.Source == "" {
		p.Source = "api"
	}
	n, err := p.normalize()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.policies) >= MaxPolicies {
		if _, ok := s.policies[n.ID]; !ok {
			return core.Errorf(core.CodeResourceExhausted, "there are already %d policies, the limit", MaxPolicies)
		}
	}
	s.policies[n.ID] = n
	return nil
}

// List returns at most limit policies (0 means DefaultListLimit) sorted by
// id, and how many there are.
func (s *Service) List(ctx context.Context, limit int) ([]Policy, int, error) {
	limit, err := check.Limit("limit", limit, DefaultListLimit, MaxListLimit)
	if err != nil {
		return nil, 0, err
	}
	s.mu.RLock()
	all := make([]Policy, 0, len(s.policies))
	for _, p := range s.policies {
		all = append(all, p)
	}
	s.mu.RUnlock()
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all[:min(limit, len(all))], len(all), nil
}

// Policy returns the policy with the given id, or POLICY_NOT_FOUND.
func (s *Service) Policy(id string) (Policy, error) {
	if err := check.Text("policyId", id, MaxPolicyIDBytes, true); err != nil {
		return Policy{}, err
	}
	s.mu.RLock()
	p, ok := s.policies[id]
	ids := make([]string, 0, len(s.policies))
	if !ok {
		for k := range s.policies {
			ids = append(ids, k)
		}
	}
	s.mu.RUnlock()
	if !ok {
		slices.Sort(ids)
		if len(ids) > 20 {
			ids = append(ids[:20], "…")
		}
		return Policy{}, core.NewError(CodePolicyNotFound,
			fmt.Sprintf("no policy has id %q; known policies: %s (guard_list shows them)", id, strings.Join(ids, ", "))).
			WithDetail("policyId", id)
	}
	return p, nil
}

// ReservationGate returns a violation for each normalised changed path
// that another live agent has reserved exclusively (the guard_check
// gate "reservation"). The program that owns the reservations and the
// caller's identity supplies it.
type ReservationGate func(ctx context.Context, paths []string) ([]Violation, error)

// SetReservationGate sets the gate Check runs after the policies' gates
// (nil: none). Call it before serving.
func (s *Service) SetReservationGate(g ReservationGate) { s.gate = g }

// Check runs the gates of the policies that apply over the changed paths
// (see Check), then the reservation gate when one is set. The policies
// that apply are policyID when given and, with a sessionID, every policy
// applied to that session (guard_apply), in the order applied; with
// neither, the "default" policy. The session must exist.
func (s *Service) Check(ctx context.Context, policyID string, changedPaths []string, sessionID string) (Result, error) {
	return s.CheckGated(ctx, policyID, changedPaths, sessionID, s.gate)
}

// CheckGated is Check with the reservation gate g (nil: none) in place of
// the one set.
func (s *Service) CheckGated(ctx context.Context, policyID string, changedPaths []string, sessionID string, g ReservationGate) (Result, error) {
	var ids []string
	if policyID != "" {
		if _, err := s.Policy(policyID); err != nil {
			return Result{}, err
		}
		ids = append(ids, policyID)
	}
	if sessionID != "" {
		if s.sessions == nil {
			return Result{}, core.NewError(core.CodeNotImplemented, "sessionId: this server has no session store; check without a session")
		}
		sess, err := s.sessions.Get(ctx, sessionID)
		if err != nil {
			return Result{}, err
		}
		for _, p := range sess.Policies {
			if !slices.Contains(ids, p.PolicyID) {
				ids = append(ids, p.PolicyID)
			}
		}
	}
	if len(ids) == 0 {
		ids = []string{DefaultPolicyID}
	}
	paths, err := NormalizePaths(changedPaths)
	if err != nil {
		return Result{}, err
	}
	res := Result{Passed: true, PolicyID: ids[0], PolicyIDs: ids, Paths: paths, Gates: []GateResult{}}
	for _, id := range ids {
		p, err := s.Policy(id)
		if err != nil {
			return Result{}, core.AsError(err).WithDetail("sessionId", sessionID)
		}
		r, err := CheckIn(p, s.root, paths)
		if err != nil {
			return Result{}, err
		}
		for _, gr := range r.Gates {
			gr.PolicyID = id
			res.Gates = append(res.Gates, gr)
			res.Passed = res.Passed && gr.Passed
		}
	}
	if g != nil {
		vs, err := g(ctx, paths)
		if err != nil {
			return Result{}, fmt.Errorf("guard: reservation gate: %w", err)
		}
		if vs == nil {
			vs = []Violation{}
		}
		res.Gates = append(res.Gates, GateResult{Gate: GateReservation, Passed: len(vs) == 0, Violations: vs})
		res.Passed = res.Passed && len(vs) == 0
	}
	res.Summary = summary(res)
	return res, nil
}

// Apply applies an existing policy to an active session:
// POLICY_NOT_FOUND, SESSION_NOT_FOUND, SESSION_ALREADY_COMPLETED or
// POLICY_ALREADY_APPLIED otherwise.
func (s *Service) Apply(ctx context.Context, sessionID, policyID string) (session.Session, error) {
	if _, err := s.Policy(policyID); err != nil {
		return session.Session{}, err
	}
	if s.sessions == nil {
		return session.Session{}, core.NewError(core.CodeNotImplemented, "this server has no session store, so policies cannot be applied to sessions")
	}
	return s.sessions.ApplyPolicy(ctx, sessionID, policyID)
}
