package streamable

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strconv"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/jsontext"
	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
)

// The stateless revision (2026-07-28) over HTTP. A POST without
// Mcp-Session-Id that is not initialize is one stateless request: its
// MCP-Protocol-Version header must equal the protocol version in its
// _meta, and the Mcp-Method, Mcp-Name and Mcp-Param-* headers must agree
// with the body as headers.go describes (else -32020 with HTTP 400). It runs on a
// connection of its own that ends with its answer: there is no session
// id, no GET stream and nothing to DELETE. Its answer is JSON, or an event
// stream when notifications of the request (progress, log messages, a
// subscriptions/listen stream) come before it; error answers carry the
// HTTP status of their code (400, 404 for -32601, 500 for -32603).

// Header names of the stateless revision.
const (
	headerMethod = "Mcp-Method"
	headerName   = "Mcp-Name"
)

// statelessStatus is the HTTP status of a JSON-RPC error answer to a
// stateless request.
func statelessStatus(code int64) int {
	switch code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInternalError:
		return http.StatusInternalServerError
	case codeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusBadRequest
}

// answerStatus is the HTTP status of a JSON answer to a stateless
// request: 200 for a result, else by the error's code.
func answerStatus(data []byte) int {
	e := jsontext.Member(data, "error")
	if len(e) == 0 {
		return http.StatusOK
	}
	code, err := strconv.ParseInt(string(jsontext.Member(e, "code")), 10, 64)
	if err != nil {
		return http.StatusBadRequest
	}
	return statelessStatus(code)
}

// headerMismatch writes -32020 for a request whose headers disagree with
// its body.
func (h *Handler) headerMismatch(w http.ResponseWriter, id *jsonrpc.ID, msg string) {
	h.failID(w, nil, http.StatusBadRequest, core.CodeInvalidArgument, id, mcp.CodeHeaderMismatch, "Header mismatch: "+msg)
}

// targetOf is what Mcp-Name names for a method: the tool or prompt name,
// the resource URI or the task id; ok is false for other methods.
func targetOf(req *jsonrpc.Request) (string, bool) {
	key := targetKey(req.Method)
	if key == "" {
		return "", false
	}
	v, _ := jsontext.String(jsontext.Member(req.Params, key))
	return v, true
}

// targetKey is the member of params that Mcp-Name mirrors for method, or
// "" when the method names no target.
func targetKey(method string) string {
	switch method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet:
		return "name"
	case mcp.MethodResourcesRead:
		return "uri"
	case mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel:
		return "taskId"
	}
	return ""
}

// checkHeaders checks a stateless request's headers against its body and
// writes -32020 when they disagree. A _meta without a protocol version is
// left to the server, which answers -32602 saying what is missing.
func (h *Handler) checkHeaders(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) bool {
	id := &req.ID
	header := r.Header.Get(headerProtocol)
	if header == "" {
		h.headerMismatch(w, id, "no "+headerProtocol+" header. Without Mcp-Session-Id a request is of the stateless "+
			"revision and sends "+headerProtocol+": "+mcp.Version20260728+" (the version in its _meta); "+
			"a client of a session revision sends initialize first")
		return false
	}
	meta := jsontext.Member(req.Params, "_meta")
	if raw := jsontext.Member(meta, mcp.MetaProtocolVersion); len(raw) > 0 {
		if v, ok := jsontext.String(raw); ok && v != header {
			h.headerMismatch(w, id, "the "+headerProtocol+" header says "+clipText(header)+" but params._meta[\""+
				mcp.MetaProtocolVersion+"\"] says "+clipText(v)+"; send the same version in both")
			return false
		}
	}
	if why := checkStandardHeaders(r, req); why != "" {
		h.headerMismatch(w, id, why)
		return false
	}
	if why := h.checkParamHeaders(r, req); why != "" {
		h.headerMismatch(w, id, why)
		return false
	}
	return true
}

// trimHeader removes the optional whitespace HTTP allows around a header
// value.
func trimHeader(v string) string { return string(bytes.Trim([]byte(v), " \t")) }

// postStateless serves a POST without Mcp-Session-Id that is not
// initialize: one request of the stateless revision on a connection of its
// own.
func (h *Handler) postStateless(w http.ResponseWriter, r *http.Request, cred int, in jsonrpc.Incoming) {
	req, isReq := in.Message.(*jsonrpc.Request)
	if !isReq {
		if _, isNote := in.Message.(*jsonrpc.Notification); isNote {
			// Nothing to deliver it to: a stateless request is cancelled
			// by closing its HTTP connection.
			w.WriteHeader(http.StatusAccepted)
			return
		}
		h.fail(w, nil, http.StatusBadRequest, core.CodeInvalidArgument, "a response needs the session of the "+
			"request it answers: send it with that Mcp-Session-Id")
		return
	}
	if !h.checkHeaders(w, r, req) {
		return
	}
	slot := h.statelessSlots
	if req.Method == mcp.MethodSubscriptionsListen {
		client := remoteIP(r)
		if why := h.listens.acquire(client); why != "" {
			h.failID(w, nil, http.StatusServiceUnavailable, core.CodeResourceExhausted, &req.ID, codeUnavailable, why)
			return
		}
		defer h.listens.release(client)
		slot = nil // a listen takes no request slot
	}
	tools, ok := h.sessionTools(w, r)
	if !ok {
		return
	}
	s, status, why := h.newStatelessSession(cred, slot, tools)
	if s == nil {
		h.failID(w, nil, status, core.CodeResourceExhausted, &req.ID, codeUnavailable, why)
		return
	}
	defer func() {
		s.closeFor(endClosed)
		if slot != nil {
			slot.Release()
		}
	}()
	s.begin()
	defer s.end()
	h.exchange(w, r, s, in, exchangeSpec{id: req.ID, status: http.StatusOK, stateless: true})
}

// newStatelessSession opens the one-request connection of a stateless
// request, or reports why it cannot: at most transport.http.maxSessions
// stateless requests run at once (slot; nil for a listen, which is
// bounded by listens instead).
func (h *Handler) newStatelessSession(cred int, slot *core.Slots, tools *mcp.ToolSet) (*session, int, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.draining.Load() {
		return nil, http.StatusServiceUnavailable, "the server is shutting down; try again later"
	}
	if slot != nil && !slot.TryAcquire() {
		return nil, http.StatusServiceUnavailable, "too many stateless requests in flight: the server runs " +
			strconv.Itoa(h.cfg.MaxSessions) + " at once (transport.http.maxSessions); retry later"
	}
	s := newSession(h, "", cred)
	s.sess = h.srv.Connect(s, &mcp.SessionOptions{Transport: TransportName, Stateless: true, Tools: tools})
	h.serving.Add(1)
	go func() {
		defer h.serving.Done()
		_ = s.sess.Serve(h.ctx)
		h.srv.Shutdown(context.Background(), s.sess) // bounded by the server's ShutdownTimeout
		close(s.finished)
	}()
	return s, 0, ""
}

// statelessOnly answers 405 to a GET or DELETE of the stateless revision
// (no Mcp-Session-Id, MCP-Protocol-Version of the stateless revision) and
// reports whether it did.
func (h *Handler) statelessOnly(w http.ResponseWriter, r *http.Request, why string) bool {
	if r.Header.Get(headerSession) != "" || !slices.Contains(mcp.StatelessVersions(), r.Header.Get(headerProtocol)) {
		return false
	}
	w.Header().Set("Allow", "POST")
	h.fail(w, nil, http.StatusMethodNotAllowed, core.CodeInvalidArgument, why)
	return true
}

// statelessHeader reports whether the request's MCP-Protocol-Version
// header names the stateless revision: then even initialize is a request
// of that revision (where it does not exist).
func statelessHeader(r *http.Request) bool {
	return slices.Contains(mcp.StatelessVersions(), r.Header.Get(headerProtocol))
}
