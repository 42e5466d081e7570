package mcp

import (
	"slices"
	"strings"
	"sync"
)

// Subscription is a URI that running sessions subscribe to, with what it
// names now.
type Subscription struct {
	URI string
	// Template is the uriTemplate the URI matches, with the values of its
	// variables; "" for a resource registered with exactly that URI (or,
	// once it was removed, for a URI that names nothing).
	Template  string
	Variables map[string]string
}

// Subscriptions returns the distinct URIs that sessions subscribe to (with
// resources/subscribe, or on a subscriptions/listen stream), sorted, each
// resolved as resources/read would resolve it.
func (s *Server) Subscriptions() []Subscription {
	rs := s.resources
	rs.subs.mu.Lock()
	uris := map[string]struct{}{}
	for _, set := range rs.subs.bySession {
		for uri := range set {
			uris[uri] = struct{}{}
		}
	}
	rs.subs.mu.Unlock()
	for _, uri := range s.listeners.uris() {
		uris[uri] = struct{}{}
	}
	out := make([]Subscription, 0, len(uris))
	for uri := range uris {
		sub := Subscription{URI: uri}
		if r, ok := rs.resolve(uri); ok {
			sub.Template, sub.Variables = r.template, r.variables
		}
		out = append(out, sub)
	}
	slices.SortFunc(out, func(a, b Subscription) int { return strings.Compare(a.URI, b.URI) })
	return out
}

// subscribeHooks are the functions OnSubscribe registered.
type subscribeHooks struct {
	mu  sync.Mutex
	fns []func(uri string) // guarded by mu
}

// OnSubscribe registers fn to be called each time a session subscribes to
// a URI (also again to one it already has), after the subscription is in
// place and before the session is answered: a change that happens after
// the client hears back is one fn was told to look for. fn runs on the
// session's reading goroutine, so it must be quick.
func (s *Server) OnSubscribe(fn func(uri string)) {
	s.subHooks.mu.Lock()
	defer s.subHooks.mu.Unlock()
	s.subHooks.fns = append(s.subHooks.fns, fn)
}

// subscribed runs the OnSubscribe functions.
func (s *Server) subscribed(uri string) {
	s.subHooks.mu.Lock()
	fns := s.subHooks.fns
	s.subHooks.mu.Unlock()
	for _, fn := range fns {
		fn(uri)
	}
}
