package natsjournal_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/natsjournal"
	"github.com/mcprt/mcprt/natsengine/natstest"
)

// A hub restarted between a send and its repeat (the client reconnects by
// itself and sends the same transmission again, as after an unanswered
// publish): the repeat is recognised as a duplicate, keeps its seq, and
// the stream holds the transmission once; the numbering goes on.
func TestDuplicatePublishAcrossAReconnectIsStoredOnce(t *testing.T) {
	t.Parallel()
	dir, listen := t.TempDir(), natstest.FreePort(t)
	srv := natstest.ServerIn(t, dir, listen)
	conn := natstest.Connect(t, srv.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := natsjournal.Open(ctx, natsjournal.Options{JS: conn.JS})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, id := range []string{"m1", "m2"} {
		if seq, err := s.Append(ctx, env("a", "b", id)); err != nil || seq != uint64(i+1) {
			t.Fatalf("append %s: seq %d, %v; want %d", id, seq, err, i+1)
		}
	}
	srv.Shutdown()
	natstest.ServerIn(t, dir, listen)
	// The repeat waits for the reconnection, then is a duplicate.
	seq, err := s.Append(ctx, env("a", "b", "m2"))
	if err != nil || seq != 2 {
		t.Fatalf("m2 again after the reconnect: seq %d, %v; want 2 (a duplicate)", seq, err)
	}
	if seq, err := s.Append(ctx, env("a", "b", "m3")); err != nil || seq != 3 {
		t.Fatalf("m3: seq %d, %v; want 3", seq, err)
	}
	if conn.Reconnects() < 1 {
		t.Fatalf("the connection counts %d reconnections; the hub restarted", conn.Reconnects())
	}
	in, err := s.Inbox("b")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	got := readAll(t, in)
	if len(got) != 3 {
		t.Fatalf("the stream holds %d transmissions, want 3 (m2 once)", len(got))
	}
	for i, e := range got {
		if want := []string{"m1", "m2", "m3"}[i]; e.MessageID != want || e.Seq != uint64(i+1) {
			t.Fatalf("transmission %d is %s seq %d, want %s seq %d", i, e.MessageID, e.Seq, want, i+1)
		}
	}
}
