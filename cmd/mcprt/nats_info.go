package main

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// natsInfo is the replication state of a stream.
type natsInfo struct {
	cluster, leader string
	replicas        []natsReplica
}

func streamInfo(ctx context.Context, st jetstream.Stream) (*natsInfo, error) {
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream info: %w", err)
	}
	out := &natsInfo{}
	if c := info.Cluster; c != nil {
		out.cluster, out.leader = c.Name, c.Leader
		for _, p := range c.Replicas {
			out.replicas = append(out.replicas, natsReplica{Name: p.Name, Current: p.Current, Offline: p.Offline, Lag: p.Lag})
		}
	}
	return out, nil
}
