package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/reservation"
	"github.com/mcprt/mcprt/domain/task"
	"github.com/mcprt/mcprt/natsengine"
	"github.com/mcprt/mcprt/natsengine/presencekv"
	"github.com/mcprt/mcprt/tools/domain"
	"github.com/mcprt/mcprt/tools/messaging"
)

// sharedState returns the domain's shared-state option: nil unless
// aacp.stateBackend is nats (then startNATS connected).
func (b *natsBackend) sharedState(ns natsSettings) *domain.SharedState {
	if b == nil || b.conn == nil || ns.Backend.StateBackend != natsengine.BackendNATS {
		return nil
	}
	return &domain.SharedState{JS: b.conn.JS, Replicas: ns.NATS.Replicas, OpenTimeout: ns.NATS.ConnectTimeout}
}

// openPresence opens the presence bucket on the connection, so that
// every process on this NATS judges an agent's presence from one record.
func (b *natsBackend) openPresence(ctx context.Context, nc natsengine.Config) error {
	pctx, cancel := context.WithTimeout(ctx, nc.ConnectTimeout)
	defer cancel()
	p, err := presencekv.Open(pctx, b.conn.JS, presencekv.Options{Replicas: nc.Replicas})
	if err != nil {
		return fmt.Errorf("open the shared presence on NATS: %w", err)
	}
	b.presence = p
	return nil
}

// presenceStore is the messaging service's presence store: the NATS
// bucket when either backend is on NATS, else nil (the data directory's
// files).
func (b *natsBackend) presenceStore() messaging.PresenceStore {
	if b == nil || b.presence == nil {
		return nil
	}
	return b.presence
}

// withSharedState adds sharedState (the applier's sequence, the stream's
// last and the lag between them) to the messaging report of health when
// the shared state is on NATS.
func withSharedState(report func() any, dom *domain.Domain) func() any {
	if !dom.SharesState() {
		return report
	}
	ctx := context.Background()
	return func() any {
		m := map[string]any{}
		if raw, err := json.Marshal(report()); err == nil {
			_ = json.Unmarshal(raw, &m)
		}
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		st, _ := dom.SharedStateStatus(sctx)
		m["sharedState"] = st
		return m
	}
}

// shareWith makes the console's reservation and task actions go through
// the domain's shared stores when the state is on NATS, so a person's
// force-release or task change reaches every machine.
func (s *consoleSources) shareWith(dom *domain.Domain, clock core.Clock, msgs *messaging.Service, humanID string) {
	res, tasks, ok := dom.SharedCoordStores()
	if !ok {
		return
	}
	if clock == nil {
		clock = core.SystemClock{}
	}
	human := humanMessaging{Service: msgs, agentID: humanID}
	s.reservations = consoleReservations{store: res, svc: reservation.NewService(reservation.Options{Store: res, Messaging: human, Clock: clock}), clock: clock}
	s.tasks = consoleTasks{svc: task.NewService(tasks, clock, nil)}
}
