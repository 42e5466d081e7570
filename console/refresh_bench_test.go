package console

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
)

// BenchmarkRefreshLedgers: the snapshot's ledger refresh after every
// agent's ledger changed (benchAgents ledgers of a files journal, each
// with one record), as after a burst of messages among them.
func BenchmarkRefreshLedgers(b *testing.B) {
	dir := b.TempDir()
	ctx := context.Background()
	st, err := journal.OpenFile(journal.FileOptions{Dir: dir, Fsync: journal.FsyncNever})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	for i := range benchAgents {
		id := "agent-" + strconv.Itoa(i)
		if err := st.PutAgent(ctx, journal.AgentRecord{AgentID: id, Type: envelope.Implementation, ProtocolVersion: "1.0.0", RegisteredAt: now}); err != nil {
			b.Fatal(err)
		}
		l, err := st.Ledger(id)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Put(ctx, journal.Record{Kind: journal.KindInbound, Inbound: &journal.InboundRecord{Sender: "x", RequestID: "r" + strconv.Itoa(i), Status: journal.InboundReceived, At: now}}); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	j := &journalView{dir: dir, now: time.Now, limit: maxInboxMessages}
	b.ReportAllocs()
	for n := 0; b.Loop(); n++ {
		j.stamps = map[string]string{}
		for i := range benchAgents {
			j.stamps["agent-"+strconv.Itoa(i)] = strconv.Itoa(n)
		}
		j.refreshLedgers()
	}
	if len(j.ledgers) != benchAgents {
		b.Fatalf("%d ledgers read, want %d", len(j.ledgers), benchAgents)
	}
}
