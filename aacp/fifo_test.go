package aacp

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// tag identifies a message in the order tests: which sender sent it, in
// which of its rounds, and its sequence number for that sender.
type tag struct {
	Sender int `json:"sender"`
	Round  int `json:"round"`
	Seq    int `json:"seq"`
}

// recorder is a handler that records the tags it handles, in order, and
// checks that it never runs twice at once.
type recorder struct {
	inFlight    atomic.Int32
	maxInFlight atomic.Int32
	yield       func() int // how many times to yield while handling

	mu      sync.Mutex
	handled []tag
}

// HandleMessage implements Handler.
func (r *recorder) HandleMessage(_ context.Context, msg Message, _ State) (any, error) {
	n := r.inFlight.Add(1)
	defer r.inFlight.Add(-1)
	for {
		m := r.maxInFlight.Load()
		if n <= m || r.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	var tg tag
	if err := json.Unmarshal(msg.Payload, &tg); err != nil {
		return nil, err
	}
	if r.yield != nil {
		for range r.yield() {
			runtime.Gosched()
		}
	}
	r.mu.Lock()
	r.handled = append(r.handled, tg)
	r.mu.Unlock()
	return tg.Seq, nil
}

// tagMessage returns a message carrying tg.
func tagMessage(tg tag) Message {
	payload, _ := json.Marshal(tg)
	return Message{Type: "tagged", Payload: payload}
}

// acceptedOrder records, per agent, the tags in the order the coordinator
// accepted them.
type acceptedOrder struct {
	mu    sync.Mutex
	order map[string][]tag
}

// hook is a Coordinator.enqueued hook.
func (o *acceptedOrder) hook(id string, msg Message) {
	var tg tag
	_ = json.Unmarshal(msg.Payload, &tg)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.order[id] = append(o.order[id], tg)
}

func TestFIFOUnderConcurrentSenders(t *testing.T) {
	const senders, perSender = 8, 50
	c := NewCoordinator(Options{QueueSize: senders})
	accepted := &acceptedOrder{order: map[string][]tag{}}
	c.enqueued = accepted.hook
	defer c.Close(context.Background())
	rec := &recorder{}
	if err := c.RegisterAgent("rec", rec); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for i := range perSender {
				resp, err := c.SendMessage(context.Background(), "rec", tagMessage(tag{Sender: s, Seq: i}))
				if err != nil || resp != i {
					t.Errorf("sender %d message %d: %v, %v", s, i, resp, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if m := rec.maxInFlight.Load(); m != 1 {
		t.Errorf("up to %d handlers ran at once for one agent, want 1", m)
	}
	if len(rec.handled) != senders*perSender {
		t.Fatalf("handled %d messages, want %d", len(rec.handled), senders*perSender)
	}
	if !slices.Equal(rec.handled, accepted.order["rec"]) {
		t.Errorf("handling order differs from acceptance order:\nhandled  %v\naccepted %v", rec.handled, accepted.order["rec"])
	}
	next := make([]int, senders)
	for _, tg := range rec.handled {
		if tg.Seq != next[tg.Sender] {
			t.Fatalf("sender %d: handled seq %d, want %d", tg.Sender, tg.Seq, next[tg.Sender])
		}
		next[tg.Sender]++
	}
}

// TestPropertySerialAndInOrder checks, for random workloads, that each
// agent handles its messages one at a time and in the order they were
// accepted, and that every accepted message is handled exactly once. Each
// sender sends rounds of 1 to 3 messages at once (to random agents) and
// waits for a round's answers before the next round.
func TestPropertySerialAndInOrder(t *testing.T) {
	master := rand.New(rand.NewPCG(2026, 12))
	for trial := range 30 {
		agents := 1 + master.IntN(5)
		senders := 1 + master.IntN(8)
		rounds := 1 + master.IntN(15)
		seed := master.Uint64()
		t.Run(fmt.Sprintf("trial%02d_%dagents_%dsenders", trial, agents, senders), func(t *testing.T) {
			checkSerialAndInOrder(t, agents, senders, rounds, seed)
		})
	}
}

func checkSerialAndInOrder(t *testing.T, agents, senders, rounds int, seed uint64) {
	// Each sender has at most 3 messages out at once, so a queue of
	// 3*senders never fills: every message is accepted.
	c := NewCoordinator(Options{QueueSize: 3 * senders})
	accepted := &acceptedOrder{order: map[string][]tag{}}
	c.enqueued = accepted.hook
	defer c.Close(context.Background())
	recs := make([]*recorder, agents)
	for i := range recs {
		yr := rand.New(rand.NewPCG(seed, uint64(1000+i))) // used by agent i's worker only
		recs[i] = &recorder{yield: func() int { return yr.IntN(4) }}
		if err := c.RegisterAgent(fmt.Sprintf("agent-%d", i), recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	sent := make([][]int, senders) // per sender: how many messages to each agent
	var wg sync.WaitGroup
	for s := range senders {
		sent[s] = make([]int, agents)
		rng := rand.New(rand.NewPCG(seed, uint64(s)))
		wg.Go(func() {
			seq := 0
			for round := range rounds {
				var inner sync.WaitGroup
				for range 1 + rng.IntN(3) {
					target := rng.IntN(agents)
					tg := tag{Sender: s, Round: round, Seq: seq}
					seq++
					sent[s][target]++
					spin := rng.IntN(3)
					inner.Go(func() {
						for range spin {
							runtime.Gosched()
						}
						id := fmt.Sprintf("agent-%d", target)
						if resp, err := c.SendMessage(context.Background(), id, tagMessage(tg)); err != nil || resp != tg.Seq {
							t.Errorf("%v to %s: %v, %v", tg, id, resp, err)
						}
					})
				}
				inner.Wait()
			}
		})
	}
	wg.Wait()
	for i, rec := range recs {
		id := fmt.Sprintf("agent-%d", i)
		if m := rec.maxInFlight.Load(); m > 1 {
			t.Errorf("%s: up to %d handlers at once, want 1", id, m)
		}
		if !slices.Equal(rec.handled, accepted.order[id]) {
			t.Errorf("%s: handled %v, accepted %v; want the same order", id, rec.handled, accepted.order[id])
		}
		count := make([]int, senders)
		last := make([]tag, senders)
		for _, tg := range rec.handled {
			count[tg.Sender]++
			// A sender's rounds are sequential: a later round is handled later.
			if prev := last[tg.Sender]; count[tg.Sender] > 1 && tg.Round < prev.Round {
				t.Errorf("%s: sender %d round %d handled after round %d", id, tg.Sender, tg.Round, prev.Round)
			}
			last[tg.Sender] = tg
		}
		for s := range senders {
			if count[s] != sent[s][i] {
				t.Errorf("%s: handled %d messages of sender %d, want %d (each exactly once)", id, count[s], s, sent[s][i])
			}
		}
	}
}
