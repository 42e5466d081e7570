package broker_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

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
// the last ACK, and the p50/p99 of send-start to receipt. The receiver
// answers each batch it takes with one AckAll while it receives the
// next.
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
				// A receiver as a client with workers runs it: it asks
				// for more while the batch it took is answered, with one
				// AckAll (aacp_ack with several ids) per batch.
				var acks sync.WaitGroup
				defer acks.Wait()
				for got := 0; got < b.N; {
					out, err := rb.Receive(ctx, "recv", broker.ReceiveInput{WaitMs: 5000, Max: broker.MaxReceive})
					if err != nil {
						b.Error(err)
						return
					}
					now := time.Now().UnixNano()
					ids := make([]string, 0, len(out.Messages))
					for _, m := range out.Messages {
						var p struct{ T int64 }
						_ = json.Unmarshal(m.Payload, &p)
						mu.Lock()
						lat = append(lat, float64(now-p.T)/1e6)
						mu.Unlock()
						ids = append(ids, m.MessageID)
						got++
					}
					if len(ids) == 0 {
						continue
					}
					acks.Go(func() {
						res, err := rb.AckAll(ctx, "recv", broker.AckAllInput{MessageIDs: ids, Status: "processed"})
						if err != nil {
							b.Error(err)
							return
						}
						for _, r := range res {
							if r.Err != nil {
								b.Error(r.Err)
							}
						}
					})
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
		return broker.Options{Store: natsStore(b, c.URLs(), 3)}, broker.Options{}, jsWrites(b, c.URLs())
	}}, benchBackend{"nats-cluster-R3-nosync", func(b *testing.B) (broker.Options, broker.Options, func() uint64) {
		c := natstest.StartClusterSync(b, false)
		return broker.Options{Store: natsStore(b, c.URLs(), 3)}, broker.Options{}, jsWrites(b, c.URLs())
	}})
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			so, _, writes := be.open(b)
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
			var w0 uint64
			if writes != nil {
				if err := sb.Store().Sync(ctx); err != nil { // the warm-up's ledger writes
					b.Fatal(err)
				}
				w0 = writes()
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
			if writes != nil {
				// Every JetStream message a send caused, its ledger
				// records included (Send does not wait for those).
				if err := sb.Store().Sync(ctx); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(writes()-w0)/float64(b.N), "js-writes/send")
			}
			slices.Sort(lat)
			b.ReportMetric(lat[len(lat)/2], "p50-ms")
			b.ReportMetric(lat[min(len(lat)-1, len(lat)*99/100)], "p99-ms")
		})
	}
}

// BenchmarkJetStreamPublish is the floor under BenchmarkSyncSend: bare
// synchronous JetStream publishes (one at a time, each waiting for its
// acknowledgement) to a stream with file storage, on the same servers
// (the hub, and the three-node cluster with and without sync_always):
// publishes/s and the p50/p99 of one. A send costs at least one of
// these; "batch8" publishes atomic batches of eight messages instead
// (per batch: JetStream syncs a batch once).
func BenchmarkJetStreamPublish(b *testing.B) {
	servers := []struct {
		name     string
		replicas int
		url      func(b *testing.B) string
	}{
		{"nats-hub", 1, func(b *testing.B) string { return natstest.Server(b).ClientURL() }},
		{"nats-cluster-R3", 3, func(b *testing.B) string { return natstest.StartCluster(b).URLs() }},
		{"nats-cluster-R3-nosync", 3, func(b *testing.B) string { return natstest.StartClusterSync(b, false).URLs() }},
	}
	for _, srv := range servers {
		for _, batch := range []int{1, 8} {
			name := srv.name
			if batch > 1 {
				name += "-batch" + strconv.Itoa(batch)
			}
			b.Run(name, func(b *testing.B) {
				conn := natstest.Connect(b, srv.url(b))
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cfg := jetstream.StreamConfig{Name: "FLOOR", Subjects: []string{"floor.>"}, Storage: jetstream.FileStorage, Replicas: srv.replicas, AllowAtomicPublish: true}
				// A cluster just started may not place an R3 stream yet.
				for {
					_, err := conn.JS.CreateStream(ctx, cfg)
					if err == nil {
						break
					}
					select {
					case <-ctx.Done():
						b.Fatalf("create the stream: %v", err)
					case <-time.After(100 * time.Millisecond): // polling the cluster's state
					}
				}
				data := make([]byte, 300) // about an envelope
				publish := func(i int) error {
					if batch == 1 {
						_, err := conn.JS.Publish(ctx, "floor.x", data)
						return err
					}
					id := nuid.Next()
					for k := 1; k <= batch; k++ {
						m := &nats.Msg{Subject: "floor.x", Data: data, Header: nats.Header{}}
						m.Header.Set("Nats-Batch-Id", id)
						m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(k))
						if k < batch {
							if err := conn.NC.PublishMsg(m); err != nil {
								return err
							}
							continue
						}
						m.Header.Set("Nats-Batch-Commit", "1")
						_, err := conn.JS.PublishMsg(ctx, m)
						return err
					}
					return nil
				}
				// Warm-up, until the new stream's leader answers.
				for err := publish(0); err != nil; err = publish(0) {
					select {
					case <-ctx.Done():
						b.Fatalf("publish to the new stream: %v", err)
					case <-time.After(100 * time.Millisecond): // polling the stream's state
					}
				}
				lat := make([]float64, 0, b.N)
				start := time.Now()
				b.ResetTimer()
				for i := range b.N {
					t0 := time.Now()
					if err := publish(i); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
				}
				b.StopTimer()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "publishes/s")
				slices.Sort(lat)
				b.ReportMetric(lat[len(lat)/2], "p50-ms")
				b.ReportMetric(lat[min(len(lat)-1, len(lat)*99/100)], "p99-ms")
			})
		}
	}
}
