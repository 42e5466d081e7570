package main

// What health (the tool, and the console's health figures) says about
// the backends: which one messaging and the shared state use, the NATS
// connection (server, reconnections), the cluster state of the streams,
// and how far this store's applier of the shared state is behind.

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/mcprt/mcprt/natsengine"
	"github.com/mcprt/mcprt/sharedstate"
	"github.com/mcprt/mcprt/tools/domain"
)

// natsConnHealth is the NATS connection of a process whose messaging
// stays on files while presence or the shared state is on NATS.
type natsConnHealth struct {
	Connected  bool   `json:"connected"`
	Server     string `json:"server,omitempty"`
	Reconnects int64  `json:"reconnects"`
}

// connHealth returns the connection's state; nil when this process has
// no NATS connection.
func (b *natsBackend) connHealth() *natsConnHealth {
	if b == nil || b.conn == nil {
		return nil
	}
	h := &natsConnHealth{Connected: b.conn.NC.IsConnected(), Reconnects: b.conn.Reconnects()}
	if h.Connected {
		h.Server = b.conn.NC.ConnectedServerName()
	}
	return h
}

// sharedStateHealth is health's messaging.sharedState: the applier's
// progress and the SHARED_STATE stream's replication.
type sharedStateHealth struct {
	sharedstate.Status
	Cluster  string        `json:"cluster,omitempty"`
	Leader   string        `json:"leader,omitempty"`
	Replicas []natsReplica `json:"replicas,omitempty"`
}

// sharedStateReport reads the applier's progress and the stream's
// replication; ok is false unless the shared state is on NATS.
func sharedStateReport(ctx context.Context, dom *domain.Domain, b *natsBackend) (sharedStateHealth, bool) {
	if dom == nil {
		return sharedStateHealth{}, false
	}
	st, ok := dom.SharedStateStatus(ctx)
	if !ok {
		return sharedStateHealth{}, false
	}
	h := sharedStateHealth{Status: st}
	if b != nil && b.conn != nil {
		if s, err := b.conn.JS.Stream(ctx, sharedstate.StreamName); err == nil {
			if info, err := streamInfo(ctx, s); err == nil {
				h.Cluster, h.Leader, h.Replicas = info.cluster, info.leader, info.replicas
			}
		}
	}
	return h, true
}

// backendHealth is the console's health figures of a process that serves
// no tools (mcprt ui): its backends only.
type backendHealth struct{ back *backends }

// Figures implements console.Health.
func (h backendHealth) Figures() [][2]string {
	return append([][2]string{{"version", version}}, backendFigures(h.back)...)
}

// backendFigures are the backends' lines of the console's health: the
// backends, the NATS connection and cluster, the applier's lag.
func backendFigures(b *backends) [][2]string {
	if b == nil {
		return nil
	}
	backend := func(v string) string {
		if v == "" {
			return natsengine.BackendFiles
		}
		return v
	}
	out := [][2]string{{"messaging backend", backend(b.ns.Backend.Backend)}, {"shared state backend", backend(b.ns.Backend.StateBackend)}}
	if c := b.nats.connHealth(); c != nil {
		server := "disconnected"
		if c.Connected {
			server = c.Server
		}
		out = append(out, [2]string{"NATS server", server}, [2]string{"NATS reconnects", strconv.FormatInt(c.Reconnects, 10)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if b.nats != nil && b.nats.store != nil {
		if h := b.nats.health(); h.Cluster != "" {
			out = append(out, [2]string{"NATS cluster (messaging)", clusterLine(h.Cluster, h.Leader, h.Replicas)})
		}
	}
	if st, ok := sharedStateReport(ctx, b.dom, b.nats); ok {
		line := fmt.Sprintf("%d / %d / %d", st.Applied, st.Last, st.Lag)
		if st.Error != "" {
			line += " (" + st.Error + ")"
		}
		out = append(out, [2]string{"shared state applied / last / lag", line})
		if st.Cluster != "" {
			out = append(out, [2]string{"NATS cluster (shared state)", clusterLine(st.Cluster, st.Leader, st.Replicas)})
		}
	}
	return out
}

// clusterLine is a stream's replication on one line: the cluster, its
// leader, and each follower's state.
func clusterLine(cluster, leader string, replicas []natsReplica) string {
	s := cluster + ", leader " + leader
	for _, r := range replicas {
		state := "current"
		switch {
		case r.Offline:
			state = "offline"
		case !r.Current:
			state = "behind " + strconv.FormatUint(r.Lag, 10)
		}
		s += ", " + r.Name + " " + state
	}
	return s
}
