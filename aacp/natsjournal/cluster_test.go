package natsjournal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/aacp/natsjournal"
	"github.com/mcprt/mcprt/natsengine"
	"github.com/mcprt/mcprt/natsengine/natstest"
)

func env(sender, receiver, id string) *envelope.Envelope {
	return &envelope.Envelope{
		Version: envelope.Version, MessageID: id, RequestID: "r-" + id, Timestamp: envelope.FormatTime(time.Now()),
		Sender:      envelope.Agent{AgentID: sender, Type: envelope.Manager},
		Receiver:    envelope.Agent{AgentID: receiver, Type: envelope.Implementation},
		MessageType: "CUSTOM_TEST", Priority: envelope.Normal, Payload: json.RawMessage(`{"n":1}`),
	}
}

func readAll(t *testing.T, in journal.Inbox) []*envelope.Envelope {
	t.Helper()
	var out []*envelope.Envelope
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := in.Read(ctx, func(e *envelope.Envelope) error { out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// openOnCluster starts a three-node cluster and opens a journal with R3
// streams on it, closed when t ends.
func openOnCluster(t *testing.T) (*natstest.Cluster, *natsengine.Conn, *natsjournal.Store) {
	t.Helper()
	c := natstest.StartCluster(t)
	conn := natstest.Connect(t, c.URLs())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := natsjournal.Open(ctx, natsjournal.Options{JS: conn.JS, Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return c, conn, s
}

// A three-node cluster on loopback with R3 streams: one node down, the
// journal keeps working; two down, appends refuse within their deadline
// (no quorum) and nothing is half-written; the nodes back, appends work
// again, the numbering continues without a gap, and the restarted nodes
// catch up.
func TestClusterR3NodeLossAndRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test: about 20 s; skipped with -short")
	}
	c, conn, s := openOnCluster(t)
	ctx := context.Background()
	n := 0
	id := 0
	appendOK := func(what string) {
		t.Helper()
		n++
		id++
		actx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		// A leader election may be under way right after a node stops:
		// retry until the deadline.
		for {
			pctx, pcancel := context.WithTimeout(actx, 2*time.Second)
			seq, err := s.Append(pctx, env("a", "b", fmt.Sprint("m", id)))
			pcancel()
			if err != nil {
				t.Logf("%s: append %d: %v", what, n, err)
			}
			if err == nil {
				if seq != uint64(n) {
					t.Fatalf("%s: append %d got seq %d", what, n, seq)
				}
				return
			}
			if actx.Err() != nil {
				t.Fatalf("%s: append %d: %v", what, n, err)
			}
		}
	}
	for range 5 {
		appendOK("all nodes up")
	}
	c.Stop(2)
	for range 5 {
		appendOK("one node down")
	}
	c.Stop(1)
	actx, cancel2 := context.WithTimeout(ctx, 3*time.Second)
	_, err := s.Append(actx, env("a", "b", "refused"))
	cancel2()
	if err == nil {
		t.Fatal("an append with two of three nodes down succeeded; it must refuse without a quorum")
	}
	t.Logf("two nodes down: append refused: %v", err)
	c.Restart(1)
	c.Restart(2)
	// A refused append's outcome is unknown to its caller (the proposal
	// may still commit once the quorum is back), as with any timed-out
	// write. Sending it again with the same message id settles it: it is
	// stored once either way (deduplicated across the outage).
	for deadline := time.Now().Add(20 * time.Second); ; {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		seq, err := s.Append(pctx, env("a", "b", "refused"))
		pcancel()
		if err == nil {
			if seq != uint64(n+1) {
				t.Fatalf("the refused append, sent again, got seq %d, want %d", seq, n+1)
			}
			n++
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("append after recovery: %v", err)
		}
	}
	for range 5 {
		appendOK("nodes back")
	}
	// The restarted nodes catch up: every replica current, without lag.
	st, err := conn.JS.Stream(ctx, natsjournal.ChannelStream)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		info, err := st.Info(ctx)
		caught := err == nil && info.Cluster != nil && len(info.Cluster.Replicas) == 2
		if caught {
			for _, r := range info.Cluster.Replicas {
				caught = caught && r.Current && r.Lag == 0
			}
		}
		if caught {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restarted nodes did not catch up within 20s: %+v, %v", info.Cluster, err)
		}
		time.Sleep(100 * time.Millisecond) // polling the cluster's state
	}
	var in journal.Inbox
	for deadline := time.Now().Add(30 * time.Second); in == nil; {
		if in, err = s.Inbox("b"); err != nil && time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	defer in.Close()
	got := readAll(t, in)
	if len(got) != n {
		t.Fatalf("read %d transmissions, want %d", len(got), n)
	}
	for i, e := range got {
		if e.Seq != uint64(i+1) {
			t.Fatalf("transmission %d has seq %d: a gap or a half-written append", i, e.Seq)
		}
	}
}
