package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
)

// The two-process messaging benchmarks: this process hosts the sender
// "s", a helper process (role "acker") hosts the receiver "r", which
// receives and ACKs (processed) whatever arrives. This process learns of
// each ACK through a second journal on the same directory (an inbox of
// "s", woken by inotify), so no step waits on a clock; the sender's
// broker then processes the ACK (Pump), which is part of the cycle.

// ackWatch follows the ACKs arriving for agent "s".
type ackWatch struct {
	store *journal.FileStore
	in    journal.Inbox
	seen  map[string]bool // acked messageIds not yet claimed
	n     int             // ACKs seen
}

func newAckWatch(b *testing.B, dir string) *ackWatch {
	st, err := journal.OpenFile(journal.FileOptions{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	in, err := st.Inbox("s")
	if err != nil {
		b.Fatal(err)
	}
	return &ackWatch{store: st, in: in, seen: map[string]bool{}}
}

func (w *ackWatch) close() { w.in.Close(); w.store.Close() }

// until reads ACKs until done() holds.
func (w *ackWatch) until(ctx context.Context, b *testing.B, done func() bool) {
	for !done() {
		err := w.in.Read(ctx, func(env *envelope.Envelope) error {
			if env.MessageType != envelope.Ack {
				return nil
			}
			var p struct {
				AcknowledgedMessageID string `json:"acknowledgedMessageId"`
			}
			if json.Unmarshal(env.Payload, &p) == nil {
				w.seen[p.AcknowledgedMessageID] = true
				w.n++
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if done() {
			return
		}
		select {
		case <-w.in.Changed():
		case <-ctx.Done():
			b.Fatal(ctx.Err())
		}
	}
}

// twoProcess starts the acker and returns the sender's broker (Manual:
// its inbox is read by Pump only) and the watch.
func twoProcess(b *testing.B, policy journal.FsyncPolicy) (*Broker, *ackWatch, context.Context) {
	dir := b.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	b.Cleanup(cancel)
	br, err := Open(Options{DataDir: dir, Fsync: policy, Manual: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { br.Close() })
	if _, err := br.RegisterAgent(ctx, "s", RegisterInput{Type: envelope.Manager}); err != nil {
		b.Fatal(err)
	}
	preregisterWith(b, br, "r")
	cmd := helperCmd(ctx, "acker", "AACP_DIR", dir, "AACP_AGENT", "r", "AACP_FSYNC", string(policy))
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	w := newAckWatch(b, dir)
	b.Cleanup(w.close)
	return br, w, ctx
}

var cycleIn = SendInput{Receiver: Receiver{AgentID: "r"}, MessageType: envelope.TaskUpdate,
	Payload: json.RawMessage(`{"taskId":"task_3_1","status":"in_progress","progress":0.5,"notes":"a typical small update"}`)}

// BenchmarkCycle measures send → receive (another process) → ACK →
// the sender processing the ACK, one message at a time: cycles/s and
// the cycle's p50 and p99 in milliseconds.
func BenchmarkCycle(b *testing.B) {
	for _, policy := range []journal.FsyncPolicy{journal.FsyncAlways, journal.FsyncNever} {
		b.Run("fsync="+string(policy), func(b *testing.B) {
			br, w, ctx := twoProcess(b, policy)
			cycle := func() {
				out, err := br.Send(ctx, "s", cycleIn)
				if err != nil {
					b.Fatal(err)
				}
				w.until(ctx, b, func() bool { return w.seen[out.MessageID] })
				delete(w.seen, out.MessageID)
				if err := br.Pump(ctx); err != nil {
					b.Fatal(err)
				}
			}
			cycle() // warm-up: waits for the helper to start
			lat := make([]float64, 0, b.N)
			start := time.Now()
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				cycle()
				lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "cycles/s")
			slices.Sort(lat)
			b.ReportMetric(lat[len(lat)/2], "p50-ms")
			b.ReportMetric(lat[min(len(lat)-1, len(lat)*99/100)], "p99-ms")
		})
	}
}

// BenchmarkConcurrentChannel measures one channel with the sender and
// the receiver working at once in two processes: one goroutine sends
// b.N messages back to back while the acker takes and ACKs them; msg/s
// until the last ACK has arrived.
func BenchmarkConcurrentChannel(b *testing.B) {
	for _, policy := range []journal.FsyncPolicy{journal.FsyncAlways, journal.FsyncNever} {
		b.Run("fsync="+string(policy), func(b *testing.B) {
			br, w, ctx := twoProcess(b, policy)
			warm, err := br.Send(ctx, "s", cycleIn)
			if err != nil {
				b.Fatal(err)
			}
			w.until(ctx, b, func() bool { return w.seen[warm.MessageID] })
			base := w.n
			done := make(chan error, 1)
			start := time.Now()
			b.ResetTimer()
			go func() {
				for range b.N {
					if _, err := br.Send(ctx, "s", cycleIn); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			w.until(ctx, b, func() bool { return w.n-base >= b.N })
			b.StopTimer()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msg/s")
		})
	}
}

// runAcker receives and ACKs (processed) everything sent to its agent.
func runAcker() error {
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
		out, err := b.Receive(ctx, me, ReceiveInput{WaitMs: 60000, Max: MaxReceive})
		if err != nil {
			return err
		}
		for _, m := range out.Messages {
			if _, err := b.Ack(ctx, me, AckInput{MessageID: m.MessageID, Status: "processed"}); err != nil {
				return fmt.Errorf("ack %s: %w", m.MessageID, err)
			}
		}
	}
}
