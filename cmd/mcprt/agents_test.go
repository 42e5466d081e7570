package main

// Black-box tests of the agent tools through the real binary
// with the TEST fixture agents echo and counter: agent_send_message,
// FIFO handling under concurrent senders, agent_list, agent_get_state
// (bounded by tools.maxStateBytes), unknown agents, and the modes that keep
// or drop the agent tools.
//
// Not covered: the redaction of secret-looking keys in agent_get_state. No
// fixture agent can store a key of the caller's choosing (counter keeps
// only "count", echo keeps nothing), so a black-box test cannot put a
// secret into an agent's state; tools/builtin's own tests cover it.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sendArgs are agent_send_message's arguments; payload is JSON text, left
// out when empty.
func sendArgs(target, msgType, payload string) string {
	msg := `{"type":` + jsonString(msgType)
	if payload != "" {
		msg += `,"payload":` + payload
	}
	return `{"targetAgentId":` + jsonString(target) + `,"message":` + msg + `}}`
}

func TestAgentSendMessage(t *testing.T) {
	t.Parallel()
	const secret = "xoxb-AGENT-MARKER-7731"
	c := newToolClient(t, testMode)

	// echo answers {type, payload} as it got them.
	for _, tc := range []struct{ payload, want string }{
		{`{"a":[1,2,{"b":null}],"s":"` + secret + `"}`, `{"type":"greet","payload":{"a":[1,2,{"b":null}],"s":"` + secret + `"}}`},
		{`"just a string"`, `{"type":"greet","payload":"just a string"}`},
		{`42`, `{"type":"greet","payload":42}`},
		{``, `{"type":"greet"}`},
	} {
		if r := c.ok("agent_send_message", sendArgs("echo", "greet", tc.payload)); !mapsEqualJSON(r, tc.want) {
			t.Errorf("echo agent answered %v, want %s", r, tc.want)
		}
	}

	// counter counts, one message at a time.
	for want := 1; want <= 3; want++ {
		r := c.ok("agent_send_message", sendArgs("counter", "inc", ""))
		if !mapsEqualJSON(r, fmt.Sprintf(`{"count":%d}`, want)) {
			t.Fatalf("counter answered %v, want count %d", r, want)
		}
	}
	if r := c.ok("agent_send_message", sendArgs("counter", "inc", `{"ms":1}`)); !mapsEqualJSON(r, `{"count":4}`) {
		t.Errorf("counter with payload.ms answered %v, want count 4", r)
	}

	// The agent's own error passes through; the count does not change.
	c.fails("agent_send_message", sendArgs("counter", "inc", `{"ms":"soon"}`), "INVALID_ARGUMENT")
	if r := c.ok("agent_get_state", `{"agentId":"counter"}`); !mapsEqualJSON(r, `{"agentId":"counter","state":{"count":4},"truncated":false}`) {
		t.Errorf("counter state %v, want count 4", r)
	}
	if r := c.ok("agent_get_state", `{"agentId":"echo"}`); !mapsEqualJSON(r, `{"agentId":"echo","state":{},"truncated":false}`) {
		t.Errorf("echo state %v, want {}", r)
	}

	// Arguments that fail the input schema.
	e := c.fails("agent_send_message", `{"targetAgentId":"echo","message":{"payload":1}}`, "INVALID_ARGUMENT")
	wantProblemAt(t, e, "/message")
	e = c.fails("agent_send_message", `{"targetAgentId":"echo","message":{"type":"t","extra":1}}`, "INVALID_ARGUMENT")
	wantProblemAt(t, e, "/message/extra")
	c.fails("agent_send_message", `{"targetAgentId":"","message":{"type":"t"}}`, "INVALID_ARGUMENT")
	c.fails("agent_get_state", `{}`, "INVALID_ARGUMENT")

	// Unknown agents.
	e = c.fails("agent_send_message", sendArgs("nobody", "inc", ""), "NOT_FOUND")
	if !strings.Contains(e.Message, "nobody") {
		t.Errorf("NOT_FOUND message %q does not name the agent", e.Message)
	}
	c.fails("agent_get_state", `{"agentId":"nobody"}`, "NOT_FOUND")
	c.close()
	c.noSecret(secret)
}

// TestAgentFIFOUnderConcurrentSenders pipelines 20 calls to the counter
// without waiting. The server reads them in order but runs the calls
// concurrently, so the order in which they reach the agent's queue is not
// the send order; what FIFO, one-at-a-time handling does guarantee is that
// the counts are exactly 1..20, each once, and the state ends at 20.
func TestAgentFIFOUnderConcurrentSenders(t *testing.T) {
	t.Parallel()
	const n = 20
	c := newToolClient(t, testMode, "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=32")
	var b strings.Builder
	var ids []string
	for range n {
		id := c.newID()
		ids = append(ids, id)
		b.WriteString(toolsCallLine(id, "agent_send_message", sendArgs("counter", "inc", `{"ms":5}`), "") + "\n")
	}
	c.p.SendRaw([]byte(b.String()))
	var counts []int
	for _, id := range ids {
		r, isMap := c.success(id).(map[string]any)
		if !isMap || len(r) != 1 {
			t.Fatalf("counter answered %v, want {count}", r)
		}
		k, err := strconv.Atoi(fmt.Sprint(r["count"]))
		if err != nil {
			t.Fatalf("count %v is not an integer", r["count"])
		}
		counts = append(counts, k)
	}
	sorted := slices.Sorted(slices.Values(counts))
	for i, k := range sorted {
		if k != i+1 {
			t.Fatalf("counts %v (sorted %v), want exactly 1..%d once each", counts, sorted, n)
		}
	}
	t.Logf("counts in send order: %v", counts)
	if r := c.ok("agent_get_state", `{"agentId":"counter"}`); !mapsEqualJSON(r, fmt.Sprintf(`{"agentId":"counter","state":{"count":%d},"truncated":false}`, n)) {
		t.Errorf("counter state %v, want count %d", r, n)
	}
	c.close()
}

func TestAgentList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mode, want string }{
		// agentIds and truncated as always; agents and total since agent
		// profiles (domain_agent_test.go).
		{"TEST", `{"agentIds":["counter","echo"],"truncated":false,"total":2,"agents":[` +
			`{"agentId":"counter","description":"","enabled":true,"sources":["in-process"]},` +
			`{"agentId":"echo","description":"","enabled":true,"sources":["in-process"]}]}`},
		{"FULL", `{"agentIds":[],"truncated":false,"agents":[],"total":0}`}, // the binary registers agents in TEST only
		{"READONLY", `{"agentIds":[],"truncated":false,"agents":[],"total":0}`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			c := newToolClient(t, "MCPRT_SERVER_MODE="+tc.mode)
			if r := c.ok("agent_list", `{}`); !mapsEqualJSON(r, tc.want) {
				t.Errorf("agent_list %v, want %s", r, tc.want)
			}
			c.fails("agent_list", `{"filter":"x"}`, "INVALID_ARGUMENT")
			if tc.mode == "TEST" {
				c.ok("agent_get_state", `{"agentId":"echo"}`)
			} else {
				c.fails("agent_get_state", `{"agentId":"echo"}`, "NOT_FOUND")
			}
			c.close()
		})
	}
}

func TestAgentStateBoundedByMaxStateBytes(t *testing.T) {
	t.Parallel()
	// {"count":1} is 11 bytes of JSON.
	for _, tc := range []struct {
		limit int
		want  string
	}{
		{5, `{"agentId":"counter","state":{},"truncated":true}`},
		{10, `{"agentId":"counter","state":{},"truncated":true}`},
		{11, `{"agentId":"counter","state":{"count":1},"truncated":false}`},
	} {
		t.Run(strconv.Itoa(tc.limit), func(t *testing.T) {
			t.Parallel()
			c := newToolClient(t, testMode, fmt.Sprintf("MCPRT_TOOLS_MAX_STATE_BYTES=%d", tc.limit))
			c.ok("agent_send_message", sendArgs("counter", "inc", ""))
			if r := c.ok("agent_get_state", `{"agentId":"counter"}`); !mapsEqualJSON(r, tc.want) {
				t.Errorf("agent_get_state with tools.maxStateBytes=%d: %v, want %s", tc.limit, r, tc.want)
			}
			// The state itself is intact: the next count is 2.
			if r := c.ok("agent_send_message", sendArgs("counter", "inc", "")); !mapsEqualJSON(r, `{"count":2}`) {
				t.Errorf("counter answered %v, want count 2", r)
			}
			c.close()
		})
	}
}

func TestAgentToolsByMode(t *testing.T) {
	t.Parallel()
	t.Run("MINIMAL", func(t *testing.T) {
		t.Parallel()
		c := newToolClient(t, "MCPRT_SERVER_MODE=MINIMAL")
		c.fails("agent_send_message", sendArgs("echo", "t", ""), "NOT_FOUND")
		c.fails("agent_list", `{}`, "NOT_FOUND")
		c.fails("agent_get_state", `{"agentId":"echo"}`, "NOT_FOUND")
		c.close()
	})
	t.Run("READONLY", func(t *testing.T) {
		t.Parallel()
		c := newToolClient(t, "MCPRT_SERVER_MODE=READONLY")
		c.fails("agent_send_message", sendArgs("echo", "t", ""), "NOT_FOUND") // not read-only
		c.ok("agent_list", `{}`)
		c.fails("agent_get_state", `{"agentId":"echo"}`, "NOT_FOUND") // listed, but no agent echo outside TEST
		c.close()
	})
}

// TestAgentQueueFull: an agent's queue is bounded; a message that finds it
// full is refused at once with RESOURCE_EXHAUSTED, and the
// accepted ones are all handled, one at a time. The counter is held busy by
// a first message that sleeps, while many more arrive behind it; the bound
// itself is not part of the contract, so the test only requires that some
// are refused and the rest counted exactly once.
func TestAgentQueueFull(t *testing.T) {
	t.Parallel()
	const n = 200
	inBusyWindow(t, "sending while the counter was busy", func(ms int) (bool, time.Duration) {
		// The first message's reply waits for its hold: a deadline past the longest.
		c := newToolClient(t, testMode, "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=300", "MCPRT_TOOLS_DEFAULT_TIMEOUT_MS=300000")
		sent := time.Now()
		first := c.send("agent_send_message", sendArgs("counter", "hold", fmt.Sprintf(`{"ms":%d}`, ms)))
		var b strings.Builder
		var ids []string
		for range n {
			id := c.newID()
			ids = append(ids, id)
			b.WriteString(toolsCallLine(id, "agent_send_message", sendArgs("counter", "inc", ""), "") + "\n")
		}
		c.p.SendRaw([]byte(b.String()))
		var counts []int
		refused := 0
		for _, id := range ids {
			res := c.result(id)
			if res["isError"] == true {
				c.toolErrorOf(id, "RESOURCE_EXHAUSTED", res)
				refused++
				continue
			}
			r := c.successOf(id, res).(map[string]any)
			k, err := strconv.Atoi(fmt.Sprint(r["count"]))
			if err != nil {
				t.Fatalf("count %v is not an integer", r["count"])
			}
			counts = append(counts, k)
		}
		if refused == 0 {
			// Past ms the counter may have been idle again, taking them all.
			if ok, took := within(sent, ms); !ok {
				return false, took
			}
			t.Fatalf("no message of %d was refused while the agent was busy: the queue is not bounded", n)
		}
		r := c.success(first).(map[string]any)
		counts = append(counts, int(mustInt(t, r["count"])))
		sorted := slices.Sorted(slices.Values(counts))
		for i, k := range sorted {
			if k != i+1 {
				t.Fatalf("counts (sorted) %v, want exactly 1..%d once each", sorted, len(counts))
			}
		}
		t.Logf("%d refused, %d counted", refused, len(counts))
		want := fmt.Sprintf(`{"agentId":"counter","state":{"count":%d},"truncated":false}`, len(counts))
		if r := c.ok("agent_get_state", `{"agentId":"counter"}`); !mapsEqualJSON(r, want) {
			t.Errorf("counter state %v, want %s", r, want)
		}
		c.close()
		return true, 0
	})
}

func mustInt(t *testing.T, v any) int64 {
	t.Helper()
	n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
	if err != nil {
		t.Fatalf("%v is not an integer", v)
	}
	return n
}
