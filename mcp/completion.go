package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcprt/mcprt/internal/jsontext"
	"github.com/mcprt/mcprt/jsonrpc"
)

// MethodCompletionComplete is the completion method.
const MethodCompletionComplete = "completion/complete"

// MaxCompletionValues is the most values one completion/complete result
// carries; a handler's longer list is cut there, with hasMore set.
const MaxCompletionValues = 100

// CompletionHandler proposes values for a prompt argument or a template
// variable while the user types. It may be called concurrently. A
// *jsonrpc.Error it returns is sent as is; any other error is -32603; a
// panic is recovered and becomes -32603.
type CompletionHandler func(ctx context.Context, req *CompleteRequest) (*CompleteResult, error)

// CompleteRequest is a completion/complete as a completion handler sees it.
// It is valid only while the handler runs and must not be changed.
type CompleteRequest struct {
	// Session is the session the request arrived on.
	Session *Session
	// Prompt names the prompt whose argument is completed; "" when a
	// template variable is.
	Prompt string
	// URITemplate is the template whose variable is completed; "" when a
	// prompt argument is.
	URITemplate string
	// Argument is the name of the argument or variable being completed;
	// the prompt declares it, or the template has it.
	Argument string
	// Value is what the user has typed so far.
	Value string
	// Context holds the values of the other arguments or variables the
	// user already chose (context.arguments, from 2025-06-18; nil before).
	Context map[string]string
	// Meta is the request's _meta object (nil when absent).
	Meta Meta
	// ProtocolVersion is the protocol revision of this request.
	ProtocolVersion string
}

// CompleteResult is what a completion handler returns.
type CompleteResult struct {
	// Values are the proposals, best first. At most MaxCompletionValues
	// are sent.
	Values []string
	// Total is how many proposals there are in all, when known (0: not
	// said, unless Values had to be cut).
	Total int
	// HasMore says there are more proposals than Values holds.
	HasMore bool
}

// CompletionsFrom returns a CompletionHandler that proposes, for each
// argument or variable named in candidates, the candidates that begin with
// what the user typed (ignoring case), in their order.
func CompletionsFrom(candidates map[string][]string) CompletionHandler {
	own := make(map[string][]string, len(candidates))
	for k, v := range candidates {
		own[k] = slices.Clone(v)
	}
	return func(_ context.Context, req *CompleteRequest) (*CompleteResult, error) {
		prefix := strings.ToLower(req.Value)
		var out []string
		for _, c := range own[req.Argument] {
			if strings.HasPrefix(strings.ToLower(c), prefix) {
				out = append(out, c)
			}
		}
		return &CompleteResult{Values: out, Total: len(out)}, nil
	}
}

// complete is completion/complete: the ref names a prompt or a resource
// template, the argument one of its arguments or variables; the handler
// registered with it proposes values (none when it has no handler).
func (sess *Session) complete(ctx context.Context, req *jsonrpc.Request) (any, error) {
	const m = MethodCompletionComplete
	var rawRef, rawArg, rawCtx, rawMeta json.RawMessage
	if err := readParams(m, "{ref, argument, context?, _meta?}", req.Params, map[string]*json.RawMessage{
		"ref": &rawRef, "argument": &rawArg, "context": &rawCtx, "_meta": &rawMeta}); err != nil {
		return nil, err
	}
	version := sess.versionFor(ctx)
	creq := &CompleteRequest{Session: sess, ProtocolVersion: version}
	var err error
	if creq.Meta, err = metaMember(m, rawMeta); err != nil {
		return nil, err
	}
	if creq.Argument, creq.Value, err = completionArgument(rawArg); err != nil {
		return nil, err
	}
	if rawCtx != nil {
		if !isObject(rawCtx) {
			return nil, invalidParams(m + " params.context must be an object {arguments?}, got " + jsontext.ClipBytes(rawCtx, 40))
		}
		var rawArgs json.RawMessage
		if err := readParams(m, "{arguments?}", rawCtx, map[string]*json.RawMessage{"arguments": &rawArgs}); err != nil {
			return nil, err
		}
		args, err := stringMap(m, "context.arguments", rawArgs)
		if err != nil {
			return nil, err
		}
		if version >= Version20250618 { // older revisions have no context
			creq.Context = args
		}
	}
	handler, known, err := sess.srv.completionTarget(rawRef, creq)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(known, creq.Argument) {
		what := "prompt " + jsontext.Quote(creq.Prompt) + " has no argument "
		if creq.URITemplate != "" {
			what = "resource template " + jsontext.Quote(jsontext.Clip(creq.URITemplate, jsontext.MaxEcho)) + " has no variable "
		}
		return nil, invalidParams(m + ": " + what + jsontext.Quote(jsontext.Clip(creq.Argument, jsontext.MaxEcho)) +
			"; it has: " + strings.Join(known, ", "))
	}
	res := &CompleteResult{}
	if handler != nil {
		res, err = callSafely(sess, "completing "+jsontext.Quote(creq.Argument), func() (*CompleteResult, error) {
			return handler(ctx, creq)
		})
		if err != nil {
			sess.log.Warn("completion/complete failed", "argument", jsontext.Clip(creq.Argument, jsontext.MaxEcho),
				"error", err.Error())
			return nil, handlerFailure("completing "+jsontext.Quote(creq.Argument), err)
		}
	}
	return encodeCompletion(res)
}

// completionArgument reads params.argument {name, value}.
func completionArgument(raw json.RawMessage) (name, value string, err error) {
	const m = MethodCompletionComplete
	if raw == nil || !isObject(raw) {
		return "", "", invalidParams(m + ` needs params.argument, an object {"name": ..., "value": ...} of strings`)
	}
	var rawName, rawValue json.RawMessage
	if err := readParams(m, "{name, value}", raw, map[string]*json.RawMessage{"name": &rawName, "value": &rawValue}); err != nil {
		return "", "", err
	}
	name, okName, err := stringMember(m, "argument.name", rawName)
	if err != nil {
		return "", "", err
	}
	value, okValue, err := stringMember(m, "argument.value", rawValue)
	if err != nil {
		return "", "", err
	}
	if !okName || !okValue {
		return "", "", invalidParams(m + " params.argument needs both name and value, as strings")
	}
	return name, value, nil
}

// completionTarget resolves params.ref: it fills req's Prompt or
// URITemplate and returns the handler and the argument names it knows.
func (s *Server) completionTarget(raw json.RawMessage, req *CompleteRequest) (CompletionHandler, []string, error) {
	const m = MethodCompletionComplete
	const shape = `{"type": "ref/prompt", "name": ...} or {"type": "ref/resource", "uri": <a uriTemplate>}`
	if raw == nil || !isObject(raw) {
		return nil, nil, invalidParams(m + " needs params.ref, " + shape)
	}
	var rawType, rawName, rawURI json.RawMessage
	if err := readParams(m, shape, raw, map[string]*json.RawMessage{"type": &rawType, "name": &rawName, "uri": &rawURI}); err != nil {
		return nil, nil, err
	}
	typ, _, err := stringMember(m, "ref.type", rawType)
	if err != nil {
		return nil, nil, err
	}
	switch typ {
	case "ref/prompt":
		name, ok, err := stringMember(m, "ref.name", rawName)
		if err != nil || !ok {
			return nil, nil, invalidParams(m + ` params.ref of type "ref/prompt" needs name, the prompt's name as a string`)
		}
		rp, found := s.prompts.reg.get(name)
		if !found {
			return nil, nil, unknownPrompt(m, name)
		}
		req.Prompt = name
		names := make([]string, len(rp.def.Arguments))
		for i, a := range rp.def.Arguments {
			names[i] = a.Name
		}
		return rp.def.Complete, names, nil
	case "ref/resource":
		uri, ok, err := stringMember(m, "ref.uri", rawURI)
		if err != nil || !ok {
			return nil, nil, invalidParams(m + ` params.ref of type "ref/resource" needs uri, a resource template's uriTemplate`)
		}
		rt, found := s.resources.templates.get(uri)
		if !found {
			return nil, nil, invalidParams(m + ": no resource template has the uriTemplate " +
				jsontext.Quote(jsontext.Clip(uri, jsontext.MaxEcho)) + "; call resources/templates/list to see them")
		}
		req.URITemplate = uri
		return rt.def.Complete, rt.vars, nil
	}
	return nil, nil, invalidParams(m + " params.ref must be " + shape + ", got type " + jsontext.ClipBytes(rawType, 40))
}

// encodeCompletion encodes a CompleteResult: at most MaxCompletionValues
// values (a longer list is cut, with hasMore and a total of at least its
// length), total when known.
func encodeCompletion(res *CompleteResult) (any, error) {
	type completionWire struct {
		Values  []string `json:"values"`
		Total   int      `json:"total,omitempty"`
		HasMore bool     `json:"hasMore"`
	}
	w := completionWire{Values: res.Values, Total: res.Total, HasMore: res.HasMore}
	if w.Values == nil {
		w.Values = []string{}
	}
	if len(w.Values) > MaxCompletionValues {
		w.Total = max(w.Total, len(w.Values))
		w.Values = w.Values[:MaxCompletionValues]
		w.HasMore = true
	}
	switch {
	case w.Total < 0:
		w.Total = 0
	case w.Total > 0 && w.Total < len(w.Values):
		w.Total = len(w.Values)
	case w.Total > len(w.Values):
		w.HasMore = true
	}
	return struct {
		Completion completionWire `json:"completion"`
	}{w}, nil
}
