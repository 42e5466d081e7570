package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/internal/check"
)

// Limits of profile files.
const (
	// MaxProfileBytes bounds one profile file.
	MaxProfileBytes = 256 << 10
	// MaxProfiles bounds the *.json files of an agents directory.
	MaxProfiles = 1000
	// MaxDelegationDepth bounds every depth limit, and the depth a run
	// may claim: no chain of delegations is longer.
	MaxDelegationDepth = 16
	// DefaultMaxDelegationDepth is the limit of a profile that sets none
	// (and of agents without a profile) unless configured otherwise.
	DefaultMaxDelegationDepth = 3
	// maxNesting bounds how deeply a profile file's JSON nests.
	maxNesting = 16
	// maxList bounds each list field; maxSteps the workflow steps.
	maxList, maxSteps = 64, 100
	// maxShort bounds names, ids and list items; maxLong descriptions.
	maxShort, maxLong = 128, 4096
)

// Step is one step of an agent's workflow, as its profile describes it.
type Step struct {
	StepID string `json:"stepId" jsonschema:"The step's id"`
	Name   string `json:"name" jsonschema:"What the step does"`
	Type   string `json:"type" jsonschema:"The kind of step (prompt, tool, delegate...)"`
}

// Orchestration is what a profile says about delegation.
type Orchestration struct {
	// MaxDelegationDepth is the deepest run of this agent allowed: a run
	// that took more delegations to reach the agent is refused. Nil means
	// the configured default.
	MaxDelegationDepth *int     `json:"maxDelegationDepth,omitempty" jsonschema:"The deepest delegation at which this agent may run (0 to 16)"`
	CanReadWorkspaces  []string `json:"canReadWorkspaces,omitempty" jsonschema:"Workspaces the agent may read"`
	CanWriteToShared   bool     `json:"canWriteToShared,omitempty" jsonschema:"Whether the agent may write to shared workspaces"`
}

// Profile is an agent's description, read from one *.json file of the
// agents directory. Only AgentID and Description are required; Enabled
// defaults to true.
type Profile struct {
	AgentID       string         `json:"agentId"`
	DisplayName   string         `json:"displayName,omitempty"`
	Version       string         `json:"version,omitempty"`
	Description   string         `json:"description"`
	Role          string         `json:"role,omitempty"`
	Expertise     []string       `json:"expertise,omitempty"`
	Capabilities  []string       `json:"capabilities,omitempty"`
	Team          string         `json:"team,omitempty"`
	Tags          []string       `json:"tags,omitempty"`
	Enabled       *bool          `json:"enabled,omitempty"`
	WorkflowID    string         `json:"workflowId,omitempty"`
	Workflow      []Step         `json:"workflow,omitempty"`
	Orchestration *Orchestration `json:"orchestration,omitempty"`
	// Source is the file the profile was read from (not part of the file).
	Source string `json:"-"`
}

// IsEnabled reports whether the profile enables its agent (true unless
// "enabled" is false).
func (p Profile) IsEnabled() bool { return p.Enabled == nil || *p.Enabled }

// DepthLimit is the profile's maxDelegationDepth, or def when it sets none.
func (p Profile) DepthLimit(def int) int {
	if p.Orchestration != nil && p.Orchestration.MaxDelegationDepth != nil {
		return *p.Orchestration.MaxDelegationDepth
	}
	return def
}

// LoadDir reads the profiles of dir: every regular *.json file directly in
// it (subdirectories and other files are ignored), sorted by agent id. A
// missing directory holds no profiles. Any file that cannot be read or is
// not a valid profile, and two files with one agent id, fail the whole
// load with an INVALID_ARGUMENT *core.Error naming the file and what was
// wrong: a server does not start on half its profiles.
func LoadDir(dir string) ([]Profile, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, core.Errorf(core.CodeInvalidArgument, "cannot read the agents directory %s: %v; make it a readable directory or point agent.dir elsewhere", dir, err)
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			files = append(files, e.Name())
		}
	}
	if len(files) > MaxProfiles {
		return nil, core.Errorf(core.CodeInvalidArgument, "the agents directory %s holds %d *.json files; the limit is %d profiles", dir, len(files), MaxProfiles)
	}
	byID := map[string]string{}
	out := make([]Profile, 0, len(files))
	for _, name := range files {
		path := filepath.Join(dir, name)
		p, err := LoadFile(path)
		if err != nil {
			return nil, err
		}
		if first, dup := byID[p.AgentID]; dup {
			return nil, core.Errorf(core.CodeInvalidArgument, "agent profile %s: agentId %q is already defined by %s; give each profile its own agentId", path, p.AgentID, first)
		}
		byID[p.AgentID] = path
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Profile) int { return strings.Compare(a.AgentID, b.AgentID) })
	return out, nil
}

// LoadFile reads and checks one profile file (see Profile and LoadDir).
func LoadFile(path string) (Profile, error) {
	bad := func(format string, args ...any) (Profile, error) {
		return Profile{}, core.Errorf(core.CodeInvalidArgument, "agent profile %s: "+format, append([]any{path}, args...)...)
	}
	// Stat before opening: opening a FIFO would wait for a writer.
	if st, err := os.Stat(path); err != nil {
		return bad("cannot stat it: %v", err)
	} else if !st.Mode().IsRegular() {
		return bad("is not a regular file (%s); a profile is a JSON file", st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return bad("cannot open it: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxProfileBytes+1))
	if err != nil {
		return bad("cannot read it: %v", err)
	}
	if len(data) > MaxProfileBytes {
		return bad("is larger than %d bytes; a profile must be smaller", MaxProfileBytes)
	}
	p, err := ParseProfile(data)
	if err != nil {
		return bad("%s", core.AsError(err).Message)
	}
	p.Source = path
	return p, nil
}

// ParseProfile decodes and checks one profile's JSON: one object, nesting
// at most 16 deep, no unknown field, and valid values (see Check).
func ParseProfile(data []byte) (Profile, error) {
	if d := check.Depth(data, maxNesting); d > maxNesting {
		return Profile{}, core.Errorf(core.CodeInvalidArgument, "nests arrays and objects more than %d deep; a profile is a flat object", maxNesting)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return Profile{}, core.Errorf(core.CodeInvalidArgument, "is not a valid profile object: %v; see the Agents section of the README for the fields", err)
	}
	if dec.More() {
		return Profile{}, core.NewError(core.CodeInvalidArgument, "holds more than one JSON value; a file holds exactly one profile object")
	}
	if err := Check(p); err != nil {
		return Profile{}, err
	}
	return p, nil
}

// Check checks a profile's values: agentId an agent id usable over
// messaging (1 to 64 ASCII letters, digits, '.', '_', '-'), a non-empty
// description, bounded texts and lists without control characters, and a
// maxDelegationDepth from 0 to MaxDelegationDepth.
func Check(p Profile) error {
	if p.AgentID == "" {
		return check.Invalid("agentId", "is missing or empty; give the agent's id")
	}
	if err := envelope.CheckAgentID(p.AgentID); err != nil {
		return check.Invalid("agentId", "%s", err.Message)
	}
	for _, f := range []struct {
		name, value string
		max         int
		required    bool
	}{
		{"displayName", p.DisplayName, maxShort, false}, {"version", p.Version, maxShort, false},
		{"description", p.Description, maxLong, true}, {"role", p.Role, maxLong, false},
		{"team", p.Team, maxShort, false}, {"workflowId", p.WorkflowID, maxShort, false},
	} {
		if err := check.Text(f.name, f.value, f.max, f.required); err != nil {
			return err
		}
	}
	lists := []struct {
		name  string
		items []string
	}{{"expertise", p.Expertise}, {"capabilities", p.Capabilities}, {"tags", p.Tags}}
	if p.Orchestration != nil {
		lists = append(lists, struct {
			name  string
			items []string
		}{"orchestration.canReadWorkspaces", p.Orchestration.CanReadWorkspaces})
	}
	for _, l := range lists {
		if err := checkList(l.name, l.items, maxList); err != nil {
			return err
		}
	}
	if len(p.Workflow) > maxSteps {
		return check.Invalid("workflow", "has %d steps; the limit is %d", len(p.Workflow), maxSteps)
	}
	for i, s := range p.Workflow {
		for _, f := range []struct{ name, value string }{{"stepId", s.StepID}, {"name", s.Name}, {"type", s.Type}} {
			if err := check.Text(fmt.Sprintf("workflow[%d].%s", i, f.name), f.value, maxShort, true); err != nil {
				return err
			}
		}
	}
	if o := p.Orchestration; o != nil && o.MaxDelegationDepth != nil {
		if d := *o.MaxDelegationDepth; d < 0 || d > MaxDelegationDepth {
			return check.Invalid("orchestration.maxDelegationDepth", "is %d; give a number from 0 to %d", d, MaxDelegationDepth)
		}
	}
	return nil
}

// checkList checks a list of short, non-empty texts.
func checkList(field string, items []string, max int) error {
	if len(items) > max {
		return check.Invalid(field, "has %d items; the limit is %d", len(items), max)
	}
	for i, s := range items {
		if err := check.Text(fmt.Sprintf("%s[%d]", field, i), s, maxShort, true); err != nil {
			return err
		}
	}
	return nil
}
