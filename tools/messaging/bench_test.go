package messaging

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
)

// BenchmarkSendIndexed measures one sender's send path on a file journal
// with and without the message index kept on it (the hook the Service
// installs), under each fsync policy: the index's cost per send.
func BenchmarkSendIndexed(b *testing.B) {
	for _, policy := range []journal.FsyncPolicy{journal.FsyncAlways, journal.FsyncNever} {
		for _, indexed := range []bool{false, true} {
			name := string(policy) + "/plain"
			if indexed {
				name = string(policy) + "/indexed"
			}
			b.Run(name, func(b *testing.B) {
				dir := b.TempDir()
				ctx := context.Background()
				opts := broker.Options{DataDir: dir, Fsync: policy, Manual: true}
				if indexed {
					m := &msgIndex{dataDir: dir}
					defer m.close()
					m.log = func(err error) { b.Error(err) }
					opts.OnAppend = m.add
					if _, err := m.get(ctx); err != nil {
						b.Fatal(err)
					}
				}
				br, err := broker.Open(opts)
				if err != nil {
					b.Fatal(err)
				}
				defer br.Close()
				br.RegisterAgent(ctx, "a", broker.RegisterInput{Type: envelope.Manager})
				br.RegisterAgent(ctx, "b", broker.RegisterInput{Type: envelope.Implementation})
				in := broker.SendInput{Receiver: broker.Receiver{AgentID: "b"}, MessageType: envelope.TaskUpdate,
					Payload: json.RawMessage(`{"taskId":"task_3_1","status":"in_progress","progress":0.5,"notes":"a typical small update","subject":"progress on the parser"}`)}
				if _, err := br.Send(ctx, "a", in); err != nil { // opens (and catches up) the index
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if _, err := br.Send(ctx, "a", in); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
