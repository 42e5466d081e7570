package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/mcprt/mcprt/jsonrpc"
)

// Asking the client for input. A tool, prompt or resource handler that
// needs something from the client (the user's answer to a form, a sample
// of the client's LLM, its roots) calls RequestInput with the requests it
// needs, each under a key of its choosing. The same handler serves both
// eras:
//
//   - In a session, each request is sent to the client and awaited, and
//     RequestInput returns the answers.
//   - In a stateless request (2026-07-28) the server cannot call the
//     client. RequestInput returns the answers the client sent with the
//     request (inputResponses, and those of earlier rounds, which the
//     server keeps in requestState); when any is missing it returns
//     ErrInputRequired. The handler returns that error as it is, the client
//     gets an input_required result asking for everything missing, and
//     retries the request with the answers: the handler runs again from
//     the start and this time RequestInput has them. Handlers must
//     therefore do nothing irreversible before their last RequestInput.
//   - In a tools/call that became a task (StartTask), RequestInput waits
//     instead: the task is input_required until the client has answered
//     every request through tasks/update, and the handler goes on from
//     where it was.
//
// Session.Elicit, Session.CreateMessage and Session.ListRoots work the
// same way under a stateless request, with keys made from the method and
// the order of the calls.

// ErrInputRequired is returned by RequestInput in a stateless request
// when the client has not yet answered every request. A handler returns
// it (possibly wrapped); the client then gets an input_required result.
var ErrInputRequired = errors.New("mcp: the client must provide input first (the request is answered with input_required)")

// InputRequest is one request to the client: elicitation/create,
// sampling/createMessage or roots/list. Build it with ElicitInput,
// SamplingInput or RootsInput.
type InputRequest struct {
	Method string
	Params any
}

// ElicitInput asks the client's user for input (needs the client's
// elicitation capability).
func ElicitInput(p ElicitParams) InputRequest {
	return InputRequest{Method: MethodElicitationCreate, Params: p}
}

// SamplingInput asks the client to sample its LLM (needs the client's
// sampling capability).
func SamplingInput(p CreateMessageParams) InputRequest {
	return InputRequest{Method: MethodSamplingCreate, Params: p}
}

// RootsInput asks the client for its roots (needs the client's roots
// capability).
func RootsInput() InputRequest {
	return InputRequest{Method: MethodRootsList, Params: struct{}{}}
}

// InputResponses are the client's answers by key, as raw JSON results.
type InputResponses map[string]json.RawMessage

// Elicit decodes the answer under key as an elicitation result.
func (r InputResponses) Elicit(key string) (*ElicitResult, error) {
	var out ElicitResult
	return &out, r.decode(key, &out)
}

// Sampling decodes the answer under key as a sampling result.
func (r InputResponses) Sampling(key string) (*CreateMessageResult, error) {
	var out CreateMessageResult
	return &out, r.decode(key, &out)
}

// Roots decodes the answer under key as the client's roots.
func (r InputResponses) Roots(key string) ([]Root, error) {
	var out listRootsResult
	if err := r.decode(key, &out); err != nil {
		return nil, err
	}
	if out.Roots == nil {
		return nil, nil
	}
	return *out.Roots, nil
}

func (r InputResponses) decode(key string, v any) error {
	raw, ok := r[key]
	if !ok {
		return fmt.Errorf("mcp: no answer under the key %q", key)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("mcp: the answer under %q is not of the expected shape: %w", key, err)
	}
	return nil
}

// MissingCapabilityError reports that a request needs a client capability
// the client did not declare. In a stateless request it is answered as the
// JSON-RPC error -32021 whose data names the capabilities; in a session
// the corresponding requests to the client fail with NOT_IMPLEMENTED.
type MissingCapabilityError struct {
	// Capabilities is a ClientCapabilities object naming what is missing,
	// e.g. {"sampling": {}}.
	Capabilities map[string]any
}

// Error names the missing capabilities.
func (e *MissingCapabilityError) Error() string {
	names := make([]string, 0, len(e.Capabilities))
	for k := range e.Capabilities {
		names = append(names, k)
	}
	slices.Sort(names)
	return fmt.Sprintf("the request needs the client capabilities %v, which the client did not declare", names)
}

// rpcError is the -32021 answer.
func (e *MissingCapabilityError) rpcError() *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeMissingClientCapability, Message: "Missing required client capability: " + e.Error() +
		`; declare them in _meta["` + MetaClientCapabilities + `"] if the client supports them`,
		Data: map[string]any{"requiredCapabilities": e.Capabilities}}
}

// capabilityOf returns the client capability an input method needs.
func capabilityOf(method string) string {
	switch method {
	case MethodElicitationCreate:
		return "elicitation"
	case MethodSamplingCreate:
		return "sampling"
	case MethodRootsList:
		return "roots"
	}
	return ""
}

// declares reports whether caps declares the capability name.
func declares(caps ClientCapabilities, name string) bool {
	switch name {
	case "elicitation":
		return caps.Elicitation != nil
	case "sampling":
		return caps.Sampling != nil
	case "roots":
		return caps.Roots != nil
	}
	return false
}

// inputRound is the input-required exchange of one stateless request: the
// answers the client has given (this round and, through requestState,
// earlier ones), what the handler asks for now, and the handler's state.
type inputRound struct {
	target string // the tool, prompt or resource the request names

	mu        sync.Mutex
	responses map[string]json.RawMessage
	pending   map[string]InputRequest
	state     []byte         // the handler's state (SetRequestState)
	auto      map[string]int // calls of Session.Elicit & co. by method, for their keys

	// A call that became a task waits for its input (tasks/update).
	store *taskStore
	task  *task
}

// RequestInput asks the client for the inputs in reqs and returns its
// answers by key (see the comment at the top of this file). In a session
// the requests are sent one at a time in key order; a missing client
// capability is NOT_IMPLEMENTED. In a stateless request a missing
// capability is a *MissingCapabilityError, and unanswered requests make it
// return ErrInputRequired.
func RequestInput(ctx context.Context, sess *Session, reqs map[string]InputRequest) (InputResponses, error) {
	if r := statelessOf(ctx); r != nil {
		if r.inputs == nil {
			return nil, fmt.Errorf("mcp: %s cannot ask the client for input; only tools/call, prompts/get and resources/read can", r.method)
		}
		return r.inputs.request(ctx, r.caps, reqs)
	}
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make(InputResponses, len(reqs))
	for _, k := range keys {
		in := reqs[k]
		var res any
		var err error
		switch in.Method {
		case MethodElicitationCreate:
			p, _ := in.Params.(ElicitParams)
			res, err = sess.Elicit(ctx, p)
		case MethodSamplingCreate:
			p, _ := in.Params.(CreateMessageParams)
			res, err = sess.CreateMessage(ctx, p)
		case MethodRootsList:
			var roots []Root
			roots, err = sess.ListRoots(ctx)
			res = listRootsResult{Roots: &roots}
		default:
			err = fmt.Errorf("mcp: %q is not a request a server may send for input", in.Method)
		}
		if err != nil {
			return nil, err
		}
		raw, merr := json.Marshal(res)
		if merr != nil {
			return nil, merr
		}
		out[k] = raw
	}
	return out, nil
}

// request answers RequestInput in a stateless request: with the answers
// at hand, else ErrInputRequired, or in a task by waiting for them.
func (in *inputRound) request(ctx context.Context, caps ClientCapabilities, reqs map[string]InputRequest) (InputResponses, error) {
	lacking := map[string]any{}
	for _, r := range reqs {
		c := capabilityOf(r.Method)
		if c == "" {
			return nil, fmt.Errorf("mcp: %q is not a request a server may send for input", r.Method)
		}
		if !declares(caps, c) {
			lacking[c] = map[string]any{}
		}
	}
	if len(lacking) > 0 {
		return nil, &MissingCapabilityError{Capabilities: lacking}
	}
	in.mu.Lock()
	out := make(InputResponses, len(reqs))
	missing := map[string]InputRequest{}
	for k, r := range reqs {
		if raw, ok := in.responses[k]; ok {
			out[k] = raw
			continue
		}
		missing[k] = r
	}
	if len(missing) == 0 {
		in.mu.Unlock()
		return out, nil
	}
	if in.task == nil {
		if in.pending == nil {
			in.pending = map[string]InputRequest{}
		}
		maps.Copy(in.pending, missing)
		in.mu.Unlock()
		return nil, ErrInputRequired
	}
	st, t := in.store, in.task
	in.mu.Unlock()
	enc, err := encodeInputRequests(missing)
	if err != nil {
		return nil, err
	}
	got, err := st.await(ctx, t, enc)
	if err != nil {
		return nil, err
	}
	in.mu.Lock()
	if in.responses == nil {
		in.responses = map[string]json.RawMessage{}
	}
	for k, v := range got {
		in.responses[k] = v
		out[k] = v
	}
	in.mu.Unlock()
	return out, nil
}

// autoKey returns the key of the n-th call of Session.Elicit (or another
// single request) in this request: method#n.
func (in *inputRound) autoKey(method string) string {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.auto == nil {
		in.auto = map[string]int{}
	}
	in.auto[method]++
	return method + "#" + strconv.Itoa(in.auto[method])
}

// singleInput is Session.Elicit & co. under a stateless request: one
// keyed input request whose answer is decoded into result.
func singleInput(ctx context.Context, r *statelessReq, in InputRequest, result any) error {
	if r.inputs == nil {
		return fmt.Errorf("mcp: %s cannot ask the client for input; only tools/call, prompts/get and resources/read can", r.method)
	}
	key := r.inputs.autoKey(in.Method)
	got, err := r.inputs.request(ctx, r.caps, map[string]InputRequest{key: in})
	if err != nil {
		return err
	}
	return got.decode(key, result)
}

// SetRequestState keeps state for the handler's next round: in a
// stateless request it travels, signed, in the input_required result's
// requestState and comes back with the retry (RequestState). In a session
// the handler is never run again, and RequestState just returns it.
func SetRequestState(ctx context.Context, state []byte) {
	if r := statelessOf(ctx); r != nil && r.inputs != nil {
		r.inputs.mu.Lock()
		r.inputs.state = slices.Clone(state)
		r.inputs.mu.Unlock()
		return
	}
	if c, ok := ctx.Value(sessionStateKey{}).(*sessionState); ok {
		c.set(state)
	}
}

// RequestState returns the state the handler set in an earlier round (nil
// in the first).
func RequestState(ctx context.Context) []byte {
	if r := statelessOf(ctx); r != nil && r.inputs != nil {
		r.inputs.mu.Lock()
		defer r.inputs.mu.Unlock()
		return slices.Clone(r.inputs.state)
	}
	if c, ok := ctx.Value(sessionStateKey{}).(*sessionState); ok {
		return c.get()
	}
	return nil
}

// sessionState holds SetRequestState's value for a session request.
type sessionState struct {
	mu sync.Mutex
	b  []byte
}

type sessionStateKey struct{}

func (s *sessionState) set(b []byte) { s.mu.Lock(); s.b = slices.Clone(b); s.mu.Unlock() }
func (s *sessionState) get() []byte  { s.mu.Lock(); defer s.mu.Unlock(); return slices.Clone(s.b) }

// inputRequiredResult is the InputRequiredResult.
type inputRequiredResult struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	RequestState  string                     `json:"requestState,omitempty"`
}

// inputRequired turns a handler's ErrInputRequired into the result that
// asks the client for what is missing, with the signed state of this
// round. ok is false when err is not ErrInputRequired of a stateless
// request that can ask for input.
func (s *Server) inputRequired(ctx context.Context, err error) (any, bool, error) {
	r := statelessOf(ctx)
	if r == nil || r.inputs == nil || !errors.Is(err, ErrInputRequired) {
		return nil, false, nil
	}
	in := r.inputs
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.pending) == 0 {
		return nil, true, errors.New("the handler returned ErrInputRequired without asking for input")
	}
	reqs, rerr := encodeInputRequests(in.pending)
	if rerr != nil {
		return nil, true, rerr
	}
	out := inputRequiredResult{ResultType: ResultInputRequired, InputRequests: reqs}
	state, serr := s.states.seal(r.method, in.target, in.responses, in.state)
	if serr != nil {
		return nil, true, serr
	}
	out.RequestState = state
	return out, true, nil
}
