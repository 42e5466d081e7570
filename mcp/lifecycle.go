package mcp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/jsontext"
	"github.com/mcprt/mcprt/jsonrpc"
)

// The protocol revisions that begin with initialize, oldest first.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	// LatestVersion is the answer to a client that asks for a revision the
	// server does not speak.
	LatestVersion = Version20251125
)

// SupportedVersions returns the session-based revisions mcprt negotiates,
// oldest first.
func SupportedVersions() []string {
	return []string{Version20241105, Version20250326, Version20250618, Version20251125}
}

// CodeNotInitialized is the JSON-RPC error code of a request that arrived
// before the session was running.
const CodeNotInitialized int64 = -32002

const maxCorrelationBytes = 128

// dispatcher is a session as its connection's jsonrpc.Dispatcher: the
// methods the engine calls stay off Session's exported API.
type dispatcher Session

// Route calls the session's route.
func (d *dispatcher) Route(ctx context.Context, req *jsonrpc.Request) jsonrpc.Route {
	return (*Session)(d).route(ctx, req)
}

// Notification calls the session's notification.
func (d *dispatcher) Notification(ctx context.Context, n *jsonrpc.Notification) {
	(*Session)(d).notification(ctx, n)
}

// Batch calls the session's batch.
func (d *dispatcher) Batch() *jsonrpc.Error { return (*Session)(d).batch() }

// route is the lifecycle gate and method router: the one place that
// decides what a request means in the session's current state. It runs on
// the reading goroutine, in arrival order.
func (sess *Session) route(_ context.Context, req *jsonrpc.Request) jsonrpc.Route {
	if sess.stateless || isStateless(req) {
		return sess.routeStateless(req)
	}
	st := sess.State()
	r, known := sess.routes[req.Method]
	spec := methodTable[req.Method]
	switch {
	case st == StateClosed:
		return jsonrpc.Route{Handler: noResponse}
	case known && spec.gate == gateStateless:
		return jsonrpc.Route{Err: jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found: "+
			jsontext.Quote(req.Method)+" exists only in the stateless revision "+Version20260728+
			" (send it with params._meta[\""+MetaProtocolVersion+"\"]), not in a session")}
	case known && spec.gate == gateAlways:
		return r
	case known && spec.gate == gateHandshake:
		if st != StateStarting {
			return jsonrpc.Route{Err: jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
				"Invalid Request: already initialized; send initialize once per connection")}
		}
		return r
	case st != StateRunning:
		return jsonrpc.Route{Err: sess.notInitialized(req)}
	case !known:
		return jsonrpc.Route{} // the engine's -32601
	}
	return r
}

var noResponse = jsonrpc.HandlerFunc(func(context.Context, *jsonrpc.Request) (any, error) {
	return nil, jsonrpc.ErrNoResponse
})

// notification handles the client's notifications on the reading
// goroutine.
func (sess *Session) notification(_ context.Context, n *jsonrpc.Notification) {
	switch n.Method {
	case NotifyInitialized:
		switch from, moved := sess.advance(evReady); {
		case moved:
		case from == StateStarting:
			sess.log.Warn("ignored notification: the client has not sent initialize yet",
				"method", n.Method, "state", from.String())
		default:
			sess.log.Debug("ignored repeated notification", "method", n.Method)
		}
	case NotifyCancelled:
		sess.cancelled(n)
	case NotifyRootsListChanged:
		sess.rootsChanged()
	default:
		sess.log.Debug("ignored notification", "method", jsontext.Clip(n.Method, jsontext.MaxEcho),
			"state", sess.State().String())
	}
}

// BatchAllowed reports whether the session takes JSON-RPC batches now:
// only under the revision that has them (2025-03-26), once initialized.
func (sess *Session) BatchAllowed() bool { return sess.batch() == nil }

// batch admits JSON-RPC batches only under the revision that has them.
func (sess *Session) batch() *jsonrpc.Error {
	if sess.State() != StateStarting && sess.ProtocolVersion() == Version20250326 {
		return nil
	}
	return jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: batches are not part of "+
		"the negotiated protocol revision (only 2025-03-26 has them); send one message per line")
}

// errorData gives every error response's data a correlationId: the
// client's params._meta.correlationId when there is one, otherwise the
// connection's.
func (sess *Session) errorData(params json.RawMessage, data map[string]any) map[string]any {
	if _, ok := data["correlationId"]; ok {
		return data
	}
	cid := clientCorrelationID(params)
	if cid == "" {
		cid = sess.cid
	}
	if data == nil {
		return map[string]any{"correlationId": cid}
	}
	out := make(map[string]any, len(data)+1)
	for k, v := range data {
		out[k] = v
	}
	out["correlationId"] = cid
	return out
}

// stateErrorData is the data of a -32002 state error.
type stateErrorData struct {
	Code          core.Code `json:"code"`
	Message       string    `json:"message"`
	CorrelationID string    `json:"correlationId"`
}

func (sess *Session) notInitialized(req *jsonrpc.Request) *jsonrpc.Error {
	msg := "the session is not initialized: send initialize, then notifications/initialized, before " +
		jsontext.Quote(req.Method)
	if sess.State() == StateInitializing {
		msg = "the session is not initialized yet: send notifications/initialized before " + jsontext.Quote(req.Method)
	}
	if req.Method == MethodToolsCall {
		p, _ := parseCallParams(req.Params)
		name, _ := jsontext.String(p.Name)
		sess.protocolErrorRecord(jsontext.Clip(name, jsontext.MaxEcho), sess.cid)
	}
	return &jsonrpc.Error{Code: CodeNotInitialized, Message: "Not initialized",
		Data: stateErrorData{Code: core.CodeNotInitialized, Message: msg, CorrelationID: sess.cid}}
}

// initializeParams are the params of initialize.
type initializeParams struct {
	ProtocolVersion *string          `json:"protocolVersion"`
	Capabilities    *json.RawMessage `json:"capabilities"`
	ClientInfo      *json.RawMessage `json:"clientInfo"`
}

// initializeResult is the InitializeResult.
type initializeResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    capabilities   `json:"capabilities"`
	ServerInfo      Implementation `json:"serverInfo"`
	Instructions    string         `json:"instructions,omitempty"`
}

func (sess *Session) initialize(_ context.Context, req *jsonrpc.Request) (any, error) {
	var p initializeParams
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil {
		return nil, invalidParams(`initialize needs params.protocolVersion, a string such as "` + LatestVersion + `"`)
	}
	var caps ClientCapabilities
	if p.Capabilities != nil {
		if !isObject(*p.Capabilities) || json.Unmarshal(*p.Capabilities, &caps) != nil {
			return nil, invalidParams("initialize params.capabilities must be an object whose members are objects")
		}
		caps.Raw = append(json.RawMessage(nil), *p.Capabilities...)
	}
	var ci Implementation
	if p.ClientInfo != nil {
		if !isObject(*p.ClientInfo) || json.Unmarshal(*p.ClientInfo, &ci) != nil {
			return nil, invalidParams("initialize params.clientInfo must be an object with string name and version")
		}
	}
	version := LatestVersion
	for _, v := range SupportedVersions() {
		if v == *p.ProtocolVersion {
			version = v
		}
	}
	sess.mu.Lock()
	sess.version, sess.clientCaps, sess.clientInfo = version, caps, ci
	sess.mu.Unlock()
	sess.advance(evInitialized)
	sess.log.Info("initialize", "requestedVersion", jsontext.Clip(*p.ProtocolVersion, 64), "protocolVersion", version,
		"clientName", jsontext.Clip(ci.Name, jsontext.MaxEcho), "clientVersion", jsontext.Clip(ci.Version, 64))
	return initializeResult{
		ProtocolVersion: version,
		Capabilities:    sess.srv.capabilities().forVersion(version),
		ServerInfo:      sess.srv.Info(),
		Instructions:    sess.srv.opts.Instructions,
	}, nil
}

// emptyResult is the {} that ping and shutdown answer with.
var emptyResult = jsonrpc.CompactJSON(`{}`)

func (sess *Session) ping(context.Context, *jsonrpc.Request) (any, error) { return emptyResult, nil }

func (sess *Session) handleShutdown(context.Context, *jsonrpc.Request) (any, error) {
	sess.mu.Lock()
	sess.shutdown = true
	sess.mu.Unlock()
	sess.log.Info("shutdown requested by the client")
	return emptyResult, nil
}

// cancelled handles notifications/cancelled: the request it names gets its
// context cancelled and no response.
func (sess *Session) cancelled(n *jsonrpc.Notification) {
	var p struct {
		RequestID *jsonrpc.ID `json:"requestId"`
		Reason    string      `json:"reason"`
	}
	if err := json.Unmarshal(n.Params, &p); err != nil || p.RequestID == nil {
		sess.srv.engineLog.Warn("ignored notifications/cancelled without a valid params.requestId",
			"connectionCorrelationId", sess.cid)
		return
	}
	id := jsontext.Clip(p.RequestID.String(), jsontext.MaxEcho)
	if !sess.conn.Cancel(*p.RequestID, errCancelledByClient) {
		sess.log.Debug("notifications/cancelled names no request in flight", "requestId", id)
		return
	}
	sess.log.Info("request cancelled by the client", "requestId", id,
		"reason", jsontext.Clip(p.Reason, 256))
}

// errCancelledByClient is the cause of a context cancelled by
// notifications/cancelled.
var errCancelledByClient = errors.New("mcp: the client cancelled the request")

// ErrCancelled reports, through context.Cause of a handler's context, that
// the client cancelled the request (notifications/cancelled).
var ErrCancelled = errCancelledByClient

// cancelNotification is the notifications/cancelled the server sends when
// it abandons a request it sent to the client.
func cancelNotification(id jsonrpc.ID, cause error) (string, any) {
	reason := "the server no longer needs the answer"
	if cause != nil {
		reason += ": " + cause.Error()
	}
	return NotifyCancelled, map[string]any{"requestId": id, "reason": reason}
}

// clientCorrelationID returns params._meta.correlationId when it is a
// non-empty string of at most 128 bytes, else "". Member names are matched
// exactly.
func clientCorrelationID(params json.RawMessage) string {
	return metaCorrelationID(jsontext.Member(params, "_meta"))
}

// metaCorrelationID returns _meta.correlationId from a raw _meta object
// when it is a non-empty string of at most 128 bytes, else "".
func metaCorrelationID(meta []byte) string {
	cid, _ := jsontext.String(jsontext.Member(meta, "correlationId"))
	if len(cid) > maxCorrelationBytes {
		return ""
	}
	return cid
}
