package broker

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
)

// A send on a file journal writes its payload once (the channel line);
// after a restart of the sender, a retry and a dead letter still carry
// it (read back from the channel).
func TestSendPayloadOnceSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	const marker = "marker-payload-91c2"
	payload := json.RawMessage(`{"text":"` + marker + `"}`)
	pol := map[string]RetryPolicy{"CUSTOM_*": {AckTimeout: 10 * time.Second, MaxRetries: 3, BaseBackoff: time.Second}}
	r := newRig(t, Options{DataDir: dir, Policies: pol})
	r.register("a", envelope.Manager)
	r.register("b", envelope.Implementation)
	retried := r.send("a", "b", SendInput{Payload: payload})
	failed := r.send("a", "b", SendInput{Payload: payload})
	if n := countMarker(t, dir, marker); n != 2 {
		t.Fatalf("the payload is written %d times for 2 sends; want once each (in the channel)", n)
	}
	if err := r.b.Close(); err != nil {
		t.Fatal(err)
	}

	r = newRig(t, Options{DataDir: dir, Policies: pol})
	r.register("a", envelope.Manager)
	r.register("b", envelope.Implementation)
	msgs := r.receive("b", 10)
	if len(msgs) != 2 {
		t.Fatalf("received %d after the restart, want 2", len(msgs))
	}
	for _, m := range msgs {
		in := NackInput{MessageID: m.MessageID, Reason: "not now", CanRetry: m.RequestID == retried.RequestID}
		if _, err := r.b.Nack(r.ctx, "b", in); err != nil {
			t.Fatal(err)
		}
	}
	r.b.Pump(r.ctx)
	r.advance(2 * time.Second) // the retry goes out
	again := r.receive("b", 10)
	if len(again) != 1 || again[0].RequestID != retried.RequestID || !bytes.Equal(again[0].Payload, payload) {
		t.Fatalf("the retry after a restart: %+v; want the payload %s", again, payload)
	}
	dl, err := r.b.DeadLetters(r.ctx, "a", DeadLettersInput{})
	if err != nil || dl.Total != 1 {
		t.Fatalf("DeadLetters = %+v, %v", dl, err)
	}
	if d := dl.DeadLetters[0]; d.RequestID != failed.RequestID || d.Envelope == nil || !bytes.Equal(d.Envelope.Payload, payload) {
		t.Fatalf("dead letter %+v; want request %s with its payload", d, failed.RequestID)
	}
	if st := r.status("a", failed.RequestID); st.State != journal.Failed {
		t.Errorf("status %+v", st)
	}
}

// countMarker counts marker in every file under dir.
func countMarker(t *testing.T, dir, marker string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n += bytes.Count(data, []byte(marker))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A broadcast on a file journal goes through the same path: one line per
// receiver (each carries the payload, as the protocol wants), the
// sender's ledger without it, every delivery recorded with its seq; and
// after a restart a retry to any receiver carries the payload.
func TestBroadcastPayloadOnceSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	const marker = "marker-broadcast-5d1e"
	payload := json.RawMessage(`{"text":"` + marker + `"}`)
	pol := map[string]RetryPolicy{"CUSTOM_*": {AckTimeout: 10 * time.Second, MaxRetries: 3, BaseBackoff: time.Second}}
	receivers := []string{"i1", "i2", "i3"}
	r := newRig(t, Options{DataDir: dir, Policies: pol})
	r.register("m", envelope.Manager)
	for _, id := range receivers {
		r.register(id, envelope.Implementation)
	}
	out, err := r.b.Send(r.ctx, "m", SendInput{Receiver: Receiver{AgentID: "*"}, MessageType: "CUSTOM_X", Payload: payload})
	if err != nil || len(out.Deliveries) != len(receivers) {
		t.Fatalf("broadcast = %+v, %v", out, err)
	}
	if n := countMarker(t, filepath.Join(dir, "channels"), marker); n != len(receivers) {
		t.Errorf("the payload is in %d channel lines; want one per receiver (%d)", n, len(receivers))
	}
	if n := countMarker(t, filepath.Join(dir, "ledger"), marker); n != 0 {
		t.Errorf("the payload is %d times in the ledgers; want 0", n)
	}
	st := r.status("m", out.RequestID)
	for _, d := range st.Deliveries {
		if d.Seq == 0 || d.State != journal.InTransit {
			t.Errorf("delivery %+v; want IN_TRANSIT with its seq", d)
		}
	}
	if err := r.b.Close(); err != nil {
		t.Fatal(err)
	}

	r = newRig(t, Options{DataDir: dir, Policies: pol})
	r.register("m", envelope.Manager)
	for _, id := range receivers {
		r.register(id, envelope.Implementation)
	}
	last := receivers[len(receivers)-1]
	msgs := r.receive(last, 10)
	if len(msgs) != 1 {
		t.Fatalf("%s received %d after the restart, want 1", last, len(msgs))
	}
	if _, err := r.b.Nack(r.ctx, last, NackInput{MessageID: msgs[0].MessageID, Reason: "later", CanRetry: true}); err != nil {
		t.Fatal(err)
	}
	r.b.Pump(r.ctx)
	r.advance(2 * time.Second)
	again := r.receive(last, 10)
	if len(again) != 1 || !bytes.Equal(again[0].Payload, payload) {
		t.Fatalf("the retry to %s after a restart: %+v; want the payload %s", last, again, payload)
	}
}
