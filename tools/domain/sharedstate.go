package domain

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcprt/mcprt/domain/memory"
	"github.com/mcprt/mcprt/domain/reservation"
	"github.com/mcprt/mcprt/domain/session"
	"github.com/mcprt/mcprt/domain/task"
	"github.com/mcprt/mcprt/sharedstate"
	"github.com/mcprt/mcprt/store"
)

// SharedState, set in Options (aacp.stateBackend=nats), shares memory,
// sessions, reservations and the work queue with other machines through
// package sharedstate; the store stays this node's copy and serves reads.
type SharedState struct {
	// JS is the JetStream connection; Replicas the stream's replicas.
	JS       jetstream.JetStream
	Replicas int
	// OpenTimeout bounds creating the stream and reading the store's
	// applied sequence at start.
	OpenTimeout time.Duration
	// DedupWindow is the stream's duplicate window (see
	// sharedstate.Options.DedupWindow); 0 means sharedstate's default.
	DedupWindow time.Duration
}

// domainStores are the Store implementations the domain services run
// on: the SQLite store's, or their shared wrappers.
type domainStores struct {
	memory       memory.Store
	sessions     session.Store
	reservations reservation.Store
	tasks        task.Store
	shared       *sharedstate.Replicator // nil on the files backend
}

// newStores returns db's stores, shared through NATS when opts.Shared is
// set: the replicator is opened and starts applying the stream.
func newStores(db *store.DB, opts Options) (domainStores, error) {
	s := domainStores{memory: db.Memory(), sessions: db.Sessions(), reservations: db.Reservations(), tasks: db.Tasks()}
	if opts.Shared == nil {
		return s, nil
	}
	timeout := opts.Shared.OpenTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	r, err := sharedstate.Open(ctx, sharedstate.Options{JS: opts.Shared.JS, DB: db, Replicas: opts.Shared.Replicas,
		DedupWindow: opts.Shared.DedupWindow, IDs: opts.IDs, Logger: opts.Logger})
	if err != nil {
		return s, err
	}
	s.memory = sharedstate.NewMemory(r, db.Memory())
	s.sessions = sharedstate.NewSessions(r, db.Sessions())
	s.reservations = sharedstate.NewReservations(r, db.Reservations())
	s.tasks = sharedstate.NewTasks(r, db.Tasks())
	if err := r.Start(ctx); err != nil {
		return s, err
	}
	s.shared = r
	return s, nil
}

// SharesState reports whether the domain state is shared through NATS.
func (d *Domain) SharesState() bool { return d.stores.shared != nil }

// SharedStateStatus reports the applier's progress (for health); ok is
// false on the files backend.
func (d *Domain) SharedStateStatus(ctx context.Context) (st sharedstate.Status, ok bool) {
	if d.stores.shared == nil {
		return st, false
	}
	return d.stores.shared.Status(ctx), true
}

// ErrSharedState is wrapped by New's error when the shared state cannot
// start (NATS unreachable, the stream's configuration conflicts, the
// store cannot be read).
var ErrSharedState = errors.New("the shared state (aacp.stateBackend=nats) cannot start")

func sharedStateError(err error) error { return fmt.Errorf("%w: %w", ErrSharedState, err) }

// SharedCoordStores returns the shared reservation and task stores, for
// other writers in this process (the console) to go through the stream
// too; ok is false on the files backend.
func (d *Domain) SharedCoordStores() (reservation.Store, task.Store, bool) {
	if d.stores.shared == nil {
		return nil, nil, false
	}
	return d.stores.reservations, d.stores.tasks, true
}
