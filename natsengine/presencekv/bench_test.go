package presencekv_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcprt/mcprt/natsengine/natstest"
	"github.com/mcprt/mcprt/natsengine/presencekv"
)

// BenchmarkPresence measures one heartbeat write (Put, acknowledged by
// the stream, sync_always) and one presence read (Get) on an embedded
// server.
func BenchmarkPresence(b *testing.B) {
	srv := natstest.Server(b)
	ctx := context.Background()
	s, err := presencekv.Open(ctx, natstest.Connect(b, srv.ClientURL()).JS, presencekv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	rec := []byte(`{"agentId":"impl_1","lastSeen":"2026-01-01T00:00:00Z","pid":1}`)
	b.Run("Put", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if err := s.Put(ctx, fmt.Sprintf("impl_%d", i%16), rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Get", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := s.Get(ctx, fmt.Sprintf("impl_%d", i%16)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
