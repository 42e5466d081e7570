package messaging

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// memPresence is a PresenceStore in memory, shared by the services of a
// test as NATS's bucket is by machines.
type memPresence struct {
	mu   sync.Mutex
	recs map[string][]byte
}

func (m *memPresence) Put(_ context.Context, id string, rec []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs[id] = append([]byte(nil), rec...)
	return nil
}

func (m *memPresence) Get(_ context.Context, id string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.recs[id], nil
}

func (m *memPresence) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.recs, id)
	return nil
}

// Two services with separate data directories (messaging on files) and
// one shared presence store: B grades A's agent, which its registry
// never listed, from the shared record on its own clock; a session's end
// is offline at once. Without a shared store B cannot know it (unknown).
func TestPresenceSharedAcrossDataDirs(t *testing.T) {
	for _, shared := range []bool{true, false} {
		clock := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		var store PresenceStore
		if shared {
			store = &memPresence{recs: map[string][]byte{}}
		}
		open := func(agent string) *Service {
			svc, err := New(Options{Config: testConfig(t.TempDir(), agent), Clock: clock, Presence: store})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { svc.Close() })
			return svc
		}
		a, b := open("alice"), open("bob")
		ctx := context.Background()
		for _, s := range []*Service{a, b} {
			if _, err := s.Caller(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.presence.beat("alice", "working", "", true); err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			name    string
			do      func()
			want    string // with a shared store
			wantOff string // without
		}{
			{"beat on A", func() {}, PresenceOnline, PresenceUnknown},
			{"3 min later", func() { clock.Advance(3 * time.Minute) }, PresenceIdle, PresenceUnknown},
			{"beat again", func() { _ = a.presence.beat("alice", "", "", true) }, PresenceOnline, PresenceUnknown},
			{"16 min silent", func() { clock.Advance(16 * time.Minute) }, PresenceStale, PresenceUnknown},
			{"beat, then session ends", func() { _ = a.presence.beat("alice", "", "", true); a.presence.forget("alice") }, PresenceOffline, PresenceUnknown},
		}
		for _, st := range steps {
			st.do()
			want := st.want
			if !shared {
				want = st.wantOff
			}
			if got, _, err := b.Presence(ctx, "alice"); err != nil || got != want {
				t.Fatalf("shared=%v, %s: Presence on B = %q, %v; want %s", shared, st.name, got, err, want)
			}
		}
		if got, _, _ := b.Presence(ctx, "ghost"); got != PresenceUnknown {
			t.Fatalf("shared=%v: a never-seen agent is %q, want unknown", shared, got)
		}
	}
}
