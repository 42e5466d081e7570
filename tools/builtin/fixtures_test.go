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

// lookup20Valid is a full valid record for the lookup20 fixture.
const lookup20Valid = `{"id":"u-1","name":"Ada","email":"ada@example.org","age":36,"role":"dev","active":true,` +
	`"score":99.5,"tags":["a","b"],"address":{"street":"1 Main St","city":"Berlin","zip":"10115"},"phone":"+49 30 1",` +
	`"team":"core","manager":"grace","level":7,"locale":"de","timezone":"Europe/Berlin","created":"2026-01-01T00:00:00Z",` +
	`"notes":"n","quota":0,"flags":[true,false],"project":"mcprt"}`

func TestFixtureLookup20(t *testing.T) {
	c := testClient(t, nil)
	for _, args := range []string{lookup20Valid, `{"id":"x","name":"N","email":"a@b","age":0,"role":"guest"}`} {
		if res := c.ok("lookup20", args); res["ok"] != true || len(res) != 2 {
			t.Errorf("lookup20 %s = %v, want {ok: true, id}", args, res)
		}
	}
	if res := c.ok("lookup20", lookup20Valid); res["id"] != "u-1" {
		t.Errorf("lookup20 id = %v, want u-1", res["id"])
	}
	bad := []struct{ name, args string }{
		{"missing role", `{"id":"x","name":"N","email":"a@b","age":1}`},
		{"extra property", `{"id":"x","name":"N","email":"a@b","age":1,"role":"dev","x":1}`},
		{"empty name", `{"id":"x","name":"","email":"a@b","age":1,"role":"dev"}`},
		{"email without @", `{"id":"x","name":"N","email":"ab","age":1,"role":"dev"}`},
		{"age over 150", `{"id":"x","name":"N","email":"a@b","age":151,"role":"dev"}`},
		{"age not whole", `{"id":"x","name":"N","email":"a@b","age":1.5,"role":"dev"}`},
		{"role not in enum", `{"id":"x","name":"N","email":"a@b","age":1,"role":"boss"}`},
		{"zip pattern", `{"id":"x","name":"N","email":"a@b","age":1,"role":"dev","address":{"city":"B","zip":"1"}}`},
		{"address without city", `{"id":"x","name":"N","email":"a@b","age":1,"role":"dev","address":{}}`},
		{"too many flags", `{"id":"x","name":"N","email":"a@b","age":1,"role":"dev","flags":[true,true,true,true,true,true,true,true,true,true,true]}`},
		{"tag too long", `{"id":"x","name":"N","email":"a@b","age":1,"role":"dev","tags":["` + strings.Repeat("t", 33) + `"]}`},
		{"level 0", `{"id":"x","name":"N","email":"a@b","age":1,"role":"dev","level":0}`},
		{"negative quota", `{"id":"x","name":"N","email":"a@b","age":1,"role":"dev","quota":-1}`},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) { c.fails("lookup20", b.args, core.CodeInvalidArgument) })
	}
}
