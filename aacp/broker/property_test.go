package broker

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
)

// Property: over any arrival order, with duplicates and missing seqs, the
// cumulative ack is the longest received prefix and Gaps lists exactly
// the missing seqs below the highest received.
func TestPropertySeqTrackerAck(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rng.IntN(60)
		var arrivals []uint64
		for s := 1; s <= n; s++ {
			if rng.IntN(10) == 0 {
				continue // lost
			}
			arrivals = append(arrivals, uint64(s))
			if rng.IntN(5) == 0 {
				arrivals = append(arrivals, uint64(s)) // duplicated
			}
		}
		rng.Shuffle(len(arrivals), func(i, j int) { arrivals[i], arrivals[j] = arrivals[j], arrivals[i] })
		var tr SeqTracker
		seen := map[uint64]bool{}
		for _, s := range arrivals {
			dup := tr.Observe(s)
			if dup != seen[s] {
				t.Fatalf("seed %d: Observe(%d) dup=%v, want %v", seed, s, dup, seen[s])
			}
			seen[s] = true
			want := uint64(0)
			for seen[want+1] {
				want++
			}
			if tr.Ack() != want {
				t.Fatalf("seed %d: after %d ack=%d, want %d", seed, s, tr.Ack(), want)
			}
			var gaps []uint64
			var top uint64
			for k := range seen {
				top = max(top, k)
			}
			for k := want + 1; k < top; k++ {
				if !seen[k] {
					gaps = append(gaps, k)
				}
			}
			if fmt.Sprint(tr.Gaps(1000)) != fmt.Sprint(gaps) && !(len(gaps) == 0 && len(tr.Gaps(1000)) == 0) {
				t.Fatalf("seed %d: gaps %v, want %v", seed, tr.Gaps(1000), gaps)
			}
		}
	}
	var tr SeqTracker
	tr.Observe(5)
	tr.Start(4)
	if tr.Ack() != 5 {
		t.Errorf("Start below a received seq: ack %d", tr.Ack())
	}
}

// Property: a backoff lies within its jitter band around base·2^attempt
// (capped), and never exceeds the cap by more than the jitter.
func TestPropertyBackoffBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 10000; i++ {
		base := time.Duration(1+rng.IntN(5000)) * time.Millisecond
		maxWait := time.Duration(1+rng.IntN(120)) * time.Second
		attempt := rng.IntN(40)
		jitter := rng.Float64()
		r := rng.Float64()
		d := Backoff(base, maxWait, attempt, jitter, r)
		nominal := float64(base) * float64(uint64(1)<<min(attempt, 62))
		if attempt > 30 || nominal > float64(maxWait) {
			nominal = float64(maxWait)
		}
		lo, hi := nominal*(1-jitter), nominal*(1+jitter)
		if float64(d) < lo-1 || float64(d) > hi+1 {
			t.Fatalf("Backoff(%v,%v,%d,%.2f,%.2f) = %v, want in [%v, %v]", base, maxWait, attempt, jitter, r, d, time.Duration(lo), time.Duration(hi))
		}
	}
	if Backoff(time.Second, time.Minute, 0, 0, 0.9) != time.Second || Backoff(time.Second, time.Minute, 2, 0, 0) != 4*time.Second {
		t.Error("no-jitter backoff is not 1s, 2s, 4s")
	}
}

// Property: under random timing (timeouts and retries racing answers),
// a request is never handed out after it was answered, is handed out
// again only as a marked redelivery, and every request completes once
// everything is answered.
func TestPropertyDedupUnderRandomRetries(t *testing.T) {
	for seed := uint64(0); seed < 15; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		r := newRig(t, Options{
			Policies: map[string]RetryPolicy{CustomKey: {AckTimeout: 2 * time.Second, MaxRetries: 1000, BaseBackoff: 100 * time.Millisecond}},
			Rand:     rng.Float64,
		})
		r.register("a", envelope.Manager)
		r.register("b", envelope.Implementation)
		var reqs []string
		handed := map[string]int{}
		answered := map[string]bool{}
		var inHand []Message
		for step := 0; step < 300; step++ {
			switch rng.IntN(5) {
			case 0:
				if len(reqs) < 40 {
					reqs = append(reqs, r.send("a", "b", SendInput{Payload: custom(len(reqs))}).RequestID)
				}
			case 1:
				r.advance(time.Duration(rng.IntN(3000)) * time.Millisecond)
			case 2:
				for _, m := range r.receive("b", 1+rng.IntN(5)) {
					if answered[m.RequestID] {
						t.Fatalf("seed %d: request %s handed out after it was answered", seed, m.RequestID)
					}
					if handed[m.RequestID] > 0 && !m.Redelivered {
						t.Fatalf("seed %d: request %s handed out twice without the redelivered mark", seed, m.RequestID)
					}
					handed[m.RequestID]++
					inHand = append(inHand, m)
				}
			case 3:
				if len(inHand) > 0 {
					i := rng.IntN(len(inHand))
					m := inHand[i]
					inHand = append(inHand[:i], inHand[i+1:]...)
					if !answered[m.RequestID] {
						r.ack("b", m.MessageID, "processed")
						answered[m.RequestID] = true
					}
				}
			case 4:
				r.b.Pump(r.ctx)
			}
		}
		// Drain: answer everything still open.
		for round := 0; round < 100 && len(answered) < len(reqs); round++ {
			for _, m := range append(inHand, r.receive("b", 100)...) {
				if !answered[m.RequestID] {
					r.ack("b", m.MessageID, "processed")
					answered[m.RequestID] = true
				}
			}
			inHand = nil
			r.advance(3 * time.Second)
		}
		r.advance(0)
		for _, id := range reqs {
			if st := r.status("a", id); st.Outcome != journal.Completed {
				t.Fatalf("seed %d: request %s ended %s/%s", seed, id, st.State, st.Outcome)
			}
			if handed[id] == 0 {
				t.Fatalf("seed %d: request %s never handed out", seed, id)
			}
		}
	}
}

// Property: whatever the mix of priorities and batch sizes, each batch is
// ordered HIGH, NORMAL, LOW, and within a channel and a priority the seqs
// only grow.
func TestPropertyOrderPerChannelPerPriority(t *testing.T) {
	prios := []envelope.Priority{envelope.High, envelope.Normal, envelope.Low}
	for seed := uint64(0); seed < 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		r := newRig(t, Options{})
		senders := []string{"s1", "s2", "s3"}
		for _, s := range senders {
			r.register(s, envelope.Manager)
		}
		r.register("b", envelope.Implementation)
		last := map[string]uint64{}
		total, got := 0, 0
		for step := 0; step < 200; step++ {
			if rng.IntN(3) > 0 {
				s := senders[rng.IntN(len(senders))]
				r.send(s, "b", SendInput{Priority: prios[rng.IntN(3)]})
				total++
				continue
			}
			batch := r.receive("b", 1+rng.IntN(8))
			for i, m := range batch {
				if i > 0 && m.Priority.Rank() < batch[i-1].Priority.Rank() {
					t.Fatalf("seed %d: %s after %s in one batch", seed, m.Priority, batch[i-1].Priority)
				}
				key := m.Sender.AgentID + "/" + string(m.Priority)
				if m.Seq <= last[key] {
					t.Fatalf("seed %d: %s seq %d after %d", seed, key, m.Seq, last[key])
				}
				last[key] = m.Seq
				got++
			}
		}
		got += len(r.receive("b", MaxReceive*10))
		for got < total {
			n := len(r.receive("b", MaxReceive))
			if n == 0 {
				break
			}
			got += n
		}
		if got != total {
			t.Fatalf("seed %d: received %d of %d", seed, got, total)
		}
	}
}
