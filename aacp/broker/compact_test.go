package broker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
)

func segments(t *testing.T, dir, channel string) int {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "channels", channel))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "messages.") && e.Name() != "messages.ndjson" && strings.HasSuffix(e.Name(), ".ndjson") {
			n++
		}
	}
	return n
}

func TestCompactionAfterProcessingAndRestart(t *testing.T) {
	dir := t.TempDir()
	r := newRig(t, Options{DataDir: dir, MaxSegmentBytes: 4096, Fsync: "never"})
	r.register("a", envelope.Manager)
	r.register("b", envelope.Implementation)
	for i := 0; i < 60; i++ {
		r.send("a", "b", SendInput{Payload: custom(i)})
	}
	if segments(t, dir, "a_to_b") < 3 {
		t.Fatalf("expected rotation, got %d sealed segments", segments(t, dir, "a_to_b"))
	}
	msgs := r.receive("b", MaxReceive)
	if len(msgs) != 60 {
		t.Fatalf("received %d", len(msgs))
	}
	// Answer all but the last ten: segments wholly below the first open
	// message go.
	for _, m := range msgs[:50] {
		r.ack("b", m.MessageID, "processed")
	}
	before := segments(t, dir, "a_to_b")
	if err := r.b.Compact(r.ctx); err != nil {
		t.Fatal(err)
	}
	after := segments(t, dir, "a_to_b")
	if after >= before || after == 0 {
		t.Errorf("compaction kept %d of %d sealed segments", after, before)
	}
	// The sender's ACK channel is compacted too once its replies are read.
	r.b.Pump(r.ctx)
	// A restarted receiver is handed out exactly the ten unanswered ones.
	if err := r.b.Release("b"); err != nil {
		t.Fatal(err)
	}
	r.register("b", envelope.Implementation)
	again := r.receive("b", MaxReceive)
	if len(again) != 10 {
		t.Fatalf("after restart handed out %d, want 10", len(again))
	}
	for i, m := range again {
		if m.MessageID != msgs[50+i].MessageID {
			t.Errorf("after restart message %d is %s, want %s", i, m.MessageID, msgs[50+i].MessageID)
		}
	}
	r.advance(time.Second)
	st := r.status("a", msgs[0].RequestID)
	if st.Outcome != "COMPLETED" {
		t.Errorf("status %+v", st)
	}
}
