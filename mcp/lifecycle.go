package mcp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mcprt/mcprt/core"
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

// SupportedVersions lists the session-based revisions mcprt negotiates.
var SupportedVersions = []string{Version20241105, Version20250326, Version20250618, Version20251125}

// The MCP method names the lifecycle uses.
const (
	MethodInitialize    = "initialize"
	MethodPing          = "ping"
	MethodShutdown      = "shutdown"
	NotifyInitialized   = "notifications/initialized"
	NotifyCancelled     = "notifications/cancelled"
	maxCorrelationBytes = 128
)

// clientInfo is what the client said about itself in initialize.
type clientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// emptyResult is the {} that ping and shutdown answer with.
var emptyResult = json.RawMessage(`{}`)

// router builds the session's state machine: the lifecycle gate and the
// methods of the MCP layer.
func (sess *Session) router() *jsonrpc.Router {
	r := jsonrpc.NewRouter(jsonrpc.RouterConfig{
		Initialized:        NotifyInitialized,
		NotInitialized:     sess.notInitialized,
		AlreadyInitialized: alreadyInitialized,
	})
	r.Handle(MethodInitialize, jsonrpc.Method{Phase: jsonrpc.PhaseHandshake, Inline: true,
		Handler: jsonrpc.HandlerFunc(sess.initialize)})
	r.Handle(MethodPing, jsonrpc.Method{Phase: jsonrpc.PhaseAlways, Inline: true,
		Handler: jsonrpc.HandlerFunc(ping)})
	r.Handle(MethodShutdown, jsonrpc.Method{Phase: jsonrpc.PhaseRunning, Inline: true, CloseAfter: true,
		Handler: jsonrpc.HandlerFunc(sess.handleShutdown)})
	r.HandleNotification(NotifyCancelled, jsonrpc.Notify{Phase: jsonrpc.PhaseAlways,
		Handler: jsonrpc.NotificationFunc(sess.cancelled)})
	sess.registerMethods(r)
	return r
}

// stateErrorData is the data of a -32002 state error (SPEC §6).
type stateErrorData struct {
	Code          core.Code `json:"code"`
	Message       string    `json:"message"`
	CorrelationID string    `json:"correlationId"`
}

func (sess *Session) notInitialized(c *jsonrpc.Conn, req *jsonrpc.Request) *jsonrpc.Error {
	msg := "the session is not initialized: send initialize, then notifications/initialized, before " +
		quoteString(req.Method)
	if c.State() == jsonrpc.StateInitializing {
		msg = "the session is not initialized yet: send notifications/initialized before " + quoteString(req.Method)
	}
	if req.Method == MethodToolsCall {
		p, _ := parseCallParams(req.Params)
		name, _ := stringValue(p.Name)
		sess.protocolErrorRecord(name, sess.cid)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeNotInitialized, Message: "Not initialized",
		Data: stateErrorData{Code: core.CodeNotInitialized, Message: msg, CorrelationID: sess.cid}}
}

func alreadyInitialized(*jsonrpc.Conn, *jsonrpc.Request) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
		"Invalid Request: already initialized; send initialize once per connection")
}

// initializeParams are the params of initialize.
type initializeParams struct {
	ProtocolVersion *string          `json:"protocolVersion"`
	Capabilities    *json.RawMessage `json:"capabilities"`
	ClientInfo      *json.RawMessage `json:"clientInfo"`
}

// initializeResult is the InitializeResult.
type initializeResult struct {
	ProtocolVersion string       `json:"protocolVersion"`
	Capabilities    capabilities `json:"capabilities"`
	ServerInfo      serverInfo   `json:"serverInfo"`
	Instructions    string       `json:"instructions,omitempty"`
}

type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// capabilities advertise exactly what is implemented.
type capabilities struct {
	Tools *listChanged `json:"tools,omitempty"`
}

type listChanged struct {
	ListChanged bool `json:"listChanged"`
}

func (sess *Session) initialize(_ context.Context, req *jsonrpc.Request) (any, error) {
	var p initializeParams
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil {
		return nil, invalidParams(`initialize needs params.protocolVersion, a string such as "` + LatestVersion + `"`)
	}
	if p.Capabilities != nil && !isObject(*p.Capabilities) {
		return nil, invalidParams("initialize params.capabilities must be an object")
	}
	var ci clientInfo
	if p.ClientInfo != nil {
		if !isObject(*p.ClientInfo) || json.Unmarshal(*p.ClientInfo, &ci) != nil {
			return nil, invalidParams("initialize params.clientInfo must be an object with string name and version")
		}
	}
	version := LatestVersion
	for _, v := range SupportedVersions {
		if v == *p.ProtocolVersion {
			version = v
		}
	}
	sess.mu.Lock()
	sess.version = version
	sess.mu.Unlock()
	sess.conn.SetBatching(version == Version20250326)
	sess.log.Info("initialize", "requestedVersion", *p.ProtocolVersion, "protocolVersion", version,
		"clientName", ci.Name, "clientVersion", ci.Version)
	cfg := sess.srv.cfg
	return initializeResult{
		ProtocolVersion: version,
		Capabilities:    sess.srv.capabilities(),
		ServerInfo:      serverInfo{Name: cfg.Server.Name, Version: cfg.Server.Version},
		Instructions:    cfg.Server.Instructions,
	}, nil
}

func ping(context.Context, *jsonrpc.Request) (any, error) { return emptyResult, nil }

func (sess *Session) handleShutdown(context.Context, *jsonrpc.Request) (any, error) {
	sess.mu.Lock()
	sess.shutdown = true
	sess.mu.Unlock()
	sess.log.Info("shutdown requested by the client")
	return emptyResult, nil
}

// cancelled handles notifications/cancelled: the request it names gets its
// context cancelled and no response.
func (sess *Session) cancelled(_ context.Context, n *jsonrpc.Notification) {
	var p struct {
		RequestID *jsonrpc.ID `json:"requestId"`
		Reason    string      `json:"reason"`
	}
	if err := json.Unmarshal(n.Params, &p); err != nil || p.RequestID == nil {
		sess.log.Warn("ignored notifications/cancelled without a valid params.requestId")
		return
	}
	if !sess.conn.Cancel(*p.RequestID, errCancelledByClient) {
		sess.log.Debug("notifications/cancelled names no request in flight", "requestId", p.RequestID.String())
		return
	}
	sess.log.Info("request cancelled by the client", "requestId", p.RequestID.String(),
		"reason", p.Reason)
}

// errCancelledByClient is the cause of a context cancelled by
// notifications/cancelled.
var errCancelledByClient = errors.New("mcp: the client cancelled the request")

// clientCorrelationID returns params._meta.correlationId when it is a
// non-empty string of at most 128 bytes, else "". Member names are matched
// exactly.
func clientCorrelationID(params json.RawMessage) string {
	var meta []byte
	eachMember(params, func(key, value []byte) bool {
		if keyIs(key, "_meta") {
			meta = value
			return false
		}
		return true
	})
	return metaCorrelationID(meta)
}

// metaCorrelationID returns _meta.correlationId from a raw _meta object
// when it is a non-empty string of at most 128 bytes, else "".
func metaCorrelationID(meta []byte) string {
	cid := ""
	eachMember(meta, func(key, value []byte) bool {
		if keyIs(key, "correlationId") {
			cid, _ = stringValue(value)
			return false
		}
		return true
	})
	if len(cid) > maxCorrelationBytes {
		return ""
	}
	return cid
}
