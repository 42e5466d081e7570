package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcprt/mcprt/internal/jsontext"
	"reflect"
	"time"

	"github.com/mcprt/mcprt/core"
)

// ToolHandler handles a tools/call. req.Arguments is the call's arguments
// object exactly as validated. The handler returns a result, one of:
//   - a *CallToolResult, sent as is (text, image, audio, resource_link and
//     embedded resource blocks pass through);
//   - a string, sent as one text block holding that text;
//   - any other value JSON can encode, wrapped as a text block holding its
//     JSON (plus structuredContent when it is an object and the client's
//     revision has it);
//
// or an error: a *core.Error keeps its code (domain codes included) and
// its retryable flag, any other error becomes INTERNAL, not retryable.
//
// ctx carries the call's runId, correlationId and a scoped logger (see
// RunID, CorrelationID, Logger) and is cancelled at the tool's deadline
// (context.Cause is ErrTimeout), when the client cancels the call
// (ErrCancelled), or when the session closes (ErrSessionClosed). A timeout
// is a response deadline, not a kill: the client gets TIMEOUT at once, and a
// handler that ignores ctx keeps its concurrency slot until it returns.
type ToolHandler func(ctx context.Context, req *CallToolRequest) (any, error)

// ToolAnnotations are hints about a tool's behaviour (MCP 2025-03-26+).
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Bool returns a pointer to b, for annotation fields.
func Bool(b bool) *bool { return &b }

// Tool is a tool definition.
type Tool struct {
	// Name is 1–128 characters of A-Z a-z 0-9 _ - . and unique.
	Name string
	// Title is a human-readable name (listed from 2025-06-18).
	Title string
	// Description tells a model what the tool does.
	Description string
	// InputSchema is a JSON Schema with an object root. Nil means
	// {"type":"object"} (any arguments object).
	InputSchema json.RawMessage
	// OutputSchema, if set, is a JSON Schema with an object root that every
	// result must satisfy.
	OutputSchema json.RawMessage
	// HideOutputSchema keeps OutputSchema out of tools/list: results are
	// still checked against it, but a client (and the model reading the
	// list) does not see it. Large result schemas cost a model's context
	// and do not help it call the tool.
	HideOutputSchema bool
	// Annotations are optional behaviour hints.
	Annotations *ToolAnnotations
	// Version is an optional version string, listed as version.
	Version string
	// Timeout is the call deadline; zero means tools.defaultTimeoutMs.
	Timeout time.Duration
	// TaskSupport says whether the tool's calls may become tasks of the
	// tasks extension (stateless revision; see StartTask). The zero value
	// is TaskForbidden.
	TaskSupport TaskSupport
	// Exclusive serialises calls of this tool (one at a time).
	Exclusive bool
	// Observer marks a tool that only observes the server (health,
	// server_ping): it takes no concurrency slot and neither raises nor
	// resets the RESOURCE_EXHAUSTED counter.
	Observer bool
	// Essential marks a tool that mode MINIMAL keeps (server_ping and
	// health are). Modes decide admission from this and from
	// Annotations.ReadOnlyHint, never from names.
	Essential bool
	// Authorize, if set, decides whether the call may run at all. It runs
	// right after the tool is found, before any argument is examined or a
	// slot is taken; its error (a *core.Error, e.g. UNAUTHORIZED) is the
	// call's tool error. req.Arguments is not yet validated.
	Authorize func(ctx context.Context, req *CallToolRequest) error
	// Handler runs the call.
	Handler ToolHandler

	// outputType is set by AddTypedTool when it derived OutputSchema from
	// this type: a result of exactly this type satisfies the schema by
	// construction (the schema describes what encoding/json writes for the
	// type), so it is not checked again against it.
	outputType reflect.Type
	// args is set by AddTypedTool when it can decode the arguments into
	// the handler's input type while they are validated (argsdecode.go).
	args *argsDecoder
}

// ReadOnly reports whether the tool's annotations say it is read-only.
func (t *Tool) ReadOnly() bool {
	return t.Annotations != nil && t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint
}

// registeredTool is a tool with its compiled validators. Immutable after
// registration.
type registeredTool struct {
	def    Tool
	input  *compiledSchema
	output *compiledSchema
	inRaw  json.RawMessage // compact inputSchema, as listed
	outRaw json.RawMessage // compact outputSchema, as listed
	lock   chan struct{}   // exclusive lock (buffered 1), nil unless Exclusive
	// emptyArgsValid records that {} satisfies the input schema, so the
	// commonest call skips validation.
	emptyArgsValid bool
}

const maxToolNameLen = 128

// validateArgs validates arguments whose compact length is compactLen. The
// commonest arguments, {}, were validated once at registration. For a
// typed tool whose input type argsdecode.go can fill, it also returns the
// decoded *In, when the validation pass decoded every member (else nil:
// the handler decodes the arguments itself).
func (rt *registeredTool) validateArgs(args json.RawMessage, compactLen int) ([]schemaProblem, any) {
	if compactLen == 2 && rt.emptyArgsValid { // compact "{}"
		return nil, nil
	}
	var sink *argsTarget
	if d := rt.def.args; d != nil {
		sink = d.newTarget()
	}
	if p := rt.input.validateInto(args, sink); p != nil {
		return p, nil
	}
	return nil, sink.value()
}

// validToolName reports whether name is 1-128 characters of A-Z a-z 0-9 _ - .
func validToolName(name string) bool {
	if len(name) == 0 || len(name) > maxToolNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

var defaultInputSchema = json.RawMessage(`{"type":"object"}`)

// ErrNotAdmitted is returned (wrapped) by AddTool for a tool the server's
// mode does not admit; such a tool is not registered.
var ErrNotAdmitted = errors.New("mcp: the tool is not admitted in this mode")

// AddTool registers a tool. Its schemas are compiled now, once. It returns
// an INVALID_ARGUMENT *core.Error for a bad name, a duplicate name, a
// missing handler or a schema that does not compile, and an error wrapping
// ErrNotAdmitted for a tool the server's mode does not admit (Admitted tells
// in advance). Registering while sessions are running sends them
// notifications/tools/list_changed.
func (s *Server) AddTool(t Tool) error {
	if !validToolName(t.Name) {
		return core.Errorf(core.CodeInvalidArgument,
			"invalid tool name %q: use 1-128 characters of A-Z a-z 0-9 _ - .", jsontext.Clip(t.Name, jsontext.MaxEcho))
	}
	if t.Handler == nil {
		return core.Errorf(core.CodeInvalidArgument, "tool %q has no handler", t.Name)
	}
	if !s.Admitted(&t) {
		return fmt.Errorf("tool %q: mode %s admits %s: %w", t.Name, s.opts.Mode, admits(s.opts.Mode), ErrNotAdmitted)
	}
	rt := &registeredTool{def: t}
	in := t.InputSchema
	if len(in) == 0 {
		in = defaultInputSchema
	}
	var err error
	if rt.input, err = s.schemas.compile("inputSchema", in); err != nil {
		return core.Errorf(core.CodeInvalidArgument, "tool %q: %v", t.Name, err)
	}
	rt.emptyArgsValid = len(rt.input.validate(json.RawMessage(`{}`))) == 0
	if rt.inRaw, err = compact(in); err != nil {
		return core.Errorf(core.CodeInvalidArgument, "tool %q: inputSchema: %v", t.Name, err)
	}
	if len(t.OutputSchema) > 0 {
		if rt.output, err = s.schemas.compile("outputSchema", t.OutputSchema); err != nil {
			return core.Errorf(core.CodeInvalidArgument, "tool %q: %v", t.Name, err)
		}
		if rt.outRaw, err = compact(t.OutputSchema); err != nil {
			return core.Errorf(core.CodeInvalidArgument, "tool %q: outputSchema: %v", t.Name, err)
		}
	}
	if t.Exclusive {
		rt.lock = make(chan struct{}, 1)
	}
	if !s.tools.add(rt) {
		return core.Errorf(core.CodeInvalidArgument, "a tool named %q is already registered; choose another name", t.Name)
	}
	return nil
}

// RemoveTool unregisters a tool. It returns a NOT_FOUND *core.Error when no
// such tool is registered. Calls already running finish.
func (s *Server) RemoveTool(name string) error {
	if !s.tools.remove(name) {
		return core.Errorf(core.CodeNotFound, "no tool named %q is registered", jsontext.Clip(name, jsontext.MaxEcho))
	}
	return nil
}

// LookupTool returns the registered tool with that name.
func (s *Server) LookupTool(name string) (Tool, bool) {
	rt := s.tool(name)
	if rt == nil {
		return Tool{}, false
	}
	return rt.def, true
}

// tool returns the registered tool or nil.
func (s *Server) tool(name string) *registeredTool {
	rt, _ := s.tools.get(name)
	return rt
}

// Admitted reports whether the server's mode admits the tool: FULL and
// TEST admit every tool, READONLY only tools whose readOnlyHint is true,
// MINIMAL only tools marked Essential.
func (s *Server) Admitted(t *Tool) bool {
	switch s.opts.Mode {
	case ModeReadOnly:
		return t.ReadOnly()
	case ModeMinimal:
		return t.Essential
	}
	return true
}

// admits says in words what a mode admits, for errors.
func admits(mode string) string {
	switch mode {
	case ModeReadOnly:
		return "only tools whose annotations say readOnlyHint: true"
	case ModeMinimal:
		return "only tools marked Essential"
	}
	return "every tool"
}

func compact(raw json.RawMessage) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// AddTypedTool registers a tool whose handler takes a typed input, the way
// the official MCP Go SDK's AddTool does. When t.InputSchema is nil the
// schema is derived from In (a struct: exported fields by their json names,
// fields without omitempty required, `jsonschema:"..."` tags as
// descriptions; or a map). When t.OutputSchema is nil and Out is a struct,
// the output schema is derived from Out; a result of type Out satisfies it
// by construction, so only results of another type (an Out that is an
// interface) are checked against it. The arguments are decoded into a
// fresh In as json.Unmarshal decodes them: for a plain struct In, in the
// same pass over their text that validates them; the handler's Out is the
// result (a *CallToolResult passes through).
func AddTypedTool[In, Out any](s *Server, t Tool, h func(ctx context.Context, req *CallToolRequest, in In) (Out, error)) error {
	if len(t.InputSchema) == 0 {
		schema, err := deriveSchema(reflect.TypeFor[In]())
		if err != nil {
			return core.Errorf(core.CodeInvalidArgument, "tool %q: cannot derive an input schema from %v: %v",
				t.Name, reflect.TypeFor[In](), err)
		}
		t.InputSchema = schema
	}
	out := reflect.TypeFor[Out]() // a CallToolResult is the result itself: it has no output schema
	if len(t.OutputSchema) == 0 && out != reflect.TypeFor[CallToolResult]() && out != reflect.TypeFor[*CallToolResult]() {
		schema, ok, err := deriveOutputSchema(out)
		if err != nil {
			return core.Errorf(core.CodeInvalidArgument, "tool %q: cannot derive an output schema from %v: %v",
				t.Name, reflect.TypeFor[Out](), err)
		}
		if ok {
			t.OutputSchema, t.outputType = schema, out
		}
	}
	// Decoding {} into a struct leaves it as it is: skip the decoder for
	// the commonest call.
	isStruct := reflect.TypeFor[In]().Kind() == reflect.Struct
	t.args = newArgsDecoder(reflect.TypeFor[In]())
	t.Handler = func(ctx context.Context, req *CallToolRequest) (any, error) {
		if in, ok := req.decoded.(*In); ok { // decoded while validated
			return h(ctx, req, *in)
		}
		var in In
		if isStruct && string(req.Arguments) == "{}" {
			return h(ctx, req, in)
		}
		if err := json.Unmarshal(req.Arguments, &in); err != nil {
			return nil, core.Errorf(core.CodeInvalidArgument, "arguments do not fit the tool's input type: %v", err)
		}
		return h(ctx, req, in)
	}
	return s.AddTool(t)
}
