package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
)

// BenchmarkChannelThroughput measures sends per second on one channel
// (one sender agent to one receiver) with a file journal, as msg/s. Under
// fsync=always, concurrent senders share fsyncs (group commit); "x1" is a
// single sending goroutine, "x16" sixteen.
func BenchmarkChannelThroughput(b *testing.B) {
	for _, policy := range []journal.FsyncPolicy{journal.FsyncAlways, journal.FsyncNever} {
		for _, par := range []int{1, 16} {
			b.Run(fmt.Sprintf("fsync=%s/x%d", policy, par), func(b *testing.B) {
				br, err := Open(Options{DataDir: b.TempDir(), Fsync: policy, Manual: true})
				if err != nil {
					b.Fatal(err)
				}
				defer br.Close()
				ctx := context.Background()
				br.RegisterAgent(ctx, "a", RegisterInput{Type: envelope.Manager})
				br.RegisterAgent(ctx, "b", RegisterInput{Type: envelope.Implementation})
				in := SendInput{Receiver: Receiver{AgentID: "b"}, MessageType: envelope.TaskUpdate,
					Payload: json.RawMessage(`{"taskId":"task_3_1","status":"in_progress","progress":0.5,"notes":"a typical small update"}`)}
				var wg sync.WaitGroup
				start := time.Now()
				b.ResetTimer()
				for g := 0; g < par; g++ {
					wg.Go(func() {
						for i := g; i < b.N; i += par {
							if _, err := br.Send(ctx, "a", in); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msg/s")
			})
		}
	}
}

// BenchmarkCrossProcessLatency measures the time from Send in this
// process to Receive returning in another process (a helper that answers
// each ping with a pong carrying the measured one-way latency), one
// message at a time, and reports p50 and p99 in milliseconds.
func BenchmarkCrossProcessLatency(b *testing.B) {
	for _, policy := range []journal.FsyncPolicy{journal.FsyncAlways, journal.FsyncNever} {
		b.Run("fsync="+string(policy), func(b *testing.B) {
			dir := b.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			br, err := Open(Options{DataDir: dir, Fsync: policy})
			if err != nil {
				b.Fatal(err)
			}
			defer br.Close()
			br.RegisterAgent(ctx, "pinger", RegisterInput{Type: envelope.Manager})
			preregisterWith(b, br, "echo")
			cmd := helperCmd(ctx, "echo", "AACP_DIR", dir, "AACP_AGENT", "echo", "AACP_FSYNC", string(policy))
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			defer cmd.Wait()
			defer cmd.Process.Kill()
			// Warm up: the first ping waits for the helper to start.
			lat := make([]float64, 0, b.N)
			ping := func(i int) float64 {
				payload := fmt.Sprintf(`{"i":%d,"t":%d}`, i, time.Now().UnixNano())
				if _, err := br.Send(ctx, "pinger", SendInput{Receiver: Receiver{AgentID: "echo"}, MessageType: "CUSTOM_PING", Payload: json.RawMessage(payload)}); err != nil {
					b.Fatal(err)
				}
				for {
					out, err := br.Receive(ctx, "pinger", ReceiveInput{WaitMs: 30000, Max: 1})
					if err != nil {
						b.Fatal(err)
					}
					for _, m := range out.Messages {
						br.Ack(ctx, "pinger", AckInput{MessageID: m.MessageID, Status: "processed"})
						var p struct{ I, Lat int64 }
						json.Unmarshal(m.Payload, &p)
						if int(p.I) == i {
							return float64(p.Lat) / 1e6
						}
					}
				}
			}
			ping(-1)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				lat = append(lat, ping(i))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(lat[len(lat)/2], "p50-ms")
			b.ReportMetric(lat[min(len(lat)-1, len(lat)*99/100)], "p99-ms")
		})
	}
}

// preregisterWith registers an agent through br and leaves it offline.
func preregisterWith(b *testing.B, br *Broker, id string) {
	if _, err := br.RegisterAgent(context.Background(), id, RegisterInput{Type: envelope.Implementation}); err != nil {
		b.Fatal(err)
	}
	if err := br.Release(id); err != nil {
		b.Fatal(err)
	}
}

// runEcho answers each ping with a pong carrying the one-way latency.
func runEcho() error {
	dir, me := os.Getenv("AACP_DIR"), os.Getenv("AACP_AGENT")
	ctx := context.Background()
	b, err := Open(Options{DataDir: dir, Fsync: journal.FsyncPolicy(os.Getenv("AACP_FSYNC")), Logger: helperLogger()})
	if err != nil {
		return err
	}
	defer b.Close()
	if _, err := b.RegisterAgent(ctx, me, RegisterInput{Type: envelope.Implementation}); err != nil {
		return err
	}
	for {
		out, err := b.Receive(ctx, me, ReceiveInput{WaitMs: 60000, Max: 1})
		if err != nil {
			return err
		}
		for _, m := range out.Messages {
			now := time.Now().UnixNano()
			var p struct{ I, T int64 }
			json.Unmarshal(m.Payload, &p)
			pong := `{"i":` + strconv.FormatInt(p.I, 10) + `,"lat":` + strconv.FormatInt(now-p.T, 10) + `}`
			if _, err := b.Send(ctx, me, SendInput{Receiver: Receiver{AgentID: m.Sender.AgentID}, MessageType: "CUSTOM_PONG", Payload: json.RawMessage(pong)}); err != nil {
				return err
			}
			b.Ack(ctx, me, AckInput{MessageID: m.MessageID, Status: "processed"})
		}
	}
}
