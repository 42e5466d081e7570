package main

// The console's data sources: the reservations, the work queue and the
// message search of this data directory, adapted to the small interfaces
// of package console (which does not import the product). Presence comes
// from the messaging service itself (console.Messaging).

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcprt/mcprt/console"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/reservation"
	"github.com/mcprt/mcprt/domain/task"
	"github.com/mcprt/mcprt/store"
	"github.com/mcprt/mcprt/tools/messaging"
)

// consoleSources are the console's Reservations, Tasks and MessageSearch
// over one store handle of their own. Close it when the console is done.
type consoleSources struct {
	db           *store.DB
	reservations consoleReservations
	tasks        consoleTasks
	search       consoleSearch
}

// newConsoleSources opens (lazily) the store in storeDir and builds the
// sources. The person's actions (force-release) act as humanID, the
// console's agent, with messaging telling holders and presence.
func newConsoleSources(storeDir string, busy time.Duration, clock core.Clock, messaging *messaging.Service, humanID string) (*consoleSources, error) {
	if clock == nil {
		clock = core.SystemClock{}
	}
	db, err := store.New(store.Options{Dir: storeDir, BusyTimeout: busy, Clock: clock})
	if err != nil {
		return nil, fmt.Errorf("console: the store for reservations and tasks: %w", err)
	}
	human := humanMessaging{Service: messaging, agentID: humanID}
	svc := reservation.NewService(reservation.Options{Store: db.Reservations(), Messaging: human, Clock: clock})
	return &consoleSources{db: db,
		reservations: consoleReservations{store: db.Reservations(), svc: svc, clock: clock},
		tasks:        consoleTasks{svc: task.NewService(db.Tasks(), clock, nil)},
		search:       consoleSearch{msg: messaging}}, nil
}

// options puts the sources into the console's options.
func (s *consoleSources) options(o *console.Options) {
	o.Reservations, o.Tasks, o.Search = s.reservations, s.tasks, s.search
}

// Close closes the sources' store handle.
func (s *consoleSources) Close() error { return s.db.Close() }

// humanMessaging is the messaging service acting as the person's agent:
// the caller of every console action is console.humanAgentId, whatever
// agent the process itself hosts.
type humanMessaging struct {
	*messaging.Service
	agentID string
}

// Caller implements reservation.Messaging.
func (h humanMessaging) Caller(context.Context) (string, error) { return h.agentID, nil }

// consoleReservations implements console.Reservations.
type consoleReservations struct {
	store reservation.Store
	svc   *reservation.Service
	clock core.Clock
}

// Active implements console.Reservations: the active leases, oldest
// first, each with the ids of the other agents' leases in its way (two
// leases conflict when their patterns overlap and one is exclusive).
func (r consoleReservations) Active(ctx context.Context, limit int) ([]console.Reservation, error) {
	ls, _, err := r.store.List(ctx, "", r.clock.Now(), limit)
	if err != nil {
		return nil, err
	}
	out := make([]console.Reservation, len(ls))
	pats := make([]reservation.Pattern, len(ls))
	parsed := make([]bool, len(ls))
	for i, l := range ls {
		out[i] = console.Reservation{ID: l.ID, AgentID: l.AgentID, Path: l.Pattern, Exclusive: l.Exclusive, Reason: l.Reason,
			CreatedAt: l.CreatedAt, ExpiresAt: l.ExpiresAt}
		if l.Prefix == l.Pattern { // a literal path (as the store judges it)
			pats[i], parsed[i] = reservation.LiteralPattern(l.Pattern), true
		} else if p, err := reservation.ParsePattern(l.Pattern); err == nil {
			pats[i], parsed[i] = p, true
		}
	}
	for i := range ls {
		for j := i + 1; j < len(ls); j++ {
			a, b := ls[i], ls[j]
			if a.AgentID == b.AgentID || !(a.Exclusive || b.Exclusive) || !parsed[i] || !parsed[j] ||
				!(strings.HasPrefix(a.Prefix, b.Prefix) || strings.HasPrefix(b.Prefix, a.Prefix)) {
				continue
			}
			if reservation.Overlap(pats[i], pats[j]) {
				out[i].Conflicts = append(out[i].Conflicts, b.ID)
				out[j].Conflicts = append(out[j].Conflicts, a.ID)
			}
		}
	}
	return out, nil
}

// ForceRelease implements console.Reservations through the reservation
// service's force-release: only a stale or offline holder's lease can be
// forced (otherwise RESERVATION_HOLDER_LIVE says who holds it and until
// when); the release is recorded with the person as releaser and the
// reason, and the holder is told.
func (r consoleReservations) ForceRelease(ctx context.Context, id, reason string) error {
	_, err := r.svc.ForceRelease(ctx, id, reason)
	return err
}

// consoleTasks implements console.Tasks.
type consoleTasks struct{ svc *task.Service }

// boardStatuses are the work queue's statuses, in the board's order.
var boardStatuses = []task.Status{task.StatusOpen, task.StatusClaimed, task.StatusInProgress, task.StatusBlocked,
	task.StatusDone, task.StatusFailed}

// List implements console.Tasks: up to limit tasks of every status (each
// status read on its own, so that a long done column does not hide the
// open ones), most recently updated first.
func (t consoleTasks) List(ctx context.Context, limit int) ([]console.Task, error) {
	per := min(max(limit, 1), task.MaxListLimit)
	var out []console.Task
	for _, st := range boardStatuses {
		ts, _, err := t.svc.List(ctx, task.Filter{Status: st, Limit: per})
		if err != nil {
			return nil, err
		}
		for _, x := range ts {
			out = append(out, console.Task{ID: x.ID, Title: x.Title, Status: string(x.Status), Assignee: x.Assignee,
				DependsOn: x.DependsOn, UpdatedAt: x.UpdatedAt})
		}
	}
	slices.SortStableFunc(out, func(a, b console.Task) int {
		return cmp.Or(b.UpdatedAt.Compare(a.UpdatedAt), strings.Compare(a.ID, b.ID))
	})
	return out[:min(len(out), max(limit, 0))], nil
}

// consoleSearch implements console.MessageSearch over the message index.
type consoleSearch struct{ msg *messaging.Service }

// Search implements console.MessageSearch.
func (s consoleSearch) Search(ctx context.Context, query string, limit int) ([]console.MessageHit, error) {
	hits, err := s.msg.SearchMessages(ctx, store.MessageQuery{Query: query, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]console.MessageHit, len(hits))
	for i, h := range hits {
		out[i] = console.MessageHit{MessageID: h.MessageID, Sender: h.Sender, Receiver: h.Receiver, Subject: h.Subject,
			Thread: h.ThreadID, Snippet: h.Snippet, SentAt: h.SentAt}
	}
	return out, nil
}
