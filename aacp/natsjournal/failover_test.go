package natsjournal_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/natsjournal"
)

// An inbox whose consumer lived on the node that stops keeps receiving:
// it replaces the consumer (missed heartbeats) from where it was, and a
// message appended after the loss arrives, once, in order, well within
// the bound a receiving session waits.
func TestClusterInboxOutlivesItsConsumersNode(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test: skipped with -short")
	}
	c, conn, s := openOnCluster(t)
	ctx := context.Background()
	in, err := s.Inbox("b")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	appendOK := func(id string, want uint64) {
		t.Helper()
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		seq, err := s.Append(actx, env("a", "b", id))
		if err != nil || seq != want {
			t.Fatalf("append %s: seq %d, %v; want seq %d", id, seq, err, want)
		}
	}
	var got []*envelope.Envelope
	readUntil := func(n int, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for len(got) < n {
			rctx, cancel := context.WithTimeout(ctx, time.Until(deadline))
			err := in.Read(rctx, func(e *envelope.Envelope) error { got = append(got, e); return nil })
			if len(got) < n {
				select {
				case <-in.Changed():
				case <-rctx.Done():
				}
			}
			cancel()
			if time.Now().After(deadline) {
				t.Fatalf("read %d transmissions within %v, want %d (last error %v)", len(got), within, n, err)
			}
		}
	}
	appendOK("m1", 1)
	readUntil(1, 20*time.Second)

	// Stop the node that holds the inbox's consumer (an R1 consumer:
	// it goes with its node).
	st, err := conn.JS.Stream(ctx, natsjournal.ChannelStream)
	if err != nil {
		t.Fatal(err)
	}
	host := ""
	consumers := st.ListConsumers(ctx)
	for info := range consumers.Info() {
		if info.Cluster != nil && info.Cluster.Leader != "" {
			host = info.Cluster.Leader
		}
	}
	if err := consumers.Err(); err != nil || host == "" {
		t.Fatalf("the inbox's consumer has no host: %v", err)
	}
	stopped := false
	for i, n := range c.Nodes {
		if n.Config.Name == host {
			c.Stop(i)
			stopped = true
		}
	}
	if !stopped {
		t.Fatalf("no node is named %q", host)
	}
	t0 := time.Now()
	appendOK("m2", 2)
	readUntil(2, 30*time.Second)
	t.Logf("node %s (the consumer's host) stopped: the next message was read after %v", host, time.Since(t0).Round(time.Millisecond))
	for i, e := range got {
		if e.Seq != uint64(i+1) || e.MessageID != []string{"m1", "m2"}[i] {
			t.Fatalf("transmission %d: seq %d id %s; want seq %d once each, in order", i, e.Seq, e.MessageID, i+1)
		}
	}
}
