package workflow

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/internal/check"
)

// Limits of a definition.
const (
	// MaxDefinitionBytes bounds a definition file.
	MaxDefinitionBytes = 256 << 10
	// MaxDepth bounds the nesting of arrays and objects in a definition.
	MaxDepth = 32
	// MaxWorkflows bounds the files of a workflows directory.
	MaxWorkflows = 1000
	// MaxInputBytes bounds a run's input as compact JSON.
	MaxInputBytes = 1 << 20
)

// Statuses of a definition.
const (
	StatusActive   = "active"
	StatusInactive = "inactive"
	StatusDraft    = "draft"
)

// Failure policies of a step.
const (
	OnFailureStop     = "stop"
	OnFailureContinue = "continue"
)

// Defaults of a step.
const (
	DefaultStepTimeoutMs = 30000
	DefaultBackoffMs     = 100
	// MaxBackoff caps the doubled wait between retries.
	MaxBackoffMs = 60000
)

// SourceBundled is the Source of the workflows built into mcprt.
const SourceBundled = "bundled"

// Definition is a workflow as its JSON file defines it (see SchemaJSON).
// A Definition returned by this package has been validated and is never
// modified: share it freely.
type Definition struct {
	Schema      string          `json:"$schema,omitempty"`
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Version     string          `json:"version,omitempty"`
	Description string          `json:"description,omitempty"`
	Status      string          `json:"status,omitempty"`
	TimeoutMs   int             `json:"timeoutMs,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	Output      json.RawMessage `json:"output,omitempty"`
	Steps       []Step          `json:"steps"`
	// Source says where the definition came from: SourceBundled or the
	// path of its file.
	Source string `json:"-"`

	input  *schema // the compiled InputSchema, nil without one
	output any     // the compiled Output template, nil without one
}

// Step is one step of a workflow: it calls the tool Tool or runs the agent
// Agent (exactly one of them) with Input rendered from its templates.
type Step struct {
	ID          string          `json:"id"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Tool        string          `json:"tool,omitempty"`
	Agent       string          `json:"agent,omitempty"`
	Input       json.RawMessage `json:"input,omitempty"`
	TimeoutMs   int             `json:"timeoutMs,omitempty"`
	Retries     int             `json:"retries,omitempty"`
	BackoffMs   *int            `json:"backoffMs,omitempty"`
	OnFailure   string          `json:"onFailure,omitempty"`

	input any // the compiled Input template
}

// Type returns "tool" or "agent".
func (s *Step) Type() string {
	if s.Agent != "" {
		return "agent"
	}
	return "tool"
}

// Target returns the tool's name or the agent's id.
func (s *Step) Target() string {
	if s.Agent != "" {
		return s.Agent
	}
	return s.Tool
}

// Parse reads one definition: JSON of at most MaxDefinitionBytes, nesting
// at most MaxDepth, valid against SchemaJSON, with unique step ids,
// well-formed templates that refer only to the input and to earlier steps,
// and an inputSchema that compiles. source names it in errors and becomes
// its Source. Errors are INVALID_ARGUMENT *core.Error values saying what
// was wrong and what would be right.
func Parse(data []byte, source string) (*Definition, error) {
	fail := func(format string, args ...any) (*Definition, error) {
		return nil, core.NewError(core.CodeInvalidArgument, "workflow "+source+": "+fmt.Sprintf(format, args...)).
			WithDetail("source", source)
	}
	if len(data) > MaxDefinitionBytes {
		return fail("is %d bytes; the limit is %d bytes", len(data), MaxDefinitionBytes)
	}
	if d := check.Depth(data, MaxDepth); d > MaxDepth {
		return fail("nests arrays and objects more than %d deep; the limit is %d", MaxDepth, MaxDepth)
	}
	sch, err := definitionSchema()
	if err != nil {
		return nil, fmt.Errorf("workflow: the definition schema: %w", err) // a bug: the schema is embedded
	}
	doc, err := sch.decode(data) // exact: unique member names, valid UTF-8, one value
	if err != nil {
		return fail("is not valid JSON: %v", err)
	}
	if p := sch.problems(doc); p != nil {
		return fail("does not match the workflow schema (docs/workflow.schema.json): %s", joinProblems(p))
	}
	var d Definition
	if err := json.Unmarshal(data, &d); err != nil {
		return fail("cannot be read: %v", err)
	}
	d.Source = source
	if d.Version == "" {
		d.Version = "1.0.0"
	}
	if d.Status == "" {
		d.Status = StatusActive
	}
	if err := d.compile(); err != nil {
		return fail("%v", err)
	}
	return &d, nil
}

// compile checks what the schema cannot and compiles the templates and the
// input schema.
func (d *Definition) compile() error {
	seen := map[string]int{}
	for i := range d.Steps {
		s := &d.Steps[i]
		where := "steps[" + strconv.Itoa(i) + "] (" + s.ID + ")"
		if j, dup := seen[s.ID]; dup {
			return fmt.Errorf("%s: the step id %q is also used by steps[%d]; give each step its own id", where, s.ID, j)
		}
		if s.OnFailure == "" {
			s.OnFailure = OnFailureStop
		}
		var refs []*ref
		var in any = map[string]any{}
		if len(s.Input) > 0 {
			if err := decodeJSON(s.Input, &in); err != nil {
				return fmt.Errorf("%s.input: %v", where, err)
			}
		}
		var err error
		if s.input, err = compileTemplate(in, where+".input", &refs); err != nil {
			return err
		}
		for _, r := range refs {
			if r.step == "" {
				continue
			}
			if _, ok := seen[r.step]; !ok {
				return fmt.Errorf("%s.input: %s refers to step %q, which is not an earlier step of this workflow; "+
					"a step can use the outputs of the steps before it", where, r.text, r.step)
			}
		}
		seen[s.ID] = i
	}
	if len(d.Output) > 0 {
		var out any
		if err := decodeJSON(d.Output, &out); err != nil {
			return fmt.Errorf("output: %v", err)
		}
		var refs []*ref
		var err error
		if d.output, err = compileTemplate(out, "output", &refs); err != nil {
			return err
		}
		for _, r := range refs {
			if _, ok := seen[r.step]; r.step != "" && !ok {
				return fmt.Errorf("output: %s refers to step %q, which this workflow does not have", r.text, r.step)
			}
		}
	}
	if len(d.InputSchema) > 0 {
		s, err := compileSchema(d.InputSchema)
		if err != nil {
			return fmt.Errorf("inputSchema: %v", err)
		}
		d.input = s
	}
	return nil
}

//go:embed bundled/*.json
var bundledFS embed.FS

// Bundled returns the workflows built into mcprt (remember-and-recall and
// check-change), sorted by id.
func Bundled() ([]*Definition, error) {
	names, err := bundledFS.ReadDir("bundled")
	if err != nil {
		return nil, fmt.Errorf("workflow: the bundled workflows: %w", err)
	}
	var out []*Definition
	for _, n := range names {
		data, err := bundledFS.ReadFile("bundled/" + n.Name())
		if err != nil {
			return nil, fmt.Errorf("workflow: bundled workflow %s: %w", n.Name(), err)
		}
		d, err := Parse(data, "bundled/"+n.Name())
		if err != nil {
			return nil, fmt.Errorf("workflow: bundled workflow %s: %w", n.Name(), err)
		}
		d.Source = SourceBundled
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// LoadDir reads every regular *.json file of dir (not its
// subdirectories), one definition per file, sorted by file name (see
// core.JSONFiles: a directory named *.json is skipped, a FIFO or other
// non-regular file is an error naming it). A missing directory holds no
// workflows. Two files with one id are an error naming both.
func LoadDir(dir string) ([]*Definition, error) {
	names, err := core.JSONFiles(dir)
	if err != nil {
		return nil, err // names the directory or the file
	}
	if len(names) > MaxWorkflows {
		return nil, core.Errorf(core.CodeResourceExhausted, "workflows directory %q has %d files; the limit is %d", dir, len(names), MaxWorkflows)
	}
	var out []*Definition
	byID := map[string]string{}
	for _, name := range names {
		d, err := loadFile(name)
		if err != nil {
			return nil, err
		}
		if prev, ok := byID[d.ID]; ok {
			return nil, core.NewError(core.CodeInvalidArgument, fmt.Sprintf(
				"workflow %s: id %q is also defined in %s; give each workflow its own id", name, d.ID, prev)).WithDetail("source", name)
		}
		byID[d.ID] = name
		out = append(out, d)
	}
	return out, nil
}

func loadFile(name string) (*Definition, error) {
	data, err := core.ReadRegularFile(name, MaxDefinitionBytes+1)
	if err != nil {
		return nil, core.NewError(core.CodeInvalidArgument, "workflow "+core.AsError(err).Message).WithDetail("source", name)
	}
	return Parse(data, name)
}

// Load returns the bundled workflows and those of dir (see LoadDir); a file
// whose id is a bundled workflow's replaces it.
func Load(dir string) ([]*Definition, error) {
	defs, err := Bundled()
	if err != nil {
		return nil, err
	}
	own, err := LoadDir(dir)
	if err != nil {
		return nil, err
	}
	byID := map[string]int{}
	for i, d := range defs {
		byID[d.ID] = i
	}
	for _, d := range own {
		if i, ok := byID[d.ID]; ok {
			defs[i] = d
			continue
		}
		defs = append(defs, d)
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].ID < defs[j].ID })
	return defs, nil
}

// decodeJSON decodes data into v keeping numbers exact (json.Number).
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}
