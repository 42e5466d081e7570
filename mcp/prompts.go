package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/jsontext"
	"github.com/mcprt/mcprt/jsonrpc"
)

// Prompt method and notification names.
const (
	MethodPromptsList        = "prompts/list"
	MethodPromptsGet         = "prompts/get"
	NotifyPromptsListChanged = "notifications/prompts/list_changed"
)

// Prompt is a prompt template a client can offer its user.
type Prompt struct {
	// Name is 1–128 characters of A-Z a-z 0-9 _ - . and unique.
	Name string
	// Title is a human-readable name (sent from 2025-06-18).
	Title string
	// Description tells the user what the prompt is for.
	Description string
	// Arguments are the arguments the prompt takes.
	Arguments []PromptArgument
	// Icons are images a client may show (sent from 2025-11-25).
	Icons []Icon
	// Meta is the listing's _meta object (sent from 2025-06-18).
	Meta map[string]any
	// Complete, if set, proposes values for the prompt's arguments
	// (completion/complete with a ref/prompt naming the prompt).
	Complete CompletionHandler
}

// PromptArgument is one argument of a prompt. Values are strings.
type PromptArgument struct {
	// Name is the argument's name, unique within the prompt.
	Name string `json:"name"`
	// Title is a human-readable name (sent from 2025-06-18).
	Title string `json:"title,omitempty"`
	// Description says what the argument is for.
	Description string `json:"description,omitempty"`
	// Required arguments must be given: prompts/get without one is -32602.
	Required bool `json:"required,omitempty"`
}

// PromptHandler renders a prompt. It may be called concurrently, also with
// itself. A *jsonrpc.Error it returns is sent as is; any other error is
// -32603 carrying its text; a panic is recovered and becomes -32603.
type PromptHandler func(ctx context.Context, req *GetPromptRequest) (*GetPromptResult, error)

// GetPromptRequest is a prompts/get as a prompt handler sees it. It is
// valid only while the handler runs and must not be changed.
type GetPromptRequest struct {
	// Session is the session the request arrived on.
	Session *Session
	// Name is the prompt's name.
	Name string
	// Arguments are the arguments the client gave (never nil). Every
	// required argument is present; arguments the prompt does not declare
	// are passed on too.
	Arguments map[string]string
	// Meta is the request's _meta object (nil when absent).
	Meta Meta
	// ProtocolVersion is the protocol revision of this request: content
	// it does not have is replaced (see GetPromptResult).
	ProtocolVersion string
}

// GetPromptResult is what a prompt handler returns.
type GetPromptResult struct {
	// Description describes this rendering of the prompt (optional).
	Description string
	// Messages are the prompt's messages. Content blocks are made with
	// TextContent, ImageContent, AudioContent, ResourceLinkContent and
	// EmbeddedResourceContent. Each block is fitted to the request's
	// revision as ContentForRevision says: a block the revision does not
	// have (audio before 2025-03-26, resource_link before 2025-06-18) is
	// sent as a text block describing it.
	Messages []PromptMessage
	// Meta is the result's _meta object.
	Meta map[string]any
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	// Role is RoleUser or RoleAssistant.
	Role Role
	// Content is the message's content block.
	Content Content
}

// registeredPrompt is a prompt with its handler and listings. Immutable
// after registration.
type registeredPrompt struct {
	def      Prompt
	handler  PromptHandler
	required []string // names of the required arguments
	listings [len(listingVersions)][]byte
}

// promptSet holds the server's prompts.
type promptSet struct {
	reg       *registry[*registeredPrompt]
	served    atomic.Bool // a prompt was registered once
	completes atomic.Bool // a prompt with Complete was registered once
}

func newPromptSet(s *Server) *promptSet {
	return &promptSet{reg: newRegistry("prompts", func(p *registeredPrompt) string { return p.def.Name },
		func() { s.notifyRunning(NotifyPromptsListChanged) })}
}

// promptWire is a prompt as prompts/list lists it.
type promptWire struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Icons       []Icon           `json:"icons,omitempty"`
	Meta        map[string]any   `json:"_meta,omitempty"`
}

// AddPrompt registers a prompt and the handler that renders it. It returns
// an INVALID_ARGUMENT *core.Error for a bad or duplicate name, a missing
// handler, arguments without a name or with the same name twice, or
// invalid icons. The first prompt makes the server serve prompts;
// registering while sessions run sends them
// notifications/prompts/list_changed.
func (s *Server) AddPrompt(p Prompt, h PromptHandler) error {
	if !validToolName(p.Name) {
		return core.Errorf(core.CodeInvalidArgument,
			"invalid prompt name %q: use 1-128 characters of A-Z a-z 0-9 _ - .", jsontext.Clip(p.Name, jsontext.MaxEcho))
	}
	if h == nil {
		return core.Errorf(core.CodeInvalidArgument, "prompt %q has no handler", p.Name)
	}
	rp := &registeredPrompt{def: p, handler: h}
	seen := map[string]bool{}
	for i, a := range p.Arguments {
		switch {
		case a.Name == "":
			return core.Errorf(core.CodeInvalidArgument, "prompt %q: arguments[%d] has no name", p.Name, i)
		case seen[a.Name]:
			return core.Errorf(core.CodeInvalidArgument, "prompt %q: two arguments are named %q", p.Name, a.Name)
		}
		seen[a.Name] = true
		if a.Required {
			rp.required = append(rp.required, a.Name)
		}
	}
	if err := validateIcons(p.Icons); err != nil {
		return core.Errorf(core.CodeInvalidArgument, "prompt %q: %v", p.Name, err)
	}
	if err := checkMeta(p.Meta); err != nil {
		return core.Errorf(core.CodeInvalidArgument, "prompt %q: %v", p.Name, err)
	}
	for i, v := range listingVersions {
		w := promptWire{Name: p.Name, Title: p.Title, Description: p.Description, Arguments: p.Arguments,
			Icons: p.Icons, Meta: p.Meta}
		if v < Version20250618 {
			w.Title, w.Meta = "", nil
			w.Arguments = make([]PromptArgument, len(p.Arguments))
			for j, a := range p.Arguments {
				a.Title = ""
				w.Arguments[j] = a
			}
		}
		if v < Version20251125 {
			w.Icons = nil
		}
		var err error
		if rp.listings[i], err = marshalCompact(w); err != nil {
			return core.Errorf(core.CodeInvalidArgument, "prompt %q cannot be listed: %v", p.Name, err)
		}
	}
	s.prompts.served.Store(true) // before the add announces it
	if !s.prompts.reg.add(rp) {
		return core.Errorf(core.CodeInvalidArgument, "a prompt named %q is already registered; choose another name", p.Name)
	}
	if p.Complete != nil {
		s.prompts.completes.Store(true)
	}
	return nil
}

// RemovePrompt unregisters a prompt. It returns a NOT_FOUND *core.Error
// when there is none.
func (s *Server) RemovePrompt(name string) error {
	if !s.prompts.reg.remove(name) {
		return core.Errorf(core.CodeNotFound, "no prompt named %q is registered", jsontext.Clip(name, jsontext.MaxEcho))
	}
	return nil
}

// listPrompts is prompts/list: the prompts sorted by name, tools.pageSize
// at a time.
func (sess *Session) listPrompts(ctx context.Context, req *jsonrpc.Request) (any, error) {
	cursor, err := cursorParam(req.Method, req.Params)
	if err != nil {
		return nil, err
	}
	page, next, err := sess.srv.prompts.reg.page(cursor, sess.srv.opts.Limits.PageSize)
	if err != nil {
		return nil, err
	}
	vi := versionIndex(sess.versionFor(ctx))
	items := make([][]byte, len(page))
	for i, p := range page {
		items[i] = p.listings[vi]
	}
	return listJSON("prompts", items, next), nil
}

// unknownPrompt is the -32602 error of a name that is no prompt.
func unknownPrompt(method, name string) *jsonrpc.Error {
	return invalidParams(method + ": unknown prompt " + jsontext.Quote(jsontext.Clip(name, jsontext.MaxEcho)) +
		"; call prompts/list to see the prompts this server offers")
}

// getPrompt is prompts/get: params checked, required arguments present,
// the handler run (panics recovered), its messages fitted to the
// session's revision.
func (sess *Session) getPrompt(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var rawName, rawArgs, rawMeta json.RawMessage
	if err := readParams(req.Method, "{name, arguments?, _meta?}", req.Params, map[string]*json.RawMessage{
		"name": &rawName, "arguments": &rawArgs, "_meta": &rawMeta}); err != nil {
		return nil, err
	}
	name, ok, err := stringMember(req.Method, "name", rawName)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, invalidParams("prompts/get needs params.name, the prompt's name as a string")
	}
	args, err := stringMap(req.Method, "arguments", rawArgs)
	if err != nil {
		return nil, err
	}
	meta, err := metaMember(req.Method, rawMeta)
	if err != nil {
		return nil, err
	}
	rp, ok := sess.srv.prompts.reg.get(name)
	if !ok {
		return nil, unknownPrompt(req.Method, name)
	}
	var missing []string
	for _, a := range rp.required {
		if _, ok := args[a]; !ok {
			missing = append(missing, jsontext.Quote(a))
		}
	}
	if len(missing) > 0 {
		return nil, invalidParams(fmt.Sprintf("prompt %q needs the argument(s) %s in params.arguments; "+
			"prompts/list says which arguments each prompt takes", name, strings.Join(missing, ", ")))
	}
	if args == nil {
		args = map[string]string{}
	}
	version := sess.versionFor(ctx)
	what := "prompt " + jsontext.Quote(name)
	greq := &GetPromptRequest{Session: sess, Name: name, Arguments: args, Meta: meta, ProtocolVersion: version}
	res, err := callSafely(sess, what, func() (*GetPromptResult, error) { return rp.handler(ctx, greq) })
	if err != nil {
		if out, handled, ierr := sess.srv.inputOutcome(ctx, err); handled {
			return out, ierr
		}
		sess.log.Warn("prompts/get failed", "prompt", name, "error", err.Error())
		return nil, handlerFailure(what, err)
	}
	out, err := encodePromptResult(res, version)
	if err != nil {
		sess.log.Warn("prompts/get returned a bad result", "prompt", name, "error", err.Error())
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: "+what+": "+err.Error())
	}
	if limit := sess.srv.opts.Limits.MaxResultBytes; len(out) > limit {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, fmt.Sprintf("Internal error: %s: the result is %d bytes, "+
			"over the limit of %d (tools.maxResultBytes)", what, len(out), limit))
	}
	return jsonrpc.CompactJSON(out), nil
}

// encodePromptResult encodes a handler's result for a revision: each
// block checked, then fitted to the revision (ContentForRevision).
func encodePromptResult(res *GetPromptResult, version string) ([]byte, error) {
	type messageWire struct {
		Role    Role            `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	wire := struct {
		Description string         `json:"description,omitempty"`
		Messages    []messageWire  `json:"messages"`
		Meta        map[string]any `json:"_meta,omitempty"`
	}{Description: res.Description, Messages: make([]messageWire, len(res.Messages)), Meta: res.Meta}
	for i, m := range res.Messages {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			return nil, fmt.Errorf("messages[%d] has role %q; use %q or %q", i, m.Role, RoleUser, RoleAssistant)
		}
		if err := checkContent(&m.Content); err != nil {
			return nil, fmt.Errorf("messages[%d]: %v", i, err)
		}
		block, err := encodeBlock(ContentForRevision(m.Content, version))
		if err != nil {
			return nil, fmt.Errorf("messages[%d] cannot be encoded as JSON: %v", i, err)
		}
		wire.Messages[i] = messageWire{Role: m.Role, Content: block}
	}
	out, err := marshalCompact(wire)
	if err != nil {
		return nil, fmt.Errorf("the result cannot be encoded as JSON: %v", err)
	}
	return out, nil
}

// checkContent checks that a block has what its type needs.
func checkContent(c *Content) error {
	switch c.Type {
	case "text":
	case "image", "audio":
		if !isBase64(c.Data) || c.MIMEType == "" {
			return fmt.Errorf("a %s block needs base64 data and a mimeType", c.Type)
		}
	case "resource_link":
		if err := validateURI(c.URI); err != nil || c.Name == "" {
			return fmt.Errorf("a resource_link block needs an absolute uri and a name")
		}
	case "resource":
		if c.Resource == nil || c.Resource.URI == "" {
			return fmt.Errorf("a resource block needs a resource with a uri")
		}
		if _, err := wireContents(*c.Resource, c.Resource.URI); err != nil {
			return fmt.Errorf("its resource: %v", err)
		}
	default:
		return fmt.Errorf("unknown content type %q; use text, image, audio, resource_link or resource", c.Type)
	}
	if err := c.Annotations.validate(); err != nil {
		return err
	}
	return nil
}

// encodeBlock encodes a checked, fitted block; an embedded resource's
// contents carry text (even empty) or blob, never neither.
func encodeBlock(c Content) ([]byte, error) {
	if c.Type != "resource" {
		return marshalCompact(c)
	}
	w, err := wireContents(*c.Resource, c.Resource.URI)
	if err != nil {
		return nil, err
	}
	return marshalCompact(struct {
		Type        string         `json:"type"`
		Resource    contentsWire   `json:"resource"`
		Annotations *Annotations   `json:"annotations,omitempty"`
		Meta        map[string]any `json:"_meta,omitempty"`
	}{c.Type, w, c.Annotations, c.Meta})
}
