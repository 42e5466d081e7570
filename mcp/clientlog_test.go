package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// logEveryLevel is a tool that logs one message at each level, least
// severe first, and returns the errors Log gave.
func logEveryLevel() Tool {
	return handlerTool("log_all", func(ctx context.Context, req *CallToolRequest) (any, error) {
		var errs []string
		for _, l := range logLevels {
			errs = append(errs, errorCodeOf(req.Log(ctx, l, "at "+string(l))))
		}
		return map[string]any{"errors": errs}, nil
	})
}

// logLevelsSeen returns the levels of the notifications/message among
// msgs, in order.
func logLevelsSeen(t *testing.T, msgs []json.RawMessage) []string {
	t.Helper()
	var levels []string
	for _, raw := range msgs {
		var m struct {
			Method string
			Params logMessage
		}
		if err := json.Unmarshal(raw, &m); err != nil || m.Method != NotifyMessage {
			t.Fatalf("unexpected message %s", raw)
		}
		if m.Params.Logger != "log_all" || m.Params.Data != "at "+string(m.Params.Level) {
			t.Errorf("message %s", raw)
		}
		levels = append(levels, string(m.Params.Level))
	}
	return levels
}

// TestLogSetLevelFilters: after logging/setLevel L the client gets the
// messages at L and above, and before any setLevel those at info and above.
func TestLogSetLevelFilters(t *testing.T) {
	names := make([]string, len(logLevels))
	for i, l := range logLevels {
		names[i] = string(l)
	}
	cases := []struct{ set, want string }{{"", "info"}}
	for _, l := range names {
		cases = append(cases, struct{ set, want string }{l, l})
	}
	for _, tc := range cases {
		t.Run("set="+tc.set, func(t *testing.T) {
			p := newPeer(t, peerOptions{tools: []Tool{logEveryLevel()}})
			if tc.set != "" {
				resp := p.request(`"lvl"`, MethodLoggingSetLevel, `{"level":"`+tc.set+`"}`)
				if string(mustMarshal(t, resp["result"])) != `{}` {
					t.Fatalf("setLevel: %v", resp)
				}
			}
			if got := string(p.sess.ClientLogLevel()); got != tc.want {
				t.Errorf("ClientLogLevel = %s, want %s", got, tc.want)
			}
			resp, before := p.untilResponse(p.startCall("log_all", "", ""))
			want := names[slices.Index(names, tc.want):]
			if got := logLevelsSeen(t, before); !slices.Equal(got, want) {
				t.Errorf("levels sent %v, want %v", got, want)
			}
			var res struct{ Errors []string }
			if err := json.Unmarshal([]byte(resultText(t, resp)), &res); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Errors, make([]string, len(logLevels))) {
				t.Errorf("Log errors %q, want none", res.Errors)
			}
		})
	}
}

// TestLogSetLevelErrors: a level that is not one of the eight is -32602
// naming the allowed ones; the level is unchanged.
func TestLogSetLevelErrors(t *testing.T) {
	allowed := "debug, info, notice, warning, error, critical, alert, emergency"
	for _, tc := range []struct{ name, params, want string }{
		{"unknown", `{"level":"verbose"}`, `unknown logging level "verbose"; allowed: ` + allowed},
		{"slog name", `{"level":"warn"}`, `unknown logging level "warn"; allowed: ` + allowed},
		{"case", `{"level":"ERROR"}`, `unknown logging level "ERROR"`},
		{"missing", `{}`, "needs params.level, one of " + allowed},
		{"wrong key case", `{"Level":"debug"}`, "needs params.level"},
		{"number", `{"level":3}`, "needs params.level"},
		{"not an object", `["debug"]`, "params must be an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPeer(t, peerOptions{})
			e := rpcError(t, p.request(`1`, MethodLoggingSetLevel, tc.params))
			if e["code"] != float64(-32602) || !strings.Contains(e["message"].(string), tc.want) {
				t.Errorf("error %v, want -32602 with %q", e, tc.want)
			}
			if got := p.sess.ClientLogLevel(); got != DefaultClientLogLevel {
				t.Errorf("level %s after a refused setLevel", got)
			}
		})
	}
}

// TestLogNotBeforeInitialized: nothing is sent before the client's
// notifications/initialized; setLevel is refused with -32002 before it.
func TestLogNotBeforeInitialized(t *testing.T) {
	c := newTestClient(t, transportMemory, testConfig(), Options{}, nil, "")
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	c.expect()
	if err := c.sess.Log(context.Background(), LogEmergency, "", "too early"); errorCodeOf(err) != "NOT_INITIALIZED" {
		t.Errorf("Log before initialized: %v", err)
	}
	if e := rpcError(t, c.request(`2`, MethodLoggingSetLevel, `{"level":"debug"}`)); e["code"] != float64(CodeNotInitialized) {
		t.Errorf("setLevel before initialized: %v", e)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.quiet() // nothing was sent unasked
	if err := c.sess.Log(context.Background(), "loud", "", "x"); errorCodeOf(err) != "INVALID_ARGUMENT" {
		t.Errorf("Log with an unknown level: %v", err)
	}
	c.quiet()
}

// TestLogRedactsAndSanitizes: forwarded data goes through the stderr
// logs' redaction (logging.redactKeys, any depth, case-insensitive) and
// sanitization (control characters escaped), on a copy.
func TestLogRedactsAndSanitizes(t *testing.T) {
	type creds struct {
		User     string `json:"user"`
		Password string `json:"password"`
	}
	data := map[string]any{
		"user":   "bob",
		"APIKEY": "s3cret",
		"nested": map[string]any{"Token": "t0k", "list": []any{map[string]any{"secret": 1, "ok": "a\tb"}}},
		"creds":  creds{User: "amy", Password: "hunter2"},
		"text":   "line1\nline2\x1b[31mred",
		"k\ney":  "v",
	}
	original := fmt.Sprint(data)
	for _, tc := range []struct {
		name string
		data any
		want string
	}{
		{"object", data, `{"APIKEY":"[REDACTED]","creds":{"password":"[REDACTED]","user":"amy"},` +
			`"k\\u000aey":"v","nested":{"Token":"[REDACTED]","list":[{"ok":"a\\u0009b","secret":"[REDACTED]"}]},` +
			`"text":"line1\\u000aline2\\u001b[31mred","user":"bob"}`},
		{"string", "bad\r\nline", `"bad\\u000d\\u000aline"`},
		{"raw JSON", json.RawMessage(`{"cookie":"c","n":1}`), `{"cookie":"[REDACTED]","n":1}`},
		{"error", fmt.Errorf("failed:\n%s", "boom"), `"failed:\\u000aboom"`},
		{"nil", nil, `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := handlerTool("leaky", func(ctx context.Context, req *CallToolRequest) (any, error) {
				return "ok", req.Session.Log(ctx, LogWarning, "my\x1btool", tc.data)
			})
			p := newPeer(t, peerOptions{tools: []Tool{tool}})
			_, before := p.untilResponse(p.startCall("leaky", "", ""))
			if len(before) != 1 {
				t.Fatalf("want one notification, got %d", len(before))
			}
			var m struct{ Params map[string]json.RawMessage }
			if err := json.Unmarshal(before[0], &m); err != nil {
				t.Fatal(err)
			}
			if got := string(m.Params["data"]); got != tc.want {
				t.Errorf("data %s\nwant %s", got, tc.want)
			}
			if got := string(m.Params["logger"]); got != `"my\\u001btool"` {
				t.Errorf("logger %s", got)
			}
		})
	}
	if fmt.Sprint(data) != original {
		t.Errorf("the handler's data was changed: %v", data)
	}
}

// TestLogRateLimit: a session sends at most ClientLogBurst messages at
// once and ClientLogRate per second after; what passes the rate is
// dropped, and one warning says how many once the rate allows.
func TestLogRateLimit(t *testing.T) {
	const extra = 7
	flood := handlerTool("flood", func(ctx context.Context, req *CallToolRequest) (any, error) {
		var n struct{ N int }
		if err := json.Unmarshal(req.Arguments, &n); err != nil {
			return nil, err
		}
		dropped := 0
		for i := range n.N {
			switch err := req.Log(ctx, LogEmergency, i); {
			case err == ErrLogDropped:
				dropped++
			case err != nil:
				return nil, err
			}
		}
		return map[string]any{"dropped": dropped}, nil
	})
	for _, tc := range []struct {
		name, level, wantLevel string
	}{
		{"report at warning", "", "warning"},
		{"report at the session's level", "error", "error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPeer(t, peerOptions{manual: true, tools: []Tool{flood}})
			if tc.level != "" {
				p.request(`"lvl"`, MethodLoggingSetLevel, `{"level":"`+tc.level+`"}`)
			}
			resp, before := p.untilResponse(p.startCall("flood", fmt.Sprintf(`{"N":%d}`, ClientLogBurst+extra), ""))
			if len(before) != ClientLogBurst || resultText(t, resp) != fmt.Sprintf(`{"dropped":%d}`, extra) {
				t.Fatalf("%d messages sent, result %s; want %d sent, %d dropped", len(before), resultText(t, resp),
					ClientLogBurst, extra)
			}
			p.quiet() // no report before the rate allows one
			p.clock.Advance(logInterval - time.Nanosecond)
			p.quiet()
			p.clock.Advance(time.Nanosecond) // the report takes the one message of credit
			params := p.expectNotification(NotifyMessage)
			data, _ := params["data"].(map[string]any)
			if params["level"] != tc.wantLevel || params["logger"] != clientLogSource || data["dropped"] != float64(extra) ||
				!strings.Contains(data["message"].(string), fmt.Sprintf("%d log messages were dropped", extra)) {
				t.Errorf("report %v", params)
			}
			// The credit is spent: the next message is dropped, and reported
			// after one more interval.
			resp, before = p.untilResponse(p.startCall("flood", `{"N":1}`, ""))
			if len(before) != 0 || resultText(t, resp) != `{"dropped":1}` {
				t.Errorf("after the report: %d sent, %s", len(before), resultText(t, resp))
			}
			p.clock.Advance(logInterval)
			if params := p.expectNotification(NotifyMessage); !strings.HasPrefix(
				params["data"].(map[string]any)["message"].(string), "1 log message was dropped") {
				t.Errorf("second report %v", params)
			}
			// Credit refills at the rate, up to the burst.
			p.clock.Advance(3 * logInterval)
			resp, before = p.untilResponse(p.startCall("flood", `{"N":4}`, ""))
			if len(before) != 3 || resultText(t, resp) != `{"dropped":1}` {
				t.Errorf("after 3 intervals: %d sent, %s", len(before), resultText(t, resp))
			}
			p.clock.Advance(time.Hour)
			p.expectNotification(NotifyMessage) // the report of that one
			resp, before = p.untilResponse(p.startCall("flood", fmt.Sprintf(`{"N":%d}`, ClientLogBurst), ""))
			if len(before) != ClientLogBurst || resultText(t, resp) != `{"dropped":0}` {
				t.Errorf("after an hour: %d sent, %s", len(before), resultText(t, resp))
			}
		})
	}
}

// TestLogBucketExact drives the token bucket alone: credit is exact
// integer time, so a message every logInterval passes forever.
func TestLogBucketExact(t *testing.T) {
	clock := core.NewManualClock(time.Unix(0, 0))
	var b logBucket
	fired := 0
	due := func() { fired++ }
	for range ClientLogBurst {
		if _, pass := b.admit(clock, due); !pass {
			t.Fatal("the burst did not pass")
		}
	}
	for i := range 1000 {
		clock.Advance(logInterval)
		if report, pass := b.admit(clock, due); !pass || report != 0 {
			t.Fatalf("message %d at the rate: pass %v report %d", i, pass, report)
		}
	}
	if _, pass := b.admit(clock, due); pass {
		t.Fatal("a message over the rate passed")
	}
	clock.Advance(logInterval)
	if fired != 1 || b.dropped != 1 {
		t.Fatalf("fired %d, dropped %d", fired, b.dropped)
	}
	if n := b.due(clock, due); n != 1 || b.dropped != 0 {
		t.Errorf("due reported %d", n)
	}
	if b.timer != nil {
		t.Errorf("timer still set")
	}
}
