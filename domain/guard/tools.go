package guard

import (
	"context"
	"fmt"

	"github.com/mcprt/mcprt/domain/toolspec"
)

// Tools holds the typed handlers of the guard_* MCP tools, each a
// func(ctx, In) (Out, error) ready for mcp.AddTypedTool. Errors are
// *core.Error values.
type Tools struct{ svc *Service }

// NewTools returns the tool handlers over svc.
func NewTools(svc *Service) *Tools { return &Tools{svc: svc} }

// ToolSpecs returns the names, descriptions and annotations of the guard
// tools.
func ToolSpecs() []toolspec.Spec {
	return []toolspec.Spec{
		{Name: "guard_list", Title: "List guard policies", Description: "List the guard policies: allowed and forbidden path globs, gates, change-radius limit.",
			ReadOnly: true, Idempotent: true},
		{Name: "guard_check", Title: "Check changed paths", Description: "Check changed paths against a policy, the policies applied to sessionId, and other live agents' exclusive reservations; report every violation.",
			ReadOnly: true, Idempotent: true},
		{Name: "guard_apply", Title: "Apply a policy to a session", Description: "Apply a guard policy to an active session.",
			Idempotent: true}, // additive; a repeat changes nothing (POLICY_ALREADY_APPLIED)
	}
}

// ListInput is the input of guard_list.
type ListInput struct {
	Limit int `json:"limit,omitempty" jsonschema:"1-1000, default 20"`
}

// PolicyOutput is one policy of guard_list.
type PolicyOutput struct {
	PolicyID          string   `json:"policyId" jsonschema:"The policy's id"`
	Description       string   `json:"description,omitempty" jsonschema:"What the policy is for"`
	AllowedPaths      []string `json:"allowedPaths" jsonschema:"Globs a changed path must match one of (empty: any path)"`
	ForbiddenPaths    []string `json:"forbiddenPaths" jsonschema:"Globs a changed path must match none of"`
	Gates             []string `json:"gates" jsonschema:"Gates the policy runs: path_violation, change_radius"`
	ChangeRadiusLimit int      `json:"changeRadiusLimit" jsonschema:"Most distinct paths one change may touch (0: no limit)"`
	Source            string   `json:"source" jsonschema:"Where the policy comes from: builtin, api or its file"`
}

// ListOutput is the result of guard_list.
type ListOutput struct {
	Policies []PolicyOutput `json:"policies" jsonschema:"Policies sorted by id"`
	Total    int            `json:"total" jsonschema:"Number of policies, listed or not"`
}

// List is the guard_list handler.
func (t *Tools) List(ctx context.Context, in ListInput) (ListOutput, error) {
	ps, total, err := t.svc.List(ctx, in.Limit)
	if err != nil {
		return ListOutput{}, err
	}
	out := ListOutput{Policies: make([]PolicyOutput, len(ps)), Total: total}
	for i, p := range ps {
		out.Policies[i] = PolicyOutput{PolicyID: p.ID, Description: p.Description, AllowedPaths: nonNil(p.AllowedPaths),
			ForbiddenPaths: nonNil(p.ForbiddenPaths), Gates: nonNil(p.Gates), ChangeRadiusLimit: p.ChangeRadiusLimit, Source: p.Source}
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// CheckInput is the input of guard_check.
type CheckInput struct {
	PolicyID     string   `json:"policyId,omitempty" jsonschema:"Default: default, or the session's policies"`
	ChangedPaths []string `json:"changedPaths" jsonschema:"Relative to the workspace root (at most 1000)"`
	SessionID    string   `json:"sessionId,omitempty" jsonschema:"Also apply this session's policies"`
}

// ViolationOutput is one violation in guard_check.
type ViolationOutput struct {
	Type    string `json:"type" jsonschema:"path_not_allowed, path_forbidden, change_radius_exceeded or path_reserved"`
	Path    string `json:"path" jsonschema:"The normalised path (empty for change_radius_exceeded)"`
	Message string `json:"message" jsonschema:"What was wrong, for people"`
}

// GateOutput is one gate's result in guard_check.
type GateOutput struct {
	Gate       string            `json:"gate" jsonschema:"The gate: path_violation, change_radius or reservation"`
	PolicyID   string            `json:"policyId,omitempty" jsonschema:"The policy of the gate (none for reservation)"`
	Passed     bool              `json:"passed" jsonschema:"Whether the gate found no violation"`
	Violations []ViolationOutput `json:"violations" jsonschema:"Every violation the gate found"`
}

// CheckOutput is the result of guard_check.
type CheckOutput struct {
	Passed       bool         `json:"passed" jsonschema:"Whether every gate passed"`
	PolicyID     string       `json:"policyId" jsonschema:"The first policy evaluated"`
	PolicyIDs    []string     `json:"policyIds" jsonschema:"Every policy evaluated"`
	SessionID    string       `json:"sessionId,omitempty" jsonschema:"The session given, if any"`
	CheckedPaths []string     `json:"checkedPaths" jsonschema:"The distinct normalised paths that were checked"`
	GateResults  []GateOutput `json:"gateResults" jsonschema:"One result per gate the policy runs"`
	Summary      string       `json:"summary" jsonschema:"One sentence for people"`
}

// Check is the guard_check handler. A failed check is a normal result
// with passed=false; only bad input is an error.
func (t *Tools) Check(ctx context.Context, in CheckInput) (CheckOutput, error) {
	res, err := t.svc.Check(ctx, in.PolicyID, in.ChangedPaths, in.SessionID)
	if err != nil {
		return CheckOutput{}, err
	}
	out := CheckOutput{Passed: res.Passed, PolicyID: res.PolicyID, PolicyIDs: res.PolicyIDs, SessionID: in.SessionID, CheckedPaths: res.Paths,
		GateResults: make([]GateOutput, len(res.Gates)), Summary: res.Summary}
	for i, g := range res.Gates {
		vs := make([]ViolationOutput, len(g.Violations))
		for j, v := range g.Violations {
			vs[j] = ViolationOutput(v)
		}
		out.GateResults[i] = GateOutput{Gate: g.Gate, PolicyID: g.PolicyID, Passed: g.Passed, Violations: vs}
	}
	return out, nil
}

// ApplyInput is the input of guard_apply.
type ApplyInput struct {
	SessionID string `json:"sessionId"`
	PolicyID  string `json:"policyId"`
}

// ApplyOutput is the result of guard_apply.
type ApplyOutput struct {
	Applied   bool   `json:"applied" jsonschema:"Always true: failures are tool errors"`
	SessionID string `json:"sessionId" jsonschema:"The session"`
	PolicyID  string `json:"policyId" jsonschema:"The policy"`
	Message   string `json:"message" jsonschema:"What happened, for people"`
}

// Apply is the guard_apply handler.
func (t *Tools) Apply(ctx context.Context, in ApplyInput) (ApplyOutput, error) {
	s, err := t.svc.Apply(ctx, in.SessionID, in.PolicyID)
	if err != nil {
		return ApplyOutput{}, err
	}
	return ApplyOutput{Applied: true, SessionID: s.ID, PolicyID: in.PolicyID,
		Message: fmt.Sprintf("policy %q applies to session %s (%d policies in all)", in.PolicyID, s.ID, len(s.Policies))}, nil
}
