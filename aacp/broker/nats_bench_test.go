package broker_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/aacp/natsjournal"
	"github.com/mcprt/mcprt/natsengine/natstest"
)

// benchBackend opens the journals of a sender and a receiver broker:
// two file journals on one directory, or two NATS journals on separate
// connections to one embedded hub (file storage, sync_always).
type benchBackend struct {
	name string
	// open returns the sender's and receiver's options, and a counter of
	// JetStream writes (nil for files).
	open func(b *testing.B) (send, recv broker.Options, writes func() uint64)
}

// jsWrites counts the messages JetStream stored in the journal's streams
// on the server at url (the writes, each fsynced under sync_always).
func jsWrites(b *testing.B, url string) func() uint64 {
	conn := natstest.Connect(b, url)
	return func() uint64 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var n uint64
		for _, name := range []string{natsjournal.ChannelStream, natsjournal.LedgerStream, natsjournal.DeadStream} {
			st, err := conn.JS.Stream(ctx, name)
			if err != nil {
				b.Fatal(err)
			}
			info, err := st.Info(ctx)
			if err != nil {
				b.Fatal(err)
			}
			n += info.State.LastSeq
		}
		return n
	}
}

var benchBackends = []benchBackend{
	{"files", func(b *testing.B) (broker.Options, broker.Options, func() uint64) {
		dir := b.TempDir()
		return broker.Options{DataDir: dir, Fsync: journal.FsyncAlways}, broker.Options{DataDir: dir, Fsync: journal.FsyncAlways}, nil
	}},
	{"nats-hub", func(b *testing.B) (broker.Options, broker.Options, func() uint64) {
		srv := natstest.Server(b)
		return broker.Options{Store: natsStore(b, srv.ClientURL(), 1)}, broker.Options{Store: natsStore(b, srv.ClientURL(), 1)}, jsWrites(b, srv.ClientURL())
	}},
}

func natsStore(b testing.TB, url string, replicas int) journal.Store {
	conn := natstest.Connect(b, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := natsjournal.Open(ctx, natsjournal.Options{JS: conn.JS, Replicas: replicas})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkEndToEnd measures one channel end to end (send → receive →
// ack) with 16 sending goroutines and a receiver in another broker (its
// own journal connection), under fsync=always / sync_always: msg/s until
// the last ACK, and the p50/p99 of send-start to receipt.
func BenchmarkEndToEnd(b *testing.B) {
	for _, be := range benchBackends {
		b.Run(be.name, func(b *testing.B) {
			so, ro, writes := be.open(b)
			ctx := context.Background()
			sb, err := broker.Open(so)
			if err != nil {
				b.Fatal(err)
			}
			defer sb.Close()
			rb, err := broker.Open(ro)
			if err != nil {
				b.Fatal(err)
			}
			defer rb.Close()
			if _, err := rb.RegisterAgent(ctx, "recv", broker.RegisterInput{Type: envelope.Implementation}); err != nil {
				b.Fatal(err)
			}
			if _, err := sb.RegisterAgent(ctx, "send", broker.RegisterInput{Type: envelope.Manager}); err != nil {
				b.Fatal(err)
			}
			var mu sync.Mutex
			lat := make([]float64, 0, b.N)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for got := 0; got < b.N; {
					out, err := rb.Receive(ctx, "recv", broker.ReceiveInput{WaitMs: 5000, Max: broker.MaxReceive})
					if err != nil {
						b.Error(err)
						return
					}
					now := time.Now().UnixNano()
					// The batch's ACKs go out concurrently, as a receiver
					// with several workers sends them.
					var acks sync.WaitGroup
					for _, m := range out.Messages {
						var p struct{ T int64 }
						_ = json.Unmarshal(m.Payload, &p)
						mu.Lock()
						lat = append(lat, float64(now-p.T)/1e6)
						mu.Unlock()
						acks.Go(func() {
							if _, err := rb.Ack(ctx, "recv", broker.AckInput{MessageID: m.MessageID, Status: "processed"}); err != nil {
								b.Error(err)
							}
						})
						got++
					}
					acks.Wait()
				}
			}()
			const par = 16
			var wg sync.WaitGroup
			var w0 uint64
			if writes != nil {
				w0 = writes()
			}
			start := time.Now()
			b.ResetTimer()
			for g := range par {
				wg.Go(func() {
					for i := g; i < b.N; i += par {
						payload := `{"t":` + strconv.FormatInt(time.Now().UnixNano(), 10) + `}`
						if _, err := sb.Send(ctx, "send", broker.SendInput{Receiver: broker.Receiver{AgentID: "recv"}, MessageType: "CUSTOM_BENCH", Payload: json.RawMessage(payload)}); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			<-done
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msg/s")
			if writes != nil {
				// Writes until the receiver's last ACK (the sender may
				// record a few more).
				b.ReportMetric(float64(writes()-w0)/float64(b.N), "js-writes/msg")
			}
			slices.Sort(lat)
			if len(lat) > 0 {
				b.ReportMetric(lat[len(lat)/2], "p50-ms")
				b.ReportMetric(lat[min(len(lat)-1, len(lat)*99/100)], "p99-ms")
			}
		})
	}
}

// BenchmarkSyncSend measures synchronous sends (one at a time) on the
// files journal, the hub and a three-node R3 cluster on loopback: sends/s
// and the p50/p99 of one Send.
func BenchmarkSyncSend(b *testing.B) {
	backends := append(slices.Clone(benchBackends), benchBackend{"nats-cluster-R3", func(b *testing.B) (broker.Options, broker.Options, func() uint64) {
		c := natstest.StartCluster(b)
		return broker.Options{Store: natsStore(b, c.URLs(), 3)}, broker.Options{}, nil
	}}, benchBackend{"nats-cluster-R3-nosync", func(b *testing.B) (broker.Options, broker.Options, func() uint64) {
		c := natstest.StartClusterSync(b, false)
		return broker.Options{Store: natsStore(b, c.URLs(), 3)}, broker.Options{}, nil
	}})
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			so, _, _ := be.open(b)
			ctx := context.Background()
			sb, err := broker.Open(so)
			if err != nil {
				b.Fatal(err)
			}
			defer sb.Close()
			for _, id := range []string{"recv", "send"} {
				if _, err := sb.RegisterAgent(ctx, id, broker.RegisterInput{Type: envelope.Manager}); err != nil {
					b.Fatal(err)
				}
			}
			in := broker.SendInput{Receiver: broker.Receiver{AgentID: "recv"}, MessageType: "CUSTOM_BENCH", Payload: json.RawMessage(`{"n":1}`)}
			if _, err := sb.Send(ctx, "send", in); err != nil { // warm-up
				b.Fatal(err)
			}
			lat := make([]float64, 0, b.N)
			start := time.Now()
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if _, err := sb.Send(ctx, "send", in); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "sends/s")
			slices.Sort(lat)
			b.ReportMetric(lat[len(lat)/2], "p50-ms")
			b.ReportMetric(lat[min(len(lat)-1, len(lat)*99/100)], "p99-ms")
		})
	}
}
