package console

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/tools/messaging"
)

// memSource is a JournalSource over one in-memory journal: the stores it
// opens share it (their Close leaves it open), and its version moves when
// the test says.
type memSource struct {
	mem     *journal.MemoryStore
	version atomic.Uint64
}

type unclosed struct{ journal.Store }

func (unclosed) Close() error { return nil }

func (s *memSource) Open(context.Context) (journal.Store, error) { return unclosed{s.mem}, nil }
func (s *memSource) Version(context.Context) (uint64, error)     { return s.version.Load(), nil }

// TestJournalSource: with Options.Journal the console reads agents and
// messages from the source, not from the data directory (which holds no
// journal), and reads them again when the source's version moves.
func TestJournalSource(t *testing.T) {
	src := &memSource{mem: journal.NewMemory()}
	f := newFixture(t, func(o *Options, _ *messaging.Config) { o.Journal = src })
	f.signIn()
	ctx := context.Background()
	b, err := broker.Open(broker.Options{Store: src.mem, Manual: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	for _, id := range []string{"remote", "sender"} {
		if _, err := b.RegisterAgent(ctx, id, broker.RegisterInput{Type: envelope.Implementation}); err != nil {
			t.Fatal(err)
		}
	}
	src.version.Add(1)
	eventually(t, 5*time.Second, "the source's agents on the overview", func() bool {
		_, body := f.get("")
		return strings.Contains(body, `data-agent="remote"`) && strings.Contains(body, `data-agent="sender"`) &&
			!strings.Contains(body, "No agent has registered")
	})
	raw, _ := json.Marshal(map[string]string{"body": "through the source"})
	if _, err := b.Send(ctx, "sender", broker.SendInput{Receiver: broker.Receiver{AgentID: "remote"}, MessageType: "CUSTOM_NOTE", Payload: raw}); err != nil {
		t.Fatal(err)
	}
	// The version has not moved: the snapshot read before stays.
	if _, body := f.get("messages?agent=remote"); strings.Contains(body, "through the source") {
		t.Fatalf("the console re-read the journal though the source's version did not move")
	}
	src.version.Add(1)
	eventually(t, 5*time.Second, "the message after the version moved", func() bool {
		_, body := f.get("messages?agent=remote")
		return strings.Contains(body, "through the source")
	})
}
