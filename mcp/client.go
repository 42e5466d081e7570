package mcp

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/jsontext"
)

// Requests to the client: handlers reach the client through their
// session. Each request is sent only when the client declared the
// capability it needs in initialize, and only once the session runs
// (ping also while it initializes); otherwise it fails at once with an
// *core.Error. Each waits at most tools.clientRequestTimeoutMs, or until
// ctx ends when that is sooner; a request given up is followed by
// notifications/cancelled naming it, so the client can stop working on
// it.
//
// Errors: NOT_IMPLEMENTED (*core.Error) when the client or the revision
// lacks the feature; INVALID_ARGUMENT for params that could never be sent;
// TIMEOUT when the client did not answer in time; the cause of ctx when ctx
// ended first; a *jsonrpc.Error when the client answered with an error;
// ErrSessionClosed when the session closed.

// Methods the server sends to the client.
const (
	MethodRootsList         = "roots/list"
	MethodSamplingCreate    = "sampling/createMessage"
	MethodElicitationCreate = "elicitation/create"
	NotifyRootsListChanged  = "notifications/roots/list_changed"
)

// clientTimeout is how long a request to the client waits for its answer.
func (sess *Session) clientTimeout() time.Duration {
	return sess.srv.opts.Limits.ClientRequestTimeout
}

// clientCall sends a request to the client and decodes its answer into
// result, under the timeout; see the errors above.
func (sess *Session) clientCall(ctx context.Context, method string, params, result any) error {
	if r := statelessOf(ctx); r != nil {
		if method == MethodPing {
			return unsupported(method, "a stateless request has no connection to the client to ping")
		}
		return singleInput(ctx, r, InputRequest{Method: method, Params: params}, result)
	}
	switch st := sess.State(); {
	case st == StateClosed:
		return ErrSessionClosed
	case st == StateRunning, st == StateInitializing && method == MethodPing:
	default:
		return core.NewError(core.CodeNotInitialized, "cannot send "+method+
			" to the client: the session is not running yet (the client has not sent notifications/initialized)")
	}
	if ctx.Err() != nil { // given up before it was sent: nothing is sent
		return context.Cause(ctx)
	}
	timeout := sess.clientTimeout()
	ms := timeout.Milliseconds()
	expired := core.NewError(core.CodeTimeout, "the client did not answer "+method+" within "+
		strconv.FormatInt(ms, 10)+" ms (tools.clientRequestTimeoutMs); it was told the request is cancelled").
		WithDetail("method", method).WithDetail("timeoutMs", ms)
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := sess.srv.clock.AfterFunc(timeout, func() { cancel(expired) })
	defer timer.Stop()
	var raw json.RawMessage
	err := sess.Call(cctx, method, params, &raw)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case cctx.Err() != nil && context.Cause(cctx) == error(expired):
		return expired
	default:
		return err
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return core.NewError(core.CodeInternal, "the client's answer to "+method+" could not be read: "+err.Error()).
			WithDetail("method", method).WithDetail("reason", "bad_client_answer")
	}
	return nil
}

// missingCapability is the error of a request to the client that needs a
// capability it did not declare: -32021 in a stateless request,
// NOT_IMPLEMENTED in a session.
func missingCapability(ctx context.Context, capability, method string) error {
	if statelessOf(ctx) != nil {
		return &MissingCapabilityError{Capabilities: map[string]any{capability: map[string]any{}}}
	}
	return unsupported(method, "the client did not declare the "+capability+" capability")
}

// unsupported is the error of a request the client or the revision
// cannot take.
func unsupported(method, why string) *core.Error {
	return core.NewError(core.CodeNotImplemented, "cannot send "+method+": "+why).WithDetail("method", method)
}

// invalidRequest is the error of params that could never be sent.
func invalidRequest(method, why string) *core.Error {
	return core.NewError(core.CodeInvalidArgument, "cannot send "+method+": "+why).WithDetail("method", method)
}

// Ping sends ping to the client and waits for its answer. Every client
// answers ping: it needs no capability.
func (sess *Session) Ping(ctx context.Context) error {
	return sess.clientCall(ctx, MethodPing, nil, nil)
}

// CreateMessage asks the client to sample its LLM (sampling/createMessage)
// and returns the sampled message. It needs the client's sampling
// capability. Content blocks the negotiated revision lacks are
// downgraded as in tool results (audio under 2024-11-05 becomes a text
// block saying so); blocks sampling never carries (resource links,
// embedded resources) are INVALID_ARGUMENT.
func (sess *Session) CreateMessage(ctx context.Context, params CreateMessageParams) (*CreateMessageResult, error) {
	const m = MethodSamplingCreate
	caps, version := sess.capsFor(ctx), sess.versionFor(ctx)
	if caps.Sampling == nil {
		return nil, missingCapability(ctx, "sampling", m)
	}
	switch {
	case len(params.Messages) == 0:
		return nil, invalidRequest(m, "params.Messages is empty; send at least one message")
	case params.MaxTokens < 1:
		return nil, invalidRequest(m, "params.MaxTokens must be at least 1")
	}
	switch params.IncludeContext {
	case "", IncludeNone:
	case IncludeThisServer, IncludeAllServers:
		if version >= Version20251125 && len(jsontext.Member(*caps.Sampling, "context")) == 0 {
			return nil, unsupported(m, "includeContext "+params.IncludeContext+
				" needs the client's sampling.context capability, which it did not declare")
		}
	default:
		return nil, invalidRequest(m, "includeContext must be none, thisServer or allServers, not "+
			jsontext.Quote(jsontext.Clip(params.IncludeContext, jsontext.MaxEcho)))
	}
	msgs := make([]SamplingMessage, len(params.Messages))
	for i, msg := range params.Messages {
		switch msg.Content.Type {
		case "text", "image", "audio":
		default:
			return nil, invalidRequest(m, "message "+strconv.Itoa(i)+" has content of type "+
				jsontext.Quote(jsontext.Clip(msg.Content.Type, jsontext.MaxEcho))+"; sampling takes text, image and audio")
		}
		if msg.Role != RoleUser && msg.Role != RoleAssistant {
			return nil, invalidRequest(m, "message "+strconv.Itoa(i)+" has role "+
				jsontext.Quote(jsontext.Clip(string(msg.Role), jsontext.MaxEcho))+"; use user or assistant")
		}
		msgs[i] = SamplingMessage{Role: msg.Role, Content: ContentForRevision(msg.Content, version)}
	}
	params.Messages = msgs
	var res CreateMessageResult
	if err := sess.clientCall(ctx, m, params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Elicit asks the client's user for input (elicitation/create). It needs
// revision 2025-06-18 or later and the client's elicitation capability.
// Form mode (the default) sends Message and RequestedSchema; under
// 2025-11-25 a client that declared elicitation with only url cannot take
// it. URL mode sends Message, URL and ElicitationID, and needs 2025-11-25
// and the client's elicitation.url capability. Fields of the other mode
// are left out.
func (sess *Session) Elicit(ctx context.Context, params ElicitParams) (*ElicitResult, error) {
	const m = MethodElicitationCreate
	caps, version := sess.capsFor(ctx), sess.versionFor(ctx)
	switch {
	case version < Version20250618:
		return nil, unsupported(m, "elicitation does not exist in the negotiated revision "+version+
			" (it exists from 2025-06-18)")
	case caps.Elicitation == nil:
		return nil, missingCapability(ctx, "elicitation", m)
	}
	declared := func(mode string) bool { return len(jsontext.Member(*caps.Elicitation, mode)) > 0 }
	switch params.Mode {
	case "", ElicitForm:
		// An elicitation capability without modes means form.
		if version >= Version20251125 && !declared(ElicitForm) && declared(ElicitURL) {
			return nil, unsupported(m, "the client declared elicitation in url mode only, not form")
		}
		if params.RequestedSchema == nil {
			return nil, invalidRequest(m, "form mode needs params.RequestedSchema, a JSON Schema object")
		}
		params.URL, params.ElicitationID, params.Mode = "", "", ""
		if version >= Version20251125 {
			params.Mode = ElicitForm
		}
	case ElicitURL:
		switch {
		case version < Version20251125:
			return nil, unsupported(m, "url mode exists from revision 2025-11-25; the session speaks "+version)
		case !declared(ElicitURL):
			return nil, unsupported(m, "the client did not declare the elicitation.url capability")
		case params.URL == "" || params.ElicitationID == "":
			return nil, invalidRequest(m, "url mode needs params.URL and params.ElicitationID")
		}
		params.RequestedSchema = nil
	default:
		return nil, invalidRequest(m, "mode must be form or url, not "+
			jsontext.Quote(jsontext.Clip(params.Mode, jsontext.MaxEcho)))
	}
	var res ElicitResult
	if err := sess.clientCall(ctx, m, params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
