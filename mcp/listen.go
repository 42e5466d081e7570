package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/mcprt/mcprt/internal/jsontext"
	"github.com/mcprt/mcprt/jsonrpc"
)

// discoverResult is the DiscoverResult (resultType, _meta and the caching
// hints are added with every stateless result).
type discoverResult struct {
	SupportedVersions []string     `json:"supportedVersions"`
	Capabilities      capabilities `json:"capabilities"`
	Instructions      string       `json:"instructions,omitempty"`
}

// discover answers server/discover: the revisions served (the session
// ones through initialize, the stateless one per request), what the server
// offers, and its instructions.
func (sess *Session) discover(context.Context, *jsonrpc.Request) (any, error) {
	s := sess.srv
	return discoverResult{SupportedVersions: AllVersions(), Capabilities: s.capabilities().withExtensions(s),
		Instructions: s.opts.Instructions}, nil
}

// listenFilter is a SubscriptionFilter: the notifications a
// subscriptions/listen stream carries.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// maxListenURIs bounds the resources one listen stream may watch.
const maxListenURIs = 1000

// listener is one open subscriptions/listen stream.
type listener struct {
	sess   *Session
	ctx    context.Context // the listen request's: notifications belong to it
	id     json.RawMessage // the listen request's id, as sent
	filter listenFilter
	stop   chan struct{} // closed when the server ends the stream
	done   chan struct{} // closed when the stream's handler returned
	// mu is held while the acknowledgement is sent and while a
	// notification is: nothing overtakes the acknowledgement, and nothing
	// that happens after it is missed.
	mu sync.Mutex
}

// listeners are the server's open listen streams.
type listeners struct {
	mu  sync.Mutex
	set map[*listener]struct{}
}

func (l *listeners) add(x *listener) {
	l.mu.Lock()
	if l.set == nil {
		l.set = map[*listener]struct{}{}
	}
	l.set[x] = struct{}{}
	l.mu.Unlock()
}

func (l *listeners) remove(x *listener) {
	l.mu.Lock()
	delete(l.set, x)
	l.mu.Unlock()
}

// stopSession ends the listen streams of sess with their answer, before
// the session closes, waiting for them at most until ctx ends.
func (l *listeners) stopSession(ctx context.Context, sess *Session) {
	l.mu.Lock()
	var ours []*listener
	for x := range l.set {
		if x.sess == sess {
			ours = append(ours, x)
			delete(l.set, x)
		}
	}
	l.mu.Unlock()
	for _, x := range ours {
		close(x.stop)
	}
	for _, x := range ours {
		select {
		case <-x.done:
		case <-ctx.Done():
			return
		}
	}
}

// uris returns the resource URIs the open streams watch.
func (l *listeners) uris() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for x := range l.set {
		out = append(out, x.filter.ResourceSubscriptions...)
	}
	return out
}

// matching returns the streams that asked for the notification method (of
// uri, for resources/updated).
func (l *listeners) matching(method, uri string) []*listener {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*listener
	for x := range l.set {
		f := x.filter
		var want bool
		switch method {
		case NotifyToolsListChanged:
			want = f.ToolsListChanged
		case NotifyPromptsListChanged:
			want = f.PromptsListChanged
		case NotifyResourcesListChanged:
			want = f.ResourcesListChanged
		case NotifyResourcesUpdated:
			want = slices.Contains(f.ResourceSubscriptions, uri)
		}
		if want {
			out = append(out, x)
		}
	}
	return out
}

// notify sends a notification to every listen stream that asked for it,
// tagged with the stream's subscription id. It returns how many got it.
func (l *listeners) notify(method, uri string) int {
	n := 0
	for _, x := range l.matching(method, uri) {
		params := map[string]any{"_meta": map[string]any{MetaSubscriptionID: x.id}}
		if uri != "" {
			params["uri"] = uri
		}
		x.mu.Lock()
		err := x.ctx.Err() // a cancelled stream gets nothing more, even before its handler returns
		if err == nil {
			err = x.sess.Notify(x.ctx, method, params)
		}
		x.mu.Unlock()
		if err == nil {
			n++
		}
	}
	return n
}

// listen serves subscriptions/listen: it acknowledges what it will send
// (only what the server offers), then stays open, sending the chosen
// notifications, until the client cancels it or the connection ends (no
// answer then) or the server shuts down (then it answers).
func (sess *Session) listen(ctx context.Context, req *jsonrpc.Request) (any, error) {
	raw := jsontext.Member(req.Params, "notifications")
	var f listenFilter
	if len(raw) == 0 || !isObject(raw) || json.Unmarshal(raw, &f) != nil {
		return nil, invalidParams("subscriptions/listen needs params.notifications, an object such as " +
			`{"toolsListChanged": true, "resourceSubscriptions": ["file:///a.txt"]}`)
	}
	if len(f.ResourceSubscriptions) > maxListenURIs {
		return nil, invalidParams("params.notifications.resourceSubscriptions lists more than 1000 URIs; open fewer")
	}
	s := sess.srv
	caps := s.capabilities()
	f.ToolsListChanged = f.ToolsListChanged && caps.Tools != nil
	f.PromptsListChanged = f.PromptsListChanged && caps.Prompts != nil
	f.ResourcesListChanged = f.ResourcesListChanged && caps.Resources != nil
	if caps.Resources == nil {
		f.ResourceSubscriptions = nil
	}
	id, _ := jsonrpc.RequestID(ctx)
	x := &listener{sess: sess, ctx: ctx, id: json.RawMessage(id.String()), filter: f,
		stop: make(chan struct{}), done: make(chan struct{})}
	defer close(x.done)
	x.mu.Lock()
	s.listeners.add(x)
	defer s.listeners.remove(x)
	for _, uri := range f.ResourceSubscriptions {
		s.subscribed(uri) // before the acknowledgement, as resources/subscribe does before its answer
	}
	err := sess.Notify(ctx, NotifySubscriptionsAcknowledged, map[string]any{
		"_meta": map[string]any{MetaSubscriptionID: x.id}, "notifications": f})
	x.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, jsonrpc.ErrNoResponse
	case <-x.stop: // the server shuts down: the stream ends with its answer
		jsonrpc.Respond(ctx, map[string]any{"_meta": map[string]any{MetaSubscriptionID: x.id}})
		return nil, jsonrpc.ErrNoResponse
	}
}

// SubscribedAny reports whether a session subscribes (with
// resources/subscribe, or on a subscriptions/listen stream) to a URI for
// which match is true. It resolves nothing and stops at the first match,
// so it is cheap enough to ask on every poll even with many listens of
// 1,000 URIs each (Subscriptions resolves every URI).
func (s *Server) SubscribedAny(match func(uri string) bool) bool {
	rs := s.resources
	rs.subs.mu.Lock()
	for _, set := range rs.subs.bySession {
		for uri := range set {
			if match(uri) {
				rs.subs.mu.Unlock()
				return true
			}
		}
	}
	rs.subs.mu.Unlock()
	s.listeners.mu.Lock()
	defer s.listeners.mu.Unlock()
	for x := range s.listeners.set {
		if slices.ContainsFunc(x.filter.ResourceSubscriptions, match) {
			return true
		}
	}
	return false
}
