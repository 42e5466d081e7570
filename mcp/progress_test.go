package mcp

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// progressSteps is one Progress call of a handler.
type progressStep struct {
	progress, total float64
	message         string
}

// progressTool reports the steps and returns the error of each, by name.
func progressTool(steps []progressStep) Tool {
	return handlerTool("work", func(ctx context.Context, req *CallToolRequest) (any, error) {
		errs := make([]string, len(steps))
		for i, s := range steps {
			errs[i] = errorCodeOf(req.Progress(ctx, s.progress, s.total, s.message))
		}
		return map[string]any{"errors": errs}, nil
	})
}

// TestProgressOrdering: reports go out with the request's token while
// progress increases; a value that does not increase, or is not finite, is
// an error to the handler and nothing is sent. The message is sent from
// 2025-03-26 on.
func TestProgressOrdering(t *testing.T) {
	steps := []progressStep{
		{1, 0, "start"},
		{2, 10, "two"},
		{2, 10, "again"},      // not increasing
		{1.5, 10, "back"},     // decreasing
		{math.NaN(), 0, ""},   // not finite
		{3, math.Inf(1), ""},  // bad total
		{3, -1, ""},           // bad total
		{2.5, 10, "still <3"}, // above the last one sent (2): sent
		{3, 10, "three"},
	}
	wantErrs := `["","","INVALID_ARGUMENT","INVALID_ARGUMENT","INVALID_ARGUMENT","INVALID_ARGUMENT","INVALID_ARGUMENT","",""]`
	for _, tc := range []struct {
		version, token string
		message        bool
	}{
		{Version20241105, `"tok-1"`, false},
		{Version20250326, `7`, true},
		{Version20250618, `"t"`, true},
		{Version20251125, `-3`, true},
	} {
		t.Run(tc.version, func(t *testing.T) {
			p := newPeer(t, peerOptions{version: tc.version, tools: []Tool{progressTool(steps)}})
			resp, before := p.untilResponse(p.startCall("work", "", `{"progressToken":`+tc.token+`}`))
			var res struct{ Errors []string }
			if err := json.Unmarshal([]byte(resultText(t, resp)), &res); err != nil {
				t.Fatal(err)
			}
			if got := string(mustMarshal(t, res.Errors)); got != wantErrs {
				t.Errorf("errors %s\nwant   %s", got, wantErrs)
			}
			want := []string{
				`{"progressToken":` + tc.token + `,"progress":1,"message":"start"}`,
				`{"progressToken":` + tc.token + `,"progress":2,"total":10,"message":"two"}`,
				`{"progressToken":` + tc.token + `,"progress":2.5,"total":10,"message":"still \u003c3"}`,
				`{"progressToken":` + tc.token + `,"progress":3,"total":10,"message":"three"}`,
			}
			if len(before) != len(want) {
				t.Fatalf("%d notifications, want %d: %s", len(before), len(want), before)
			}
			for i, raw := range before {
				var m struct {
					Method string
					Params json.RawMessage
				}
				if err := json.Unmarshal(raw, &m); err != nil || m.Method != NotifyProgress {
					t.Fatalf("not a progress notification: %s", raw)
				}
				w := want[i]
				if !tc.message {
					w = w[:strings.Index(w, `,"message"`)] + `}`
				}
				var got, wantV any
				_ = json.Unmarshal(m.Params, &got)
				_ = json.Unmarshal([]byte(w), &wantV)
				if string(mustMarshal(t, got)) != string(mustMarshal(t, wantV)) {
					t.Errorf("notification %d: %s\nwant %s", i, m.Params, w)
				}
			}
		})
	}
}

// TestProgressWithoutToken: without a progressToken Progress sends
// nothing and returns ErrNoProgressToken.
func TestProgressWithoutToken(t *testing.T) {
	for _, meta := range []string{"", `{}`, `{"progressToken":null}`, `{"progressToken":{"a":1}}`, `{"progressToken":true}`} {
		p := newPeer(t, peerOptions{tools: []Tool{progressTool([]progressStep{{1, 2, "x"}})}})
		resp, before := p.untilResponse(p.startCall("work", "", meta))
		if len(before) != 0 || resultText(t, resp) != `{"errors":["ErrNoProgressToken"]}` {
			t.Errorf("meta %s: %d sent, result %s", meta, len(before), resultText(t, resp))
		}
	}
}

// TestProgressAfterAnswer: once the call is answered — the handler
// returned, its deadline passed, the client cancelled it — Progress
// returns ErrProgressEnded and nothing is sent.
func TestProgressAfterAnswer(t *testing.T) {
	for _, how := range []string{"returned", "timeout", "cancelled", "closed"} {
		t.Run(how, func(t *testing.T) {
			reqs := make(chan *CallToolRequest, 1)
			release := make(chan struct{})
			tool := handlerTool("slow", func(ctx context.Context, req *CallToolRequest) (any, error) {
				if err := req.Progress(ctx, 1, 0, ""); err != nil {
					return nil, err
				}
				reqs <- req
				if how == "returned" {
					return "done", nil
				}
				<-release
				return "late", nil
			})
			tool.Timeout = time.Second
			p := newPeer(t, peerOptions{manual: true, tools: []Tool{tool}})
			id := p.startCall("slow", "", `{"progressToken":"pt"}`)
			p.expectNotification(NotifyProgress)
			req := recv(t, reqs, "the handler's start")
			switch how {
			case "returned":
				if m, _ := p.untilResponse(id); resultText(t, m) != "done" {
					t.Fatalf("response %v", m)
				}
			case "timeout":
				p.clock.Advance(time.Second)
				if m, _ := p.untilResponse(id); toolError(t, m["result"].(map[string]any))["code"] != "TIMEOUT" {
					t.Fatalf("response %v", m)
				}
			case "cancelled":
				p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)
				p.quiet() // the cancellation was handled before the ping
			case "closed":
				p.sess.Close()
			}
			if err := req.Progress(context.Background(), 2, 0, ""); err != ErrProgressEnded {
				t.Errorf("Progress after the answer: %v", err)
			}
			close(release)
			if how != "closed" {
				p.quiet() // nothing more was sent
			}
		})
	}
}

// TestProgressRacesAnswer: reports from another goroutine racing the
// handler's return are sent before the answer or not at all.
func TestProgressRacesAnswer(t *testing.T) {
	const n = 200
	tool := handlerTool("race", func(ctx context.Context, req *CallToolRequest) (any, error) {
		started := make(chan struct{})
		go func() {
			close(started)
			for i := 1; i <= n; i++ {
				if req.Progress(context.Background(), float64(i), n, "") == ErrProgressEnded {
					return
				}
			}
		}()
		<-started
		return "ok", nil
	})
	p := newPeer(t, peerOptions{tools: []Tool{tool}})
	for range 20 {
		id := p.startCall("race", "", `{"progressToken":1}`)
		_, before := p.untilResponse(id)
		for _, raw := range before {
			if !strings.Contains(string(raw), NotifyProgress) {
				t.Fatalf("unexpected %s", raw)
			}
		}
		p.quiet() // nothing after the answer
	}
}
