package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/mcprt/mcprt/internal/jsontext"
	"github.com/mcprt/mcprt/jsonrpc"
)

// The stateless revision. A request of it carries its protocol version,
// the client's capabilities and (usually) the client's name in _meta; it
// needs no initialize and belongs to no session. mcprt answers it on any
// connection, beside the session revisions: a request whose _meta names a
// protocol version is handled statelessly, everything else goes through
// the session lifecycle.
const (
	// Version20260728 is the stateless revision.
	Version20260728 = "2026-07-28"

	// The _meta keys of the stateless revision.
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"

	// Methods only the stateless revision has.
	MethodServerDiscover            = "server/discover"
	MethodSubscriptionsListen       = "subscriptions/listen"
	NotifySubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"

	// Methods of the tasks extension (io.modelcontextprotocol/tasks).
	MethodTasksGet    = "tasks/get"
	MethodTasksUpdate = "tasks/update"
	MethodTasksCancel = "tasks/cancel"

	// Error codes of the stateless revision.
	CodeHeaderMismatch             int64 = -32020 // HTTP headers disagree with the body
	CodeMissingClientCapability    int64 = -32021 // the request needs a capability the client did not declare
	CodeUnsupportedProtocolVersion int64 = -32022 // the requested revision is not served
)

// StatelessVersions returns the revisions served without a session.
func StatelessVersions() []string { return []string{Version20260728} }

// AllVersions returns every revision mcprt serves, oldest first: the
// session revisions, then the stateless one.
func AllVersions() []string { return append(SupportedVersions(), StatelessVersions()...) }

// removedMethods are the session revisions' methods the stateless revision
// does not have: under it they are -32601.
var removedMethods = map[string]string{
	MethodInitialize:           "there is no handshake: every request carries its own _meta (use server/discover to learn what the server offers)",
	MethodPing:                 "there is no connection to keep alive",
	MethodShutdown:             "there is no session to end",
	MethodLoggingSetLevel:      "send _meta[\"" + MetaLogLevel + "\"] with each request instead",
	MethodResourcesSubscribe:   "use subscriptions/listen with notifications.resourceSubscriptions instead",
	MethodResourcesUnsubscribe: "cancel the subscriptions/listen request instead",
}

// statelessOnly are the methods that exist only in the stateless revision:
// they are always handled statelessly, so that a request of them without
// the _meta it needs is told what is missing. The tasks extension's
// methods are not among them: without the stateless _meta they are
// -32601, as for any method a session revision does not have.
func statelessOnly(method string) bool {
	switch method {
	case MethodServerDiscover, MethodSubscriptionsListen:
		return true
	}
	return false
}

var protocolVersionKey = []byte(MetaProtocolVersion)

// isStateless reports whether a request is of the stateless revision: its
// method exists only there, or its _meta names a protocol version. The
// common session request pays one substring search.
func isStateless(req *jsonrpc.Request) bool {
	if statelessOnly(req.Method) {
		return true
	}
	if !bytes.Contains(req.Params, protocolVersionKey) {
		return false
	}
	return len(jsontext.Member(jsontext.Member(req.Params, "_meta"), MetaProtocolVersion)) > 0
}

// statelessReq is what one stateless request declared in its _meta, and
// the state of its input-required exchange. It rides in the request's
// context (see requestOf).
type statelessReq struct {
	version  string
	caps     ClientCapabilities
	info     Implementation
	logLevel int // the severity asked for, or -1: send no log messages
	method   string
	inputs   *inputRound // nil for methods that cannot ask for input
}

type statelessKey struct{}

// statelessOf returns the stateless request ctx belongs to, or nil for a
// request of a session.
func statelessOf(ctx context.Context) *statelessReq {
	r, _ := ctx.Value(statelessKey{}).(*statelessReq)
	return r
}

// metaError is -32602 for a _meta that lacks what the stateless revision
// requires.
func metaError(what string) *jsonrpc.Error {
	return invalidParams(what + `. A request without a session carries params._meta with "` + MetaProtocolVersion +
		`" ("` + Version20260728 + `") and "` + MetaClientCapabilities + `" (an object, {} for none); ` +
		`a client of a session revision sends initialize first instead`)
}

// parseStatelessMeta reads and checks the _meta of a stateless request.
func parseStatelessMeta(req *jsonrpc.Request) (*statelessReq, *jsonrpc.Error) {
	if len(req.Params) > 0 && !isObject(req.Params) {
		return nil, invalidParams("params must be an object")
	}
	meta := jsontext.Member(req.Params, "_meta")
	switch {
	case len(meta) == 0:
		return nil, metaError("params._meta is missing")
	case !isObject(meta):
		return nil, metaError("params._meta must be an object")
	}
	r := &statelessReq{logLevel: -1, method: req.Method}
	rawVersion := jsontext.Member(meta, MetaProtocolVersion)
	version, ok := jsontext.String(rawVersion)
	switch {
	case len(rawVersion) == 0:
		return nil, metaError(`params._meta has no "` + MetaProtocolVersion + `"`)
	case !ok:
		return nil, metaError(`params._meta["` + MetaProtocolVersion + `"] must be a string`)
	}
	r.version = version
	rawCaps := jsontext.Member(meta, MetaClientCapabilities)
	switch {
	case len(rawCaps) == 0:
		return nil, metaError(`params._meta has no "` + MetaClientCapabilities + `"`)
	case !isObject(rawCaps) || json.Unmarshal(rawCaps, &r.caps) != nil:
		return nil, metaError(`params._meta["` + MetaClientCapabilities + `"] must be an object whose members are objects`)
	}
	r.caps.Raw = append(json.RawMessage(nil), rawCaps...)
	if raw := jsontext.Member(meta, MetaClientInfo); len(raw) > 0 {
		if !isObject(raw) || json.Unmarshal(raw, &r.info) != nil {
			return nil, invalidParams(`params._meta["` + MetaClientInfo + `"] must be an object {name, version}`)
		}
	}
	if raw := jsontext.Member(meta, MetaLogLevel); len(raw) > 0 {
		s, _ := jsontext.String(raw)
		if r.logLevel = LogLevel(s).severity(); r.logLevel < 0 {
			return nil, invalidParams(`params._meta["` + MetaLogLevel + `"] must be one of ` + levelNames())
		}
	}
	if !slices.Contains(StatelessVersions(), version) {
		return nil, unsupportedVersion(version)
	}
	return r, nil
}

func unsupportedVersion(requested string) *jsonrpc.Error {
	shown := jsontext.Quote(jsontext.Clip(requested, 64))
	msg := "Unsupported protocol version " + shown + ": requests without a session speak " +
		strings.Join(StatelessVersions(), ", ")
	supported := AllVersions()
	if slices.Contains(SupportedVersions(), requested) {
		msg += "; " + shown + " is a session revision: send initialize first, without the stateless _meta"
		supported = StatelessVersions()
	} else {
		msg += "; the session revisions " + strings.Join(SupportedVersions(), ", ") + " begin with initialize"
	}
	// A map, so that the error's data gets its correlationId like every other.
	return &jsonrpc.Error{Code: CodeUnsupportedProtocolVersion, Message: msg,
		Data: map[string]any{"supported": supported, "requested": jsontext.Clip(requested, 128)}}
}

// routeStateless routes a request of the stateless revision: no lifecycle
// gate, its own _meta instead of the session's negotiation, and every
// result completed with what the revision requires.
func (sess *Session) routeStateless(req *jsonrpc.Request) jsonrpc.Route {
	if sess.State() == StateClosed {
		return jsonrpc.Route{Handler: noResponse}
	}
	if why, removed := removedMethods[req.Method]; removed {
		return jsonrpc.Route{Err: jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found: "+
			jsontext.Quote(req.Method)+" is not part of the stateless revision "+Version20260728+"; "+why)}
	}
	spec, known := methodTable[req.Method]
	if !known {
		return jsonrpc.Route{} // the engine's -32601
	}
	r, err := parseStatelessMeta(req)
	if err != nil {
		return jsonrpc.Route{Err: err}
	}
	if spec.inputs {
		in, ierr := sess.srv.parseInputRound(req, r)
		if ierr != nil {
			return jsonrpc.Route{Err: ierr}
		}
		r.inputs = in
	}
	h := spec.handle
	return jsonrpc.Route{
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			return h(sess, context.WithValue(ctx, statelessKey{}, r), req)
		}),
		Inline: spec.inline,
		Result: sess.srv.completeResult(req.Method),
	}
}

// versionFor is the revision a request speaks: its own when stateless,
// else the session's.
func (sess *Session) versionFor(ctx context.Context) string {
	if r := statelessOf(ctx); r != nil {
		return r.version
	}
	return sess.ProtocolVersion()
}

// capsFor is what the client declared: in the request's _meta when
// stateless, else in initialize.
func (sess *Session) capsFor(ctx context.Context) ClientCapabilities {
	if r := statelessOf(ctx); r != nil {
		return r.caps
	}
	return sess.ClientCapabilities()
}

// statelessNotFound is the error of a resource that does not exist: the
// session revisions' -32002, under the stateless revision -32602 with the
// same data {code, uri}.
func statelessNotFound(ctx context.Context, e *jsonrpc.Error) *jsonrpc.Error {
	if statelessOf(ctx) == nil {
		return e
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: e.Message, Data: e.Data}
}

// inputOutcome turns what a prompt or resource handler returned under a
// stateless request into its answer when the handler asked for input
// (an input_required result) or needs a capability the client lacks
// (-32021). handled is false for every other error.
func (s *Server) inputOutcome(ctx context.Context, err error) (result any, handled bool, rerr error) {
	if statelessOf(ctx) == nil {
		return nil, false, nil
	}
	var mc *MissingCapabilityError
	if errors.As(err, &mc) {
		return nil, true, mc.rpcError()
	}
	res, ok, ierr := s.inputRequired(ctx, err)
	if !ok {
		return nil, false, nil
	}
	if ierr != nil {
		var je *jsonrpc.Error
		if errors.As(ierr, &je) { // the client's fault (too much input): -32602 as made
			return nil, true, je
		}
		return nil, true, jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: "+ierr.Error())
	}
	return res, true, nil
}

// ClientCapabilitiesFor returns what the client declared for the request
// whose context ctx is: its _meta capabilities under the stateless
// revision, else what it declared in the session's initialize.
func ClientCapabilitiesFor(ctx context.Context, sess *Session) ClientCapabilities {
	return sess.capsFor(ctx)
}
