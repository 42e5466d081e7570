package aacp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcprt/mcprt/core"
)

func TestEchoAgent(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
		want string
	}{
		{"with payload", Message{Type: "ping", Payload: json.RawMessage(`{"a":[1,2]}`), SourceAgentID: "x"}, `{"payload":{"a":[1,2]},"type":"ping"}`},
		{"null payload", Message{Type: "ping", Payload: json.RawMessage(`null`)}, `{"payload":null,"type":"ping"}`},
		{"no payload", Message{Type: "ping"}, `{"type":"ping"}`},
	}
	h := newHarness(t, Options{})
	h.register(t, "echo", EchoAgent())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := h.c.SendMessage(context.Background(), "echo", tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(resp)
			if err != nil || string(got) != tt.want {
				t.Errorf("echo answered %s (%v), want %s", got, err, tt.want)
			}
		})
	}
	if st, _ := h.c.AgentState("echo"); len(st) != 0 {
		t.Errorf("echo state = %v, want empty", st)
	}
}

func TestCounterAgentCounts(t *testing.T) {
	h := newHarness(t, Options{})
	h.register(t, "counter", CounterAgent())
	payloads := []string{"", `[1]`, `"text"`, `{}`, `{"other":1}`, `{"ms":0}`, `{"ms":null}`, `{"ms":`}
	for i, p := range payloads {
		resp, err := h.c.SendMessage(context.Background(), "counter", Message{Type: "inc", Payload: json.RawMessage(p)})
		if p == `{"ms":` {
			// Not JSON: refused by the coordinator, never counted.
			if codeOf(err) != core.CodeInvalidArgument {
				t.Errorf("payload %s: %v, want INVALID_ARGUMENT", p, err)
			}
			continue
		}
		if err != nil || !cmp.Equal(resp, map[string]any{"count": int64(i + 1)}) {
			t.Errorf("payload %q: %v, %v; want count %d", p, resp, err, i+1)
		}
	}
	resp, _ := h.c.SendMessage(context.Background(), "counter", Message{Type: "inc"})
	if got, _ := json.Marshal(resp); string(got) != `{"count":8}` {
		t.Errorf("counter answered %s, want {\"count\":8}", got)
	}
	if st, err := h.c.AgentState("counter"); err != nil || !cmp.Equal(st, State{"count": 8.0}) {
		t.Errorf("counter state = %v, %v; want count 8 as float64", st, err)
	}
}

func TestCounterAgentBadSleep(t *testing.T) {
	h := newHarness(t, Options{})
	h.register(t, "counter", CounterAgent())
	for _, p := range []string{`{"ms":-1}`, `{"ms":"100"}`, `{"ms":1e12}`, `{"ms":[1]}`} {
		_, err := h.c.SendMessage(context.Background(), "counter", Message{Type: "inc", Payload: json.RawMessage(p)})
		if codeOf(err) != core.CodeInvalidArgument || !strings.Contains(err.Error(), "want a number of milliseconds from 0 to 86400000") {
			t.Errorf("payload %s: %v, want INVALID_ARGUMENT naming the allowed range", p, err)
		}
	}
	if st, _ := h.c.AgentState("counter"); len(st) != 0 {
		t.Errorf("state after refused sleeps = %v, want no count", st)
	}
}

func TestCounterAgentSleeps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewCoordinator(Options{})
		if err := c.RegisterAgent("counter", CounterAgent()); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		resp, err := c.SendMessage(context.Background(), "counter", Message{Type: "inc", Payload: json.RawMessage(`{"ms":1500}`)})
		if err != nil || !cmp.Equal(resp, map[string]any{"count": int64(1)}) {
			t.Fatalf("counter: %v, %v", resp, err)
		}
		if d := time.Since(start); d != 1500*time.Millisecond {
			t.Errorf("counter slept %v, want 1.5s", d)
		}

		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start = time.Now()
		_, err = c.SendMessage(ctx, "counter", Message{Type: "inc", Payload: json.RawMessage(`{"ms":60000}`)})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("cancelled sleep: %v, want context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d != 100*time.Millisecond {
			t.Errorf("SendMessage returned after %v, want at the 100ms deadline", d)
		}
		synctest.Wait() // the handler has returned early too
		if st, _ := c.AgentState("counter"); !cmp.Equal(st, State{"count": 1.0}) {
			t.Errorf("state after an interrupted sleep = %v, want count 1", st)
		}
		if time.Since(start) != 100*time.Millisecond {
			t.Errorf("the handler kept sleeping after its ctx ended")
		}
		if err := c.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCounterAgentShowsFIFO(t *testing.T) {
	// A slow first message does not let a fast second one overtake it.
	synctest.Test(t, func(t *testing.T) {
		c := NewCoordinator(Options{})
		if err := c.RegisterAgent("counter", CounterAgent()); err != nil {
			t.Fatal(err)
		}
		var results [3]chan int64
		for i, ms := range []string{`{"ms":300}`, `{"ms":100}`, `{"ms":0}`} {
			results[i] = make(chan int64, 1)
			go func() {
				resp, err := c.SendMessage(context.Background(), "counter", Message{Type: "inc", Payload: json.RawMessage(ms)})
				if err != nil {
					t.Error(err)
				}
				n, _ := resp.(map[string]any)["count"].(int64)
				results[i] <- n
			}()
			synctest.Wait() // message i is accepted before message i+1 is sent
		}
		for i, ch := range results {
			if n := <-ch; n != int64(i+1) {
				t.Errorf("message %d got count %d, want %d", i, n, i+1)
			}
		}
		if err := c.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
