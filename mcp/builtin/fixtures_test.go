package builtin

import (
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
)

func testClient(t *testing.T, tweak func(*core.Config)) *client {
	return newClient(t, setup{mode: core.ModeTest, tweak: tweak})
}

func TestFixtureNoopAndEcho(t *testing.T) {
	c := testClient(t, nil)
	if res := c.ok("noop", `{}`); len(res) != 0 {
		t.Errorf("noop = %v, want {}", res)
	}
	c.ok("noop", "")
	c.fails("noop", `{"a":1}`, core.CodeInvalidArgument)

	if res := c.ok("echo", `{"message":"héllo\n"}`); res["message"] != "héllo\n" || len(res) != 1 {
		t.Errorf("echo = %v", res)
	}
	c.fails("echo", `{}`, core.CodeInvalidArgument)
	c.fails("echo", `{"message":3}`, core.CodeInvalidArgument)
}

func TestFixtureSleep(t *testing.T) {
	c := testClient(t, func(cfg *core.Config) { cfg.Tools.DefaultTimeoutMs = 100 })
	if res := c.ok("sleep", `{"ms":5}`); res["sleptMs"] != 5.0 || len(res) != 1 {
		t.Errorf("sleep = %v, want {sleptMs: 5}", res)
	}
	if res := c.ok("sleep", `{"ms":2.0}`); res["sleptMs"] != 2.0 {
		t.Errorf("sleep 2.0 = %v, want {sleptMs: 2}", res)
	}
	for _, bad := range []string{`{}`, `{"ms":-1}`, `{"ms":1.5}`, `{"ms":"10"}`, `{"ms":1,"ignoreCancel":"yes"}`} {
		c.fails("sleep", bad, core.CodeInvalidArgument)
	}

	t.Run("stops at the deadline", func(t *testing.T) {
		c := c.sub(t)
		c.fails("sleep", `{"ms":60000}`, core.CodeTimeout)
		eventually(t, "the interrupted sleep returns and releases its slot", func() bool {
			return c.srv.Stats().ConcurrentExecutions == 0
		})
	})
	t.Run("ignoreCancel sleeps on", func(t *testing.T) {
		c := c.sub(t)
		c.fails("sleep", `{"ms":1500,"ignoreCancel":true}`, core.CodeTimeout)
		if n := c.srv.Stats().ConcurrentExecutions; n != 1 {
			t.Errorf("ConcurrentExecutions = %d right after the TIMEOUT, want 1 (the handler still sleeps)", n)
		}
		eventually(t, "the sleep ends and releases its slot", func() bool {
			return c.srv.Stats().ConcurrentExecutions == 0
		})
	})
}

func TestFixtureFailAndPanic(t *testing.T) {
	c := testClient(t, nil)
	e := c.fails("fail", `{"message":"disk on fire"}`, core.CodeInternal)
	if !strings.Contains(e["message"].(string), "disk on fire") {
		t.Errorf("message = %q, want the handler's message", e["message"])
	}
	c.fails("fail", `{}`, core.CodeInvalidArgument)

	e = c.failsRetryable("panic", `{}`, core.CodeInternal, true) // a panic may not recur
	if d, _ := e["details"].(map[string]any); d["reason"] != "panic" {
		t.Errorf("details = %v, want reason panic", e["details"])
	}
	c.ok("noop", `{}`) // still serving
}

func TestFixtureBigResult(t *testing.T) {
	c := testClient(t, func(cfg *core.Config) { cfg.Tools.MaxResultBytes = 4096 })
	res := c.call("big_result", `{"bytes":100}`)
	if res["isError"] != false {
		t.Fatalf("big_result 100 = %v", res)
	}
	if got := firstText(t, res); got != strings.Repeat("x", 100) {
		t.Errorf("big_result text = %q, want 100 x, unquoted (a string result is its text)", got)
	}
	if res := c.call("big_result", `{"bytes":0}`); firstText(t, res) != `` {
		t.Errorf("big_result 0 = %v", res)
	}
	// bytes goes up to tools.maxResultBytes + 1: enough for a result over
	// the limit, and no more.
	e := c.fails("big_result", `{"bytes":4097}`, core.CodeInternal)
	if d, _ := e["details"].(map[string]any); d["reason"] != "result_too_large" {
		t.Errorf("details = %v, want reason result_too_large", e["details"])
	}
	c.fails("big_result", `{"bytes":4098}`, core.CodeInvalidArgument)
	c.fails("big_result", `{"bytes":-1}`, core.CodeInvalidArgument)
	c.fails("big_result", `{"bytes":1.5}`, core.CodeInvalidArgument)
	if res := c.call("big_result", `{"bytes":2.0}`); firstText(t, res) != `xx` {
		t.Errorf("big_result 2.0 = %v, want \"xx\"", res)
	}
}

func TestFixtureUnserializable(t *testing.T) {
	c := testClient(t, nil)
	e := c.fails("unserializable", `{}`, core.CodeInternal)
	if d, _ := e["details"].(map[string]any); d["reason"] != "result_not_serializable" {
		t.Errorf("details = %v, want reason result_not_serializable", e["details"])
	}
}
