package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/aacp/natsjournal"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/natsengine"
	"github.com/mcprt/mcprt/natsengine/presencekv"
)

// natsSettings are the keys of package natsengine: aacp.backend and the
// nats section.
type natsSettings struct {
	Backend natsengine.BackendConfig
	NATS    natsengine.Config
}

// natsBackend is a process's NATS side: the server it embeds (if
// nats.server.listen is set), and, under aacp.backend=nats, its
// connection and the journal on it. A nil *natsBackend is valid: it
// embeds and connects nothing.
type natsBackend struct {
	srv   *natsengine.Server
	conn  *natsengine.Conn
	store *natsjournal.Store
	url   string
	// presence is the agents' presence records, shared whenever either
	// backend is on NATS (nats_state.go).
	presence *presencekv.Store
}

// startNATS starts what cfg asks for: an embedded server when
// nats.server.listen is set, and a connection plus the journal under
// aacp.backend=nats. It returns nil, 0 when neither is asked for. Its
// exit codes: 78 for a configuration that cannot work (nats backend with
// nowhere to connect, bad listen or TLS settings), 1 when the engine is
// unreachable or a stream's configuration conflicts.
func startNATS(ctx context.Context, cfg config.Base, ns natsSettings, logger *slog.Logger) (*natsBackend, int, error) {
	nc := ns.NATS
	useNATS := ns.Backend.Backend == natsengine.BackendNATS || ns.Backend.StateBackend == natsengine.BackendNATS
	if !useNATS && nc.Server.Listen == "" {
		return nil, 0, nil
	}
	b := &natsBackend{}
	if nc.Server.Listen != "" {
		srv, err := natsengine.StartServer(natsengine.ServerOptions{
			Config: nc.Server, StoreDir: nc.Server.StoreDirFor(cfg.AACP.DataDir), Token: nc.Token,
			SyncAlways: cfg.AACP.Fsync == "" || cfg.AACP.Fsync == "always", ReadyTimeout: nc.ConnectTimeout,
		})
		if err != nil {
			return nil, exitConfig, fmt.Errorf("nats.server: %w", err)
		}
		b.srv = srv
		logger.Info("embedded NATS server ready", "url", srv.ClientURL(), "cluster", srv.ClusterAddr(), "storeDir", nc.Server.StoreDirFor(cfg.AACP.DataDir))
	}
	if !useNATS {
		return b, 0, nil
	}
	b.url = nc.URL
	if b.url == "" {
		if b.srv == nil {
			return nil, exitConfig, errors.New("aacp.backend or aacp.stateBackend is nats but nats.url is empty and nats.server.listen embeds no server; set nats.url (MCPRT_NATS_URL=nats://hub:4222) or nats.server.listen")
		}
		b.url = b.srv.ClientURL()
	}
	host, _ := os.Hostname()
	conn, err := natsengine.Connect(ctx, natsengine.ConnOptions{Config: nc, URL: b.url, Name: "mcprt " + host + " " + strconv.Itoa(os.Getpid()), Logger: logger})
	if err != nil {
		b.Close()
		return nil, exitFatal, err
	}
	b.conn = conn
	if err := b.openPresence(ctx, nc); err != nil {
		b.Close()
		return nil, exitFatal, err
	}
	if ns.Backend.Backend != natsengine.BackendNATS { // only the shared state is on NATS (nats_state.go)
		return b, 0, nil
	}
	octx, cancel := context.WithTimeout(ctx, nc.ConnectTimeout)
	defer cancel()
	st, err := natsjournal.Open(octx, natsjournal.Options{
		JS: conn.JS, Replicas: nc.Replicas, DedupWindow: nc.DedupWindow, ClaimTTL: nc.ClaimTTL, Logger: logger,
	})
	if err != nil {
		b.Close()
		return nil, exitFatal, err
	}
	b.store = st
	logger.Info("agent messaging on NATS JetStream", "url", conn.NC.ConnectedUrlRedacted(), "replicas", nc.Replicas)
	return b, 0, nil
}

// opener returns the messaging service's Open function: nil (a file journal) unless
// the journal is on NATS.
func (b *natsBackend) opener() func(broker.Options) (*broker.Broker, error) {
	if b == nil || b.store == nil {
		return nil
	}
	return func(o broker.Options) (*broker.Broker, error) {
		o.Store = b.store
		return broker.Open(o)
	}
}

// shared returns the journal on NATS (nil when the journal is on files);
// closing it leaves the connection to Close.
func (b *natsBackend) shared() journal.Store {
	if b == nil || b.store == nil {
		return nil
	}
	return b.store
}

// natsHealth is the messaging part of the health result under
// aacp.backend=nats.
type natsHealth struct {
	Backend    string `json:"backend"`
	Connected  bool   `json:"connected"`
	Server     string `json:"server,omitempty"`
	Reconnects int64  `json:"reconnects"`
	// InboxConsumersReplaced counts the inbox consumers this process
	// replaced after losing them (a node or the hub lost, a route broken).
	InboxConsumersReplaced int64 `json:"inboxConsumersReplaced"`
	// Cluster is the channel stream's replication state ("" alone).
	Cluster string `json:"cluster,omitempty"`
	Leader  string `json:"leader,omitempty"`
	// Replicas lists the followers: current, and how many operations
	// each is behind the leader.
	Replicas []natsReplica `json:"replicas,omitempty"`
	// Lag is the largest follower lag, in operations.
	Lag   uint64 `json:"lag"`
	Error string `json:"error,omitempty"`
}

type natsReplica struct {
	Name    string `json:"name"`
	Current bool   `json:"current"`
	Offline bool   `json:"offline,omitempty"`
	Lag     uint64 `json:"lag"`
}

// healthFunc returns the health hook: nil unless the journal is on NATS.
func (b *natsBackend) healthFunc() func() any {
	if b == nil || b.store == nil {
		return nil
	}
	return func() any { return b.health() }
}

func (b *natsBackend) health() natsHealth {
	h := natsHealth{Backend: natsengine.BackendNATS, Connected: b.conn.NC.IsConnected(), Reconnects: b.conn.Reconnects(),
		InboxConsumersReplaced: b.store.InboxConsumersReplaced()}
	if h.Connected {
		h.Server = b.conn.NC.ConnectedServerName()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	st, err := b.conn.JS.Stream(ctx, natsjournal.ChannelStream)
	if err == nil {
		var info *natsInfo
		if info, err = streamInfo(ctx, st); err == nil {
			h.Cluster, h.Leader, h.Replicas = info.cluster, info.leader, info.replicas
			for _, r := range info.replicas {
				h.Lag = max(h.Lag, r.Lag)
			}
		}
	}
	if err != nil {
		h.Error = err.Error()
	}
	return h
}

// Close closes the journal, the connection and the embedded server, in
// that order.
func (b *natsBackend) Close() {
	if b == nil {
		return
	}
	if b.store != nil {
		_ = b.store.Close()
	}
	b.conn.Close()
	if b.srv != nil {
		b.srv.Shutdown()
	}
}

// filesHealth is the health tool's messaging report on the files
// backend: the damaged channel lines readers set aside (mcprt aacp
// quarantine lists them).
type filesHealth struct {
	Backend          string     `json:"backend"`
	QuarantinedLines int        `json:"quarantinedLines"`
	LastQuarantined  *time.Time `json:"lastQuarantined,omitempty"`
	Error            string     `json:"error,omitempty"`
	// NATS is the connection when presence or the shared state is on
	// NATS while messaging stays on files.
	NATS *natsConnHealth `json:"nats,omitempty"`
}

// messagingHealth is the health tool's messaging report: the NATS
// connection and cluster on aacp.backend=nats, the files backend's
// quarantined lines otherwise.
func messagingHealth(b *natsBackend, dataDir string) func() any {
	if f := b.healthFunc(); f != nil {
		return f
	}
	return func() any {
		h := filesHealth{Backend: "files", NATS: b.connHealth()}
		n, latest, err := journal.QuarantineSummary(dataDir)
		h.QuarantinedLines = n
		if !latest.IsZero() {
			h.LastQuarantined = &latest
		}
		if err != nil {
			h.Error = err.Error()
		}
		return h
	}
}
