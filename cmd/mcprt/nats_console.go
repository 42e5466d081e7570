package main

import (
	"context"
	"fmt"
	"hash/fnv"

	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/aacp/natsjournal"
	"github.com/mcprt/mcprt/console"
)

// natsJournalSource is the console's view of the journal on NATS
// (aacp.backend=nats): stores of its own on the process's connection,
// which claim no agent, and a version made of the journal's streams'
// last sequences.
type natsJournalSource struct {
	b  *natsBackend
	ns natsSettings
}

// journalSource returns the console's journal source: nil (the data
// directory's files) unless the journal is on NATS.
func (b *natsBackend) journalSource(ns natsSettings) console.JournalSource {
	if b == nil || b.store == nil {
		return nil
	}
	return natsJournalSource{b: b, ns: ns}
}

// Open implements console.JournalSource: a store of its own, so that
// what the console reads moves nothing of the process's broker (its
// inbox positions, its cached ledgers).
func (s natsJournalSource) Open(ctx context.Context) (journal.Store, error) {
	nc := s.ns.NATS
	st, err := natsjournal.Open(ctx, natsjournal.Options{JS: s.b.conn.JS, Replicas: nc.Replicas, DedupWindow: nc.DedupWindow, ClaimTTL: nc.ClaimTTL})
	if err != nil {
		return nil, fmt.Errorf("the messaging journal on NATS: %w", err)
	}
	return st, nil
}

// journalStreams are the streams whose last sequences make the journal's
// version: channels, ledgers, dead letters and the agent registry.
var journalStreams = []string{natsjournal.ChannelStream, natsjournal.LedgerStream, natsjournal.DeadStream, "KV_" + natsjournal.AgentBucket}

// Version implements console.JournalSource.
func (s natsJournalSource) Version(ctx context.Context) (uint64, error) {
	h := fnv.New64a()
	for _, name := range journalStreams {
		st, err := s.b.conn.JS.Stream(ctx, name)
		if err != nil {
			return 0, fmt.Errorf("stream %s: %w", name, err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			return 0, fmt.Errorf("stream %s: %w", name, err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\n", name, info.State.LastSeq, info.State.Msgs)
	}
	return h.Sum64(), nil
}
