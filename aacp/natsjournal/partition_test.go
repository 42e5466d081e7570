package natsjournal_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/natsjournal"
	"github.com/mcprt/mcprt/natsengine/natstest"
)

// A network partition (node 3's routes cut, its clients still connected
// to it): the minority side refuses writes with an error that says
// JetStream did not confirm them; the majority keeps appending; once the
// routes are back the minority's writes work again, the numbering has no
// gap, and every replica catches up.
func TestClusterPartitionMinorityRefusesMajorityWorksHealingCatchesUp(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test: skipped with -short")
	}
	c := natstest.StartPartitionableCluster(t)
	ctx := context.Background()
	open := func(urls string) *natsjournal.Store {
		conn := natstest.Connect(t, urls)
		octx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		s, err := natsjournal.Open(octx, natsjournal.Options{JS: conn.JS, Replicas: 3})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	major := open("nats://" + c.Nodes[0].Listen + ",nats://" + c.Nodes[1].Listen)
	minor := open("nats://" + c.Nodes[2].Listen)
	n := 0
	appendOK := func(s *natsjournal.Store, id string) {
		t.Helper()
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		seq, err := s.Append(actx, env("a", "b", id))
		if err != nil {
			t.Fatalf("append %s: %v", id, err)
		}
		if seq != uint64(n+1) {
			t.Fatalf("append %s: seq %d, want %d", id, seq, n+1)
		}
		n++
	}
	appendOK(major, "m1")
	appendOK(minor, "m2")

	c.Isolate(2)
	for i := range 3 {
		appendOK(major, fmt.Sprint("major-", i))
	}
	actx, cancel := context.WithTimeout(ctx, 4*time.Second)
	_, err := minor.Append(actx, env("a", "b", "minor-refused"))
	cancel()
	if err == nil {
		t.Fatal("an append on the minority side of a partition succeeded; it must refuse without a quorum")
	}
	if !strings.Contains(err.Error(), "did not confirm") {
		t.Fatalf("the minority's refusal does not say JetStream did not confirm the write: %v", err)
	}
	t.Logf("minority: %v", err)

	c.Heal()
	// The refused append's outcome was unknown to its caller; sent again
	// with its message id it is stored once either way.
	appendOK(minor, "minor-refused")
	appendOK(minor, "minor-after")
	appendOK(major, "major-after")

	conn := natstest.Connect(t, "nats://"+c.Nodes[2].Listen)
	st, err := conn.JS.Stream(ctx, natsjournal.ChannelStream)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := st.Info(ctx)
		caught := err == nil && info.Cluster != nil && len(info.Cluster.Replicas) == 2 && info.State.Msgs == uint64(n)
		if caught {
			for _, r := range info.Cluster.Replicas {
				caught = caught && r.Current && r.Lag == 0
			}
		}
		if caught {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replicas did not catch up within 30s after healing: %+v, %v", info, err)
		}
		time.Sleep(100 * time.Millisecond) // polling the cluster's state
	}
	in, err := minor.Inbox("b")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	got := readAll(t, in)
	if len(got) != n {
		t.Fatalf("read %d transmissions through the healed node, want %d", len(got), n)
	}
	seen := map[string]bool{}
	for i, e := range got {
		if e.Seq != uint64(i+1) || seen[e.MessageID] {
			t.Fatalf("transmission %d: %s seq %d: a gap, a duplicate or a half-written append", i, e.MessageID, e.Seq)
		}
		seen[e.MessageID] = true
	}
}
