package guard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcprt/mcprt/core"
)

// MaxChangedPaths bounds the paths of one check.
const MaxChangedPaths = 1000

// The kinds of violation.
const (
	ViolationPathNotAllowed       = "path_not_allowed"
	ViolationPathForbidden        = "path_forbidden"
	ViolationChangeRadiusExceeded = "change_radius_exceeded"
	// ViolationPathReserved: another live agent holds an exclusive
	// reservation on the path.
	ViolationPathReserved = "path_reserved"
)

// GateReservation is the gate Service.Check adds when a reservation gate
// is set: changed paths reserved exclusively by another live agent.
const GateReservation = "reservation"

// DefaultPolicyID is the policy a check with neither a policy nor a
// session's policies runs.
const DefaultPolicyID = "default"

// Violation is one broken rule.
type Violation struct {
	Type    string
	Path    string // the normalised path; "" for change_radius_exceeded
	Message string
}

// GateResult is the outcome of one gate.
type GateResult struct {
	Gate string
	// PolicyID is the policy whose gate this is ("" for the reservation
	// gate).
	PolicyID   string
	Passed     bool
	Violations []Violation
}

// Result is the outcome of checking changed paths against a policy.
type Result struct {
	Passed   bool
	PolicyID string
	// PolicyIDs are every policy checked, PolicyID first.
	PolicyIDs []string
	// Paths are the distinct normalised paths, sorted.
	Paths []string
	Gates []GateResult
	// Summary is one sentence for people.
	Summary string
}

// NormalizePaths normalises every path (see NormalizePath) and removes
// duplicates (two spellings of one path count once). If any path is bad,
// the INVALID_ARGUMENT error lists every bad one in details.invalidPaths.
func NormalizePaths(paths []string) ([]string, error) {
	if len(paths) > MaxChangedPaths {
		return nil, core.NewError(core.CodeInvalidArgument,
			fmt.Sprintf("changedPaths has %d items; the limit is %d: check the change in parts", len(paths), MaxChangedPaths)).
			WithDetail("limit", MaxChangedPaths)
	}
	type bad struct {
		Index   int    `json:"index"`
		Path    string `json:"path"`
		Message string `json:"message"`
	}
	var bads []bad
	out := make([]string, 0, len(paths))
	for i, p := range paths {
		n, err := NormalizePath(p)
		if err != nil {
			bads = append(bads, bad{Index: i, Path: p, Message: core.AsError(err).Message})
			continue
		}
		out = append(out, n)
	}
	if len(bads) > 0 {
		return nil, core.NewError(core.CodeInvalidArgument,
			fmt.Sprintf("changedPaths: %d of %d paths are not relative paths inside the workspace (first: %s); nothing was checked", len(bads), len(paths), bads[0].Message)).
			WithDetail("field", "changedPaths").WithDetail("invalidPaths", bads)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Check runs p's gates over the changed paths and reports every
// violation. Paths are normalised first (see NormalizePaths). p must be
// normalised (as Registry policies are). Paths are judged as spelled; see
// CheckIn for a workspace on disk.
func Check(p Policy, changedPaths []string) (Result, error) { return CheckIn(p, "", changedPaths) }

// CheckIn is Check with the workspace root on disk ("" for none): a path
// that goes through a symbolic link is also judged at its real location
// (see pathViolations).
func CheckIn(p Policy, root string, changedPaths []string) (Result, error) {
	paths, err := NormalizePaths(changedPaths)
	if err != nil {
		return Result{}, err
	}
	res := Result{Passed: true, PolicyID: p.ID, PolicyIDs: []string{p.ID}, Paths: paths, Gates: []GateResult{}}
	for _, g := range Gates {
		if !slices.Contains(p.Gates, g) {
			continue
		}
		gr := GateResult{Gate: g, PolicyID: p.ID, Violations: []Violation{}}
		switch g {
		case GatePathViolation:
			gr.Violations = pathViolations(p, openWorkspace(root), paths)
		case GateChangeRadius:
			if len(paths) > p.ChangeRadiusLimit {
				gr.Violations = append(gr.Violations, Violation{
					Type:    ViolationChangeRadiusExceeded,
					Message: fmt.Sprintf("the change touches %d distinct paths; policy %q allows at most %d: split it into smaller changes", len(paths), p.ID, p.ChangeRadiusLimit),
				})
			}
		}
		gr.Passed = len(gr.Violations) == 0
		res.Passed = res.Passed && gr.Passed
		res.Gates = append(res.Gates, gr)
	}
	res.Summary = summary(res)
	return res, nil
}

func summary(r Result) string {
	n := 0
	var failed []string
	for _, g := range r.Gates {
		n += len(g.Violations)
		if !g.Passed {
			failed = append(failed, g.Gate)
		}
	}
	what := fmt.Sprintf("policy %q", r.PolicyID)
	if len(r.PolicyIDs) > 1 {
		what = fmt.Sprintf("policies %q", strings.Join(r.PolicyIDs, ", "))
	}
	if r.Passed {
		return fmt.Sprintf("%s passed: %d path(s), %d gate(s), no violations", what, len(r.Paths), len(r.Gates))
	}
	return fmt.Sprintf("%s failed: %d violation(s) in gate(s) %s over %d path(s)", what, n, strings.Join(slices.Compact(failed), ", "), len(r.Paths))
}
