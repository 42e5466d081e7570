package aacp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/mcprt/mcprt/core"
)

// MaxCounterSleepMs is the longest sleep CounterAgent accepts in
// payload.ms: one day.
const MaxCounterSleepMs = 24 * 60 * 60 * 1000

// EchoAgent returns the TEST fixture agent "echo". It answers
// every message with {"type": msg.Type, "payload": msg.Payload}: a
// map[string]any whose "payload" is the json.RawMessage received, left out
// when the message has none. It keeps no state and is safe for concurrent
// use.
func EchoAgent() Handler {
	return HandlerFunc(func(_ context.Context, msg Message, _ State) (any, error) {
		resp := map[string]any{"type": msg.Type}
		if len(msg.Payload) > 0 {
			resp["payload"] = msg.Payload
		}
		return resp, nil
	})
}

// CounterAgent returns the TEST fixture agent "counter", made
// for observing FIFO order. For each message it:
//   - if the payload is a JSON object with a key "ms", sleeps that many
//     milliseconds (a number from 0 to MaxCounterSleepMs; anything else in
//     "ms" is an INVALID_ARGUMENT error), returning early with ctx's error,
//     and without counting, when ctx is done; any other payload (none, not
//     an object, no "ms") means no sleep;
//   - adds 1 to "count" in its state, stored as a float64 (what a JSON
//     round trip of the state gives; a missing count is 0);
//   - answers {"count": n}, a map[string]any with n the new count as an
//     int64.
//
// It is safe for concurrent use (its only state is its agent's State).
func CounterAgent() Handler {
	return HandlerFunc(func(ctx context.Context, msg Message, state State) (any, error) {
		d, err := counterSleep(msg.Payload)
		if err != nil {
			return nil, err
		}
		if d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, fmt.Errorf("counter agent: sleep of %v interrupted, count unchanged: %w", d, ctxErr(ctx))
			}
		}
		var n float64
		switch v := state["count"].(type) {
		case nil:
		case float64:
			n = v
		default:
			return nil, core.Errorf(core.CodeInternal, "counter agent: state count is a %T; want a float64", v)
		}
		n++
		state["count"] = n
		return map[string]any{"count": int64(n)}, nil
	})
}

// counterSleep returns how long CounterAgent sleeps for payload.
func counterSleep(payload json.RawMessage) (time.Duration, error) {
	payload = bytes.TrimSpace(payload)
	if len(payload) == 0 || payload[0] != '{' {
		return 0, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(payload, &fields); err != nil {
		return 0, nil // not a valid object: treated as no payload
	}
	raw, ok := fields["ms"]
	if !ok {
		return 0, nil
	}
	var ms float64
	if err := json.Unmarshal(raw, &ms); err != nil || math.IsNaN(ms) || ms < 0 || ms > MaxCounterSleepMs {
		return 0, core.Errorf(core.CodeInvalidArgument,
			"counter agent: payload.ms is %s; want a number of milliseconds from 0 to %d", clip(string(raw), 40), MaxCounterSleepMs)
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}
