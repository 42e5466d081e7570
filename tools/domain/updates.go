package domain

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
	"github.com/mcprt/mcprt/store"
)

// updates sends notifications/resources/updated for the domain resources
// when what they show changes, whichever process sharing the store made
// the change. It follows the store's change feed (store.Watcher) only
// while some session subscribes to a domain resource: the first such
// subscription starts the watching, and a poll that finds none left stops
// it. Writes of this process are seen when they commit; other processes'
// writes at the next poll (store.watchIntervalMs).
type updates struct {
	db      *store.DB
	watcher *store.Watcher
	log     *slog.Logger
	srv     *mcp.Server // set by attach, before any subscription
}

// updateTimeout bounds opening the store when a subscription starts the
// watching, and the sending of one round of notifications.
const updateTimeout = 10 * time.Second

// domainSchemes are the URI prefixes of the resources updates covers.
// policies:// is left out: the policies are files read once, at start.
var domainSchemes = []string{"memory://", "sessions://", "traces://"}

func isDomainURI(uri string) bool {
	for _, p := range domainSchemes {
		if strings.HasPrefix(uri, p) {
			return true
		}
	}
	return false
}

// newUpdates returns the updates of db, not yet attached to a server.
func newUpdates(db *store.DB, interval time.Duration, clock core.Clock, log *slog.Logger) *updates {
	u := &updates{db: db, log: log}
	u.watcher = db.NewWatcher(store.WatchOptions{Interval: interval, Clock: clock, Active: u.active, Changes: u.changes,
		Error: func(err error) { log.Warn("reading the store's change feed failed", "error", err.Error()) }})
	return u
}

// attach makes srv's subscriptions to domain resources start the
// watching.
func (u *updates) attach(srv *mcp.Server) {
	u.srv = srv
	srv.OnSubscribe(func(uri string) {
		if !isDomainURI(uri) {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), updateTimeout)
		defer cancel()
		if err := u.watcher.Start(ctx); err != nil {
			u.log.Warn("cannot follow the store's changes: subscribers to "+uri+" will not hear of updates",
				"error", err.Error())
		}
	})
}

// stop stops the watching.
func (u *updates) stop() { u.watcher.Stop() }

// subscribed returns the subscriptions to domain resources.
func (u *updates) subscribed() []mcp.Subscription {
	var out []mcp.Subscription
	for _, s := range u.srv.Subscriptions() {
		if isDomainURI(s.URI) {
			out = append(out, s)
		}
	}
	return out
}

// active reports whether a session subscribes to a domain resource. It is
// asked on every poll, so it resolves nothing (mcp.Server.SubscribedAny):
// idle listens of many URIs cost next to nothing.
func (u *updates) active() bool { return u.srv.SubscribedAny(isDomainURI) }

// changes notifies the subscribers of every URI that cs (or a gap: all of
// them) touches, each URI once.
func (u *updates) changes(cs []store.Change, gap bool) {
	subs := u.subscribed()
	if len(subs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), updateTimeout)
	defer cancel()
	touched := map[string]bool{}
	if gap {
		for _, s := range subs {
			touched[s.URI] = true
		}
	}
	// Index the subscriptions by what they show.
	static := map[string]bool{}
	entries := map[[2]string][]string{}
	sessions, traces := map[string][]string{}, map[string][]string{}
	var allTraces []string
	for _, s := range subs {
		v := s.Variables
		switch s.Template {
		case "":
			static[s.URI] = true
		case URIMemoryEntry:
			k := [2]string{v["namespace"], v["key"]}
			entries[k] = append(entries[k], s.URI)
		case URISession:
			sessions[v["id"]] = append(sessions[v["id"]], s.URI)
		case URITrace:
			traces[v["traceId"]] = append(traces[v["traceId"]], s.URI)
			allTraces = append(allTraces, s.URI)
		}
	}
	mark := func(uris ...string) {
		for _, uri := range uris {
			touched[uri] = true
		}
	}
	markStatic := func(uri string) {
		if static[uri] {
			touched[uri] = true
		}
	}
	for _, c := range cs {
		switch c.Domain {
		case store.ChangeMemory:
			markStatic(URIMemoryEntries)
			mark(entries[[2]string{c.Scope, c.Key}]...)
		case store.ChangeSession:
			markStatic(URISessionsActive)
			mark(sessions[c.Key]...)
		case store.ChangeTrace:
			markStatic(URITracesRecent)
			if len(allTraces) == 0 {
				continue
			}
			batch, err := strconv.ParseInt(c.Key, 10, 64)
			if c.Scope != store.ChangeScopeBatch || err != nil {
				mark(allTraces...) // pruned: any trace may have lost events
				continue
			}
			ids, err := u.db.Traces().BatchTraceIDs(ctx, batch)
			if err != nil {
				u.log.Warn("reading a changed trace batch failed", "error", err.Error())
				mark(allTraces...)
				continue
			}
			for _, id := range ids {
				mark(traces[id]...)
			}
		}
	}
	uris := make([]string, 0, len(touched))
	for uri := range touched {
		uris = append(uris, uri)
	}
	slices.Sort(uris)
	for _, uri := range uris {
		u.srv.ResourceUpdated(ctx, uri)
	}
}
