package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
)

// The contract the coordination tools build on, outside any session:
// Caller is the default agent; Presence grades by the clock; Tell puts a
// notice from "_broker" into the inbox, and refuses what it cannot send.
func TestCallerPresenceTell(t *testing.T) {
	clock := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg := testConfig(t.TempDir(), "boss")
	svc, err := New(Options{Config: cfg, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	ctx := context.Background()
	if st, _, err := svc.Presence(ctx, "boss"); err != nil || st != PresenceUnknown {
		t.Fatalf("Presence before anything = %q, %v; want unknown", st, err)
	}
	id, err := svc.Caller(ctx)
	if err != nil || id != "boss" {
		t.Fatalf("Caller = %q, %v; want boss", id, err)
	}
	for _, tc := range []struct {
		after time.Duration
		want  string
	}{
		{0, PresenceOnline},
		{2 * time.Minute, PresenceIdle},
		{13 * time.Minute, PresenceStale},
	} {
		clock.Advance(tc.after)
		st, seen, err := svc.Presence(ctx, "boss")
		if err != nil || st != tc.want || seen.IsZero() {
			t.Fatalf("after %v: Presence = %q, %v, %v; want %s", tc.after, st, seen, err, tc.want)
		}
	}
	if _, err := svc.Caller(ctx); err != nil { // acting is a heartbeat
		t.Fatal(err)
	}
	if st, _, _ := svc.Presence(ctx, "boss"); st != PresenceOnline {
		t.Fatalf("after acting: %q, want online", st)
	}

	if err := svc.Tell(ctx, "boss", "reservation released", map[string]any{"path": "src/a.go"}); err != nil {
		t.Fatal(err)
	}
	b, _ := svc.Broker(false)
	got, err := b.Receive(ctx, "boss", broker.ReceiveInput{})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("Receive = %+v, %v; want the notice", got, err)
	}
	m := got.Messages[0]
	var p map[string]any
	json.Unmarshal(m.Payload, &p)
	if m.Sender.AgentID != NoticeSender || m.MessageType != NoticeType || p["subject"] != "reservation released" || p["path"] != "src/a.go" {
		t.Fatalf("notice %+v %v", m, p)
	}
	for _, tc := range []struct {
		to, subject string
		code        core.Code
	}{
		{"ghost", "x", envelope.CodeAgentNotFound},
		{"../x", "x", envelope.CodeInvalidReceiver},
		{"boss", "", core.CodeInvalidArgument},
	} {
		var ce *core.Error
		if err := svc.Tell(ctx, tc.to, tc.subject, nil); !errors.As(err, &ce) || ce.Code != tc.code {
			t.Errorf("Tell(%q, %q) = %v, want %s", tc.to, tc.subject, err, tc.code)
		}
	}
}
