package mcp

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/jsontext"
	"github.com/mcprt/mcprt/jsonrpc"
)

// listResources is resources/list: the resources sorted by URI,
// tools.pageSize at a time, each listed as the session's revision allows.
func (sess *Session) listResources(ctx context.Context, req *jsonrpc.Request) (any, error) {
	cursor, err := cursorParam(req.Method, req.Params)
	if err != nil {
		return nil, err
	}
	page, next, err := sess.srv.resources.static.page(cursor, sess.srv.opts.Limits.PageSize)
	if err != nil {
		return nil, err
	}
	vi := versionIndex(sess.versionFor(ctx))
	items := make([][]byte, len(page))
	for i, r := range page {
		items[i] = r.listings[vi]
	}
	return listJSON("resources", items, next), nil
}

// listResourceTemplates is resources/templates/list: the templates sorted
// by uriTemplate, tools.pageSize at a time.
func (sess *Session) listResourceTemplates(ctx context.Context, req *jsonrpc.Request) (any, error) {
	cursor, err := cursorParam(req.Method, req.Params)
	if err != nil {
		return nil, err
	}
	page, next, err := sess.srv.resources.templates.page(cursor, sess.srv.opts.Limits.PageSize)
	if err != nil {
		return nil, err
	}
	vi := versionIndex(sess.versionFor(ctx))
	items := make([][]byte, len(page))
	for i, t := range page {
		items[i] = t.listings[vi]
	}
	return listJSON("resourceTemplates", items, next), nil
}

// resourceNotFound is the -32002 error of a URI that names nothing.
func resourceNotFound(uri, why string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeResourceNotFound, Message: "Resource not found: " + why,
		Data: map[string]any{"code": string(core.CodeNotFound), "uri": uri}}
}

func noSuchResource(uri string) *jsonrpc.Error {
	return resourceNotFound(uri, jsontext.Quote(jsontext.Clip(uri, jsontext.MaxEcho))+
		" is no listed resource and matches no resource template; call resources/list and "+
		"resources/templates/list to see what this server serves")
}

// readResource is resources/read: the URI is resolved to a resource or a
// template, its handler runs (panics recovered), and the contents are
// checked and sent, bounded by tools.maxResultBytes.
func (sess *Session) readResource(ctx context.Context, req *jsonrpc.Request) (any, error) {
	uri, meta, err := uriParams(req.Method, req.Params)
	if err != nil {
		return nil, err
	}
	target, ok := sess.srv.resources.resolve(uri)
	if !ok {
		return nil, statelessNotFound(ctx, noSuchResource(uri))
	}
	what := "reading resource " + jsontext.Quote(jsontext.Clip(uri, jsontext.MaxEcho))
	rreq := &ReadResourceRequest{Session: sess, URI: uri, Template: target.template, Variables: target.variables,
		Meta: meta, ProtocolVersion: sess.versionFor(ctx)}
	res, err := callSafely(sess, what, func() (*ReadResourceResult, error) { return target.handler(ctx, rreq) })
	if err != nil {
		if out, handled, ierr := sess.srv.inputOutcome(ctx, err); handled {
			return out, ierr
		}
		var ce *core.Error
		if isCoreError(err, &ce) && ce.Code == core.CodeNotFound {
			return nil, statelessNotFound(ctx, resourceNotFound(uri, ce.Message))
		}
		sess.log.Warn("resources/read failed", "uri", jsontext.Clip(uri, jsontext.MaxEcho), "error", err.Error())
		return nil, handlerFailure(what, err)
	}
	out, err := encodeReadResult(res, uri)
	if err != nil {
		sess.log.Warn("resources/read returned a bad result", "uri", jsontext.Clip(uri, jsontext.MaxEcho), "error", err.Error())
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: "+what+": "+err.Error())
	}
	if limit := sess.srv.opts.Limits.MaxResultBytes; len(out) > limit {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, fmt.Sprintf("Internal error: %s: the result is %d bytes, "+
			"over the limit of %d (tools.maxResultBytes); the server's author should split the resource", what, len(out), limit))
	}
	return jsonrpc.CompactJSON(out), nil
}

// contentsWire is one item of ReadResourceResult.contents.
type contentsWire struct {
	URI      string  `json:"uri"`
	MIMEType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
}

// wireContents returns rc as sent: a blob when Blob is set (it must be
// base64), text otherwise (also when empty); an empty URI becomes uri.
func wireContents(rc ResourceContents, uri string) (contentsWire, error) {
	w := contentsWire{URI: rc.URI, MIMEType: rc.MIMEType}
	if w.URI == "" {
		w.URI = uri
	}
	switch {
	case rc.Blob != "" && rc.Text != "":
		return w, fmt.Errorf("it has both text and blob; set one (BlobResource for binary data)")
	case rc.Blob != "":
		if !isBase64(rc.Blob) {
			return w, fmt.Errorf("its blob is not standard base64; make it with BlobResource")
		}
		w.Blob = &rc.Blob
	default:
		w.Text = &rc.Text
	}
	return w, nil
}

// encodeReadResult encodes a handler's ReadResourceResult.
func encodeReadResult(res *ReadResourceResult, uri string) ([]byte, error) {
	wire := struct {
		Contents []contentsWire `json:"contents"`
		Meta     map[string]any `json:"_meta,omitempty"`
	}{Contents: make([]contentsWire, len(res.Contents)), Meta: res.Meta}
	for i, rc := range res.Contents {
		w, err := wireContents(rc, uri)
		if err != nil {
			return nil, fmt.Errorf("contents[%d]: %v", i, err)
		}
		wire.Contents[i] = w
	}
	out, err := marshalCompact(wire)
	if err != nil {
		return nil, fmt.Errorf("the result cannot be encoded as JSON: %v", err)
	}
	return out, nil
}

// isBase64 reports whether s is standard base64 with padding, without
// decoding it.
func isBase64(s string) bool {
	if len(s)%4 != 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
		case c == '=' && (i == len(s)-1 || i == len(s)-2 && s[len(s)-1] == '='):
		default:
			return false
		}
	}
	return true
}

// maxSubscriptionsPerSession bounds the URIs one session may subscribe to.
const maxSubscriptionsPerSession = 4096

// subscriptions are the URIs each session subscribed to.
type subscriptions struct {
	mu        sync.Mutex
	bySession map[*Session]map[string]struct{} // guarded by mu
}

// add subscribes sess to uri (idempotent). A session's first subscription
// starts a goroutine that forgets the session's subscriptions when it
// closes.
func (subs *subscriptions) add(sess *Session, uri string) error {
	subs.mu.Lock()
	defer subs.mu.Unlock()
	set, ok := subs.bySession[sess]
	if !ok {
		set = map[string]struct{}{}
		subs.bySession[sess] = set
		go func() {
			<-sess.Done()
			subs.mu.Lock()
			delete(subs.bySession, sess)
			subs.mu.Unlock()
		}()
	}
	if _, dup := set[uri]; !dup && len(set) >= maxSubscriptionsPerSession {
		return invalidParams(fmt.Sprintf("this session already has %d subscriptions, the limit; "+
			"unsubscribe from some before subscribing to more", maxSubscriptionsPerSession))
	}
	set[uri] = struct{}{}
	return nil
}

// remove unsubscribes sess from uri (idempotent).
func (subs *subscriptions) remove(sess *Session, uri string) {
	subs.mu.Lock()
	defer subs.mu.Unlock()
	delete(subs.bySession[sess], uri)
}

// subscribers returns the sessions subscribed to uri.
func (subs *subscriptions) subscribers(uri string) []*Session {
	subs.mu.Lock()
	defer subs.mu.Unlock()
	var out []*Session
	for sess, set := range subs.bySession {
		if _, ok := set[uri]; ok {
			out = append(out, sess)
		}
	}
	return out
}

// subscribed reports whether sess is subscribed to uri.
func (subs *subscriptions) subscribed(sess *Session, uri string) bool {
	subs.mu.Lock()
	defer subs.mu.Unlock()
	_, ok := subs.bySession[sess][uri]
	return ok
}

// subscribeResource is resources/subscribe: the session hears of updates
// to the URI (Server.ResourceUpdated) until it unsubscribes or closes. The
// URI must name a resource or match a template; subscribing twice is
// subscribing once.
func (sess *Session) subscribeResource(_ context.Context, req *jsonrpc.Request) (any, error) {
	uri, _, err := uriParams(req.Method, req.Params)
	if err != nil {
		return nil, err
	}
	rs := sess.srv.resources
	if _, ok := rs.resolve(uri); !ok && !rs.subs.subscribed(sess, uri) {
		return nil, noSuchResource(uri)
	}
	if err := rs.subs.add(sess, uri); err != nil {
		return nil, err
	}
	sess.srv.subscribed(uri)
	return emptyResult, nil
}

// unsubscribeResource is resources/unsubscribe; unsubscribing from a URI
// the session is not subscribed to succeeds.
func (sess *Session) unsubscribeResource(_ context.Context, req *jsonrpc.Request) (any, error) {
	uri, _, err := uriParams(req.Method, req.Params)
	if err != nil {
		return nil, err
	}
	sess.srv.resources.subs.remove(sess, uri)
	return emptyResult, nil
}

// ResourceUpdated tells every running session subscribed to uri that the
// resource changed (notifications/resources/updated {uri}); sessions that
// did not subscribe hear nothing. uri is compared exactly with the URIs
// sessions subscribed to. It returns how many sessions it told.
func (s *Server) ResourceUpdated(ctx context.Context, uri string) int {
	params := map[string]string{"uri": uri}
	n := s.listeners.notify(NotifyResourcesUpdated, uri)
	for _, sess := range s.resources.subs.subscribers(uri) {
		if sess.State() != StateRunning {
			continue
		}
		if err := sess.Notify(ctx, NotifyResourcesUpdated, params); err != nil {
			sess.log.Debug("could not send a notification", "method", NotifyResourcesUpdated, "error", err.Error())
			continue
		}
		n++
	}
	return n
}
