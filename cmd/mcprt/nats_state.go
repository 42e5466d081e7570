package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/config"
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

// stateDedupWindow is the SHARED_STATE stream's duplicate window: the
// messaging stream's (nats.dedupWindowMs), widened to the longest a state
// write can be sent again — until its call's deadline, which is at most
// a tool call's (tools.defaultTimeoutMs) or a run's, whose steps write
// (agent.runTimeoutMs). The replicator stops repeating a write at the
// window, so no repeat is ever stored twice.
func stateDedupWindow(nc natsengine.Config, base config.Base, dom config.Domain) time.Duration {
	return max(nc.DedupWindow, base.Tools.DefaultTimeout, dom.Agent.RunTimeout)
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
// last, the lag between them, and the stream's cluster state) to the
// messaging report of health when the shared state is on NATS.
func withSharedState(report func() any, dom *domain.Domain, b *natsBackend) func() any {
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
		st, _ := sharedStateReport(sctx, dom, b)
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
