package messaging

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/store"
)

// A crash between a journal append and its indexing leaves the index
// behind: the next process to open it catches up; a rebuild from the
// journal equals the live index.
func TestIndexCatchUpAndRebuild(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	ctx := context.Background()
	// A broker without the index hook: every append is "lost" to the
	// index, as if the process died right after it.
	b, err := broker.Open(broker.Options{DataDir: dir, Manual: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if _, err := b.RegisterAgent(ctx, id, broker.RegisterInput{Type: envelope.AdHoc}); err != nil {
			t.Fatal(err)
		}
	}
	var sent []string
	for i := range 5 {
		p, _ := json.Marshal(map[string]any{"subject": fmt.Sprintf("note %d", i), "text": fmt.Sprintf("the parser fails on input %d", i)})
		out, err := b.Send(ctx, "a", broker.SendInput{Receiver: broker.Receiver{AgentID: "b"}, MessageType: "CUSTOM_NOTE", Payload: p, CorrelationID: "t-1"})
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, out.MessageID)
	}
	got, err := b.Receive(ctx, "b", broker.ReceiveInput{Max: 2})
	if err != nil || len(got.Messages) != 2 {
		t.Fatalf("Receive = %+v, %v", got, err)
	}
	if _, err := b.Ack(ctx, "b", broker.AckInput{MessageID: got.Messages[0].MessageID, Status: "processed"}); err != nil {
		t.Fatal(err)
	}
	b.Close()

	// The next open catches up.
	m := &msgIndex{dataDir: dir}
	defer m.close()
	x, err := m.get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	thread, err := x.Thread(ctx, "t-1", 100)
	if err != nil || len(thread) != 5 {
		t.Fatalf("Thread after catch-up = %d messages, %v; want 5", len(thread), err)
	}
	states := map[string]string{}
	for _, msg := range thread {
		states[msg.MessageID] = msg.State
	}
	if states[sent[0]] != store.MsgProcessed || states[sent[1]] != store.MsgTaken || states[sent[2]] != store.MsgSent {
		t.Fatalf("states %v, want processed, taken, sent…", states)
	}
	hits, err := x.Search(ctx, store.MessageQuery{Query: "parser input", ThreadID: "t-1", Limit: 10})
	if err != nil || len(hits) != 5 || hits[0].Snippet == "" {
		t.Fatalf("Search = %+v, %v", hits, err)
	}

	// A rebuild equals the live index.
	if _, err := Reindex(ctx, dir); err != nil {
		t.Fatal(err)
	}
	again, err := x.Thread(ctx, "t-1", 100)
	if err != nil || !reflect.DeepEqual(again, thread) {
		t.Fatalf("rebuilt thread differs:\n%+v\nwant\n%+v (%v)", again, thread, err)
	}
}
