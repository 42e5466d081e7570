package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/internal/check"
)

// The gates a policy can run.
const (
	// GatePathViolation checks every changed path against the allowed
	// and forbidden globs.
	GatePathViolation = "path_violation"
	// GateChangeRadius checks the number of distinct changed paths
	// against ChangeRadiusLimit.
	GateChangeRadius = "change_radius"
)

// Gates lists the known gates in the order Check runs them.
var Gates = []string{GatePathViolation, GateChangeRadius}

// Limits of a policy.
const (
	MaxPolicyIDBytes    = 64
	MaxDescriptionBytes = 1024
	MaxPatterns         = 256 // per list
	MaxPolicyFileBytes  = 1 << 20
	MaxPolicies         = 1000
)

// Policy is a set of rules for the paths an agent may change.
type Policy struct {
	// ID names the policy: 1 to 64 of A-Z a-z 0-9 . _ -.
	ID          string `json:"policyId"`
	Description string `json:"description,omitempty"`
	// AllowedPaths are globs; a changed path must match one. Empty means
	// every path is allowed.
	AllowedPaths []string `json:"allowedPaths"`
	// ForbiddenPaths are globs; a changed path must match none. They win
	// over AllowedPaths.
	ForbiddenPaths []string `json:"forbiddenPaths"`
	// Gates are the checks to run, from Gates.
	Gates []string `json:"gates"`
	// ChangeRadiusLimit is the most distinct paths one check may change
	// (GateChangeRadius); 0 means no limit.
	ChangeRadiusLimit int `json:"changeRadiusLimit"`
	// Source says where the policy came from: "builtin" or a file path.
	Source string `json:"-"`
}

// Builtin returns the policies that exist without a policies directory.
// A file in the directory with the same id replaces one of them.
func Builtin() []Policy {
	secrets := []string{"**/.git/**", "**/.env", "**/.env.*", "**/*.pem", "**/*.key", "**/id_rsa*", "**/id_ed25519*", "**/secrets/**"}
	return []Policy{
		{
			ID:                "default",
			Description:       "Any path in the workspace except version-control internals and secret files; at most 50 files per change.",
			AllowedPaths:      []string{"**"},
			ForbiddenPaths:    secrets,
			Gates:             []string{GatePathViolation, GateChangeRadius},
			ChangeRadiusLimit: 50,
			Source:            "builtin",
		},
		{
			ID:                "docs-only",
			Description:       "Documentation only: Markdown files and the docs/ tree; at most 20 files per change.",
			AllowedPaths:      []string{"**/*.md", "docs/**"},
			ForbiddenPaths:    secrets,
			Gates:             []string{GatePathViolation, GateChangeRadius},
			ChangeRadiusLimit: 20,
			Source:            "builtin",
		},
	}
}

// normalize checks p and returns it with its globs in canonical form.
// Errors are INVALID_ARGUMENT, or INVALID_PATH_PATTERN for a bad glob;
// their messages name the policy.
func (p Policy) normalize() (Policy, error) {
	if err := check.Text("policyId", p.ID, MaxPolicyIDBytes, true); err != nil {
		return Policy{}, err
	}
	for i := 0; i < len(p.ID); i++ {
		if c := p.ID[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return Policy{}, check.Invalid("policyId", "%q has %q; use only letters A-Z a-z, digits and . _ -", p.ID, rune(c))
		}
	}
	if err := check.Text("description", p.Description, MaxDescriptionBytes, false); err != nil {
		return Policy{}, err
	}
	var err error
	if p.AllowedPaths, err = normPatterns(p.ID, "allowedPaths", p.AllowedPaths); err != nil {
		return Policy{}, err
	}
	if p.ForbiddenPaths, err = normPatterns(p.ID, "forbiddenPaths", p.ForbiddenPaths); err != nil {
		return Policy{}, err
	}
	if len(p.Gates) == 0 {
		return Policy{}, check.Invalid("gates", "policy %q runs no gate; list at least one of %s", p.ID, strings.Join(Gates, ", "))
	}
	seen := map[string]bool{}
	for _, g := range p.Gates {
		if !slices.Contains(Gates, g) {
			return Policy{}, check.Invalid("gates", "policy %q has the unknown gate %q; known gates: %s", p.ID, g, strings.Join(Gates, ", "))
		}
		if seen[g] {
			return Policy{}, check.Invalid("gates", "policy %q lists the gate %q twice", p.ID, g)
		}
		seen[g] = true
	}
	if p.ChangeRadiusLimit < 0 {
		return Policy{}, check.Invalid("changeRadiusLimit", "policy %q has %d; give 0 (no limit) or more", p.ID, p.ChangeRadiusLimit)
	}
	if seen[GateChangeRadius] && p.ChangeRadiusLimit == 0 {
		return Policy{}, check.Invalid("changeRadiusLimit", "policy %q runs the change_radius gate without a limit; set changeRadiusLimit to 1 or more", p.ID)
	}
	return p, nil
}

func normPatterns(id, field string, in []string) ([]string, error) {
	if len(in) > MaxPatterns {
		return nil, check.Invalid(field, "policy %q has %d patterns; the limit is %d", id, len(in), MaxPatterns)
	}
	out := make([]string, 0, len(in))
	for _, pat := range in {
		n, err := NormalizePattern(pat)
		if err != nil {
			e := core.AsError(err)
			return nil, core.NewError(e.Code, fmt.Sprintf("policy %q, %s: %s", id, field, e.Message)).
				WithDetail("policyId", id).WithDetail("field", field).WithDetail("pattern", pat)
		}
		out = append(out, n)
	}
	return out, nil
}

// LoadDir reads every regular *.json file of dir (not its
// subdirectories), one policy per file, sorted by file name (see
// core.JSONFiles: a directory named *.json is skipped, a FIFO or other
// non-regular file is an error naming it). A missing directory holds no
// policies. Unknown members, bad globs (INVALID_PATH_PATTERN) and two
// files with one id are errors naming the file.
func LoadDir(dir string) ([]Policy, error) {
	names, err := core.JSONFiles(dir)
	if err != nil {
		return nil, err // names the directory or the file
	}
	if len(names) > MaxPolicies {
		return nil, core.Errorf(core.CodeResourceExhausted, "policies directory %q has %d policy files; the limit is %d", dir, len(names), MaxPolicies)
	}
	var out []Policy
	byID := map[string]string{}
	for _, name := range names {
		p, err := loadFile(name)
		if err != nil {
			return nil, err
		}
		if prev, ok := byID[p.ID]; ok {
			return nil, core.NewError(core.CodeInvalidArgument,
				fmt.Sprintf("policy file %s: policyId %q is also defined in %s; give each policy its own id", name, p.ID, prev)).
				WithDetail("file", name)
		}
		byID[p.ID] = name
		out = append(out, p)
	}
	return out, nil
}

func loadFile(name string) (Policy, error) {
	fail := func(err error) (Policy, error) {
		e := core.AsError(err)
		return Policy{}, core.NewError(e.Code, "policy file "+name+": "+e.Message).WithDetail("file", name)
	}
	data, err := core.ReadRegularFile(name, MaxPolicyFileBytes)
	if err != nil {
		return Policy{}, err // names the file
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Policy
	if err := dec.Decode(&p); err != nil {
		return fail(core.Errorf(core.CodeInvalidArgument,
			"is not a policy (%v); expected {policyId, description, allowedPaths, forbiddenPaths, gates, changeRadiusLimit}", err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fail(core.Errorf(core.CodeInvalidArgument, "holds more than one JSON value; put one policy per file"))
	}
	p.Source = name
	if p, err = p.normalize(); err != nil {
		return fail(err)
	}
	return p, nil
}
