package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/aacp"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

func TestAgentSendMessage(t *testing.T) {
	c := newClient(t, setup{mode: mcp.ModeTest})
	t.Run("echo", func(t *testing.T) {
		c := c.sub(t)
		res := c.ok("agent_send_message", `{"targetAgentId":"echo","message":{"type":"hello","payload":{"a":[1,"two"]}}}`)
		sameKeys(t, "echo response", res, "type", "payload")
		if got, _ := json.Marshal(res["payload"]); string(got) != `{"a":[1,"two"]}` {
			t.Errorf("payload = %s", got)
		}
		res = c.ok("agent_send_message", `{"targetAgentId":"echo","message":{"type":"bare"}}`)
		sameKeys(t, "echo response", res, "type")
	})
	t.Run("counter", func(t *testing.T) {
		c := c.sub(t)
		for want := 1.0; want <= 3; want++ {
			res := c.ok("agent_send_message", `{"targetAgentId":"counter","message":{"type":"inc","payload":{"ms":1}}}`)
			if res["count"] != want {
				t.Errorf("count = %v, want %v", res["count"], want)
			}
		}
		c.fails("agent_send_message", `{"targetAgentId":"counter","message":{"type":"inc","payload":{"ms":-1}}}`,
			core.CodeInvalidArgument)
	})
	t.Run("unknown agent", func(t *testing.T) {
		c := c.sub(t)
		e := c.fails("agent_send_message", `{"targetAgentId":"nobody","message":{"type":"x"}}`, core.CodeNotFound)
		if msg := e["message"].(string); !strings.Contains(msg, "nobody") || !strings.Contains(msg, "counter") {
			t.Errorf("message %q should name the unknown agent and the registered ones", msg)
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		c := c.sub(t)
		for _, args := range []string{
			`{"targetAgentId":"echo"}`,
			`{"targetAgentId":"echo","message":{"payload":1}}`,
			`{"targetAgentId":"echo","message":{"type":"x","sourceAgentId":"me"}}`,
			`{"targetAgentId":"","message":{"type":"x"}}`,
		} {
			c.fails("agent_send_message", args, core.CodeInvalidArgument)
		}
	})
}

// A response that is not an object reaches the client as text only.
func TestAgentSendMessageNonObjectResponse(t *testing.T) {
	c := newClient(t, setup{})
	mustRegister(t, c, "answers", func(context.Context, aacp.Message, aacp.State) (any, error) { return []int{4, 2}, nil })
	mustRegister(t, c, "fails", func(context.Context, aacp.Message, aacp.State) (any, error) {
		return nil, errors.New("the agent could not do it")
	})
	res := c.call("agent_send_message", `{"targetAgentId":"answers","message":{"type":"q"}}`)
	if res["isError"] != false || firstText(t, res) != "[4,2]" {
		t.Errorf("result = %v, want the text [4,2]", res)
	}
	e := c.fails("agent_send_message", `{"targetAgentId":"fails","message":{"type":"q"}}`, core.CodeInternal)
	if !strings.Contains(e["message"].(string), "could not do it") {
		t.Errorf("message = %q", e["message"])
	}
}

func TestAgentSendMessageQueueFull(t *testing.T) {
	c := newClient(t, setup{queue: 1})
	started, release := make(chan struct{}, 3), make(chan struct{})
	mustRegister(t, c, "slow", func(context.Context, aacp.Message, aacp.State) (any, error) {
		started <- struct{}{}
		<-release
		return map[string]any{"done": true}, nil
	})
	msg := `{"targetAgentId":"slow","message":{"type":"work"}}`
	_, first := c.callAsync("agent_send_message", msg)
	<-started
	// The queue holds one message: of the next two, one waits and the
	// other is refused at once.
	_, second := c.callAsync("agent_send_message", msg)
	_, third := c.callAsync("agent_send_message", msg)
	var waiting <-chan map[string]any
	select {
	case m := <-second:
		toolError(t, m["result"].(map[string]any), core.CodeResourceExhausted)
		waiting = third
	case m := <-third:
		toolError(t, m["result"].(map[string]any), core.CodeResourceExhausted)
		waiting = second
	}
	close(release)
	for _, ch := range []<-chan map[string]any{first, waiting} {
		if res := c.wait(ch)["result"].(map[string]any); res["isError"] != false {
			t.Errorf("result = %v, want success", res)
		}
	}
}

func TestAgentGetStateRedacted(t *testing.T) {
	c := newClient(t, setup{mode: mcp.ModeTest})
	mustRegister(t, c, "vault", func(_ context.Context, _ aacp.Message, st aacp.State) (any, error) {
		st["apiKey"] = "s3cr3t"
		st["nested"] = map[string]any{"Password": "hunter2", "ok": 1}
		st["count"] = 2
		return nil, nil
	})
	c.ok("agent_send_message", `{"targetAgentId":"counter","message":{"type":"inc"}}`)
	c.call("agent_send_message", `{"targetAgentId":"vault","message":{"type":"fill"}}`)

	res := c.ok("agent_get_state", `{"agentId":"vault"}`)
	sameKeys(t, "agent_get_state", res, "agentId", "state", "truncated")
	state, _ := json.Marshal(res["state"])
	if want := `{"apiKey":"[REDACTED]","count":2,"nested":{"Password":"[REDACTED]","ok":1}}`; string(state) != want {
		t.Errorf("state = %s, want %s", state, want)
	}
	if res["agentId"] != "vault" || res["truncated"] != false {
		t.Errorf("agent_get_state = %v", res)
	}
	if st := c.ok("agent_get_state", `{"agentId":"counter"}`)["state"]; fmt.Sprint(st) != "map[count:1]" {
		t.Errorf("counter state = %v", st)
	}
	if st := c.ok("agent_get_state", `{"agentId":"echo"}`)["state"]; fmt.Sprint(st) != "map[]" {
		t.Errorf("echo state = %v, want {}", st)
	}
	c.fails("agent_get_state", `{"agentId":"nobody"}`, core.CodeNotFound)
	c.fails("agent_get_state", `{}`, core.CodeInvalidArgument)
}

func TestAgentGetStateTruncated(t *testing.T) {
	const limit = 60
	c := newClient(t, setup{tweak: func(cfg *config.Base) { cfg.Tools.MaxStateBytes = limit }})
	x20 := strings.Repeat("x", 20)
	fill := func(values map[string]any) func(context.Context, aacp.Message, aacp.State) (any, error) {
		return func(_ context.Context, _ aacp.Message, st aacp.State) (any, error) {
			for k, v := range values {
				st[k] = v
			}
			return nil, nil
		}
	}
	mustRegister(t, c, "big", fill(map[string]any{"c": x20, "a": x20, "b": x20}))
	mustRegister(t, c, "huge", fill(map[string]any{"a": strings.Repeat("y", 100), "b": 1}))
	mustRegister(t, c, "fits", fill(map[string]any{"a": x20, "b": x20}))
	for _, id := range []string{"big", "huge", "fits"} {
		c.call("agent_send_message", `{"targetAgentId":"`+id+`","message":{"type":"fill"}}`)
	}

	tests := []struct {
		id, want  string
		truncated bool
	}{
		{"big", `{"a":"` + x20 + `","b":"` + x20 + `"}`, true}, // 55 bytes; with c, 82
		{"huge", `{}`, true},
		{"fits", `{"a":"` + x20 + `","b":"` + x20 + `"}`, false},
	}
	for _, tt := range tests {
		res := c.ok("agent_get_state", `{"agentId":"`+tt.id+`"}`)
		state, _ := json.Marshal(res["state"])
		if string(state) != tt.want || res["truncated"] != tt.truncated {
			t.Errorf("%s: state %s truncated %v; want %s truncated %v", tt.id, state, res["truncated"], tt.want, tt.truncated)
		}
		if len(state) > limit {
			t.Errorf("%s: state is %d bytes, over the %d limit", tt.id, len(state), limit)
		}
	}
}

// mustRegister registers an agent on c's coordinator; a nil f answers {}.
func mustRegister(t *testing.T, c *client, id string, f aacp.HandlerFunc) {
	t.Helper()
	if f == nil {
		f = func(context.Context, aacp.Message, aacp.State) (any, error) { return map[string]any{}, nil }
	}
	if err := c.agents.RegisterAgent(id, f); err != nil {
		t.Fatal(err)
	}
}

func TestBoundStateEdges(t *testing.T) {
	if st, cut, err := boundState(nil, 10); err != nil || cut || st == nil || len(st) != 0 {
		t.Errorf("boundState(nil) = %v, %v, %v; want {}, false, nil", st, cut, err)
	}
	st := map[string]any{"a": 1, "b": 2}
	if got, cut, _ := boundState(st, len(`{"a":1,"b":2}`)); cut || len(got) != 2 {
		t.Errorf("a state exactly at the limit was cut: %v", got)
	}
	if got, cut, _ := boundState(st, len(`{"a":1,"b":2}`)-1); !cut || len(got) != 1 || got["a"] != 1 {
		t.Errorf("one byte over the limit: %v, %v; want {a:1}, true", got, cut)
	}
	if _, _, err := boundState(map[string]any{"f": func() {}}, 100); err == nil {
		t.Error("boundState encoded a func")
	}
}
