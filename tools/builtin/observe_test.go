package builtin

import (
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

func TestServerPing(t *testing.T) {
	for _, mode := range []string{mcp.ModeFull, mcp.ModeReadOnly, mcp.ModeMinimal, mcp.ModeTest} {
		t.Run(mode, func(t *testing.T) {
			c := newClient(t, setup{mode: mode, version: "1.2.3-build"})
			res := c.ok("server_ping", `{}`)
			sameKeys(t, "server_ping", res, "version", "mode", "uptime_ms")
			if res["version"] != "1.2.3-build" || res["mode"] != mode {
				t.Errorf("server_ping = %v, want version 1.2.3-build, mode %s", res, mode)
			}
			if up, ok := res["uptime_ms"].(float64); !ok || up < 0 || up != float64(int64(up)) {
				t.Errorf("uptime_ms = %v, want a non-negative integer", res["uptime_ms"])
			}
		})
	}
	t.Run("configured version when Options.Version is empty", func(t *testing.T) {
		c := newClient(t, setup{})
		if v := c.ok("server_ping", "")["version"]; v != "9.9.9-config" {
			t.Errorf("version = %v, want the configured 9.9.9-config", v)
		}
	})
	t.Run("arguments refused", func(t *testing.T) {
		c := newClient(t, setup{})
		c.fails("server_ping", `{"x":1}`, core.CodeInvalidArgument)
	})
}

func TestHealthAtRest(t *testing.T) {
	c := newClient(t, setup{tweak: func(cfg *config.Base) {
		cfg.Server.Name = "health-test"
		cfg.Tools.DefaultTimeout = 1234 * time.Millisecond
		cfg.Tools.MaxPayloadBytes = 5678
		cfg.Tools.MaxStateBytes = 4321
		cfg.Resources.MaxConcurrentExecutions = 7
	}})
	res := c.ok("health", `{}`)
	sameKeys(t, "health", res, "server", "config", "resources", "status")
	server := res["server"].(map[string]any)
	sameKeys(t, "health.server", server, "name", "version")
	if server["name"] != "health-test" || server["version"] != "9.9.9-config" {
		t.Errorf("server = %v", server)
	}
	cfg := res["config"].(map[string]any)
	sameKeys(t, "health.config", cfg, "toolTimeoutMs", "maxConcurrentExecutions", "maxPayloadBytes", "maxStateBytes")
	want := map[string]float64{"toolTimeoutMs": 1234, "maxConcurrentExecutions": 7, "maxPayloadBytes": 5678, "maxStateBytes": 4321}
	for k, v := range want {
		if cfg[k] != v {
			t.Errorf("config.%s = %v, want %v", k, cfg[k], v)
		}
	}
	r := res["resources"].(map[string]any)
	sameKeys(t, "health.resources", r, "memoryUsageBytes", "schedLatencyP99Ms", "concurrentExecutions", "maxConcurrentExecutions", "droppedLogEntries")
	if r["concurrentExecutions"] != 0.0 || r["maxConcurrentExecutions"] != 7.0 || r["droppedLogEntries"] != 0.0 {
		t.Errorf("resources = %v, want 0 of 7 slots in use (health is an observer)", r)
	}
	if m, _ := r["memoryUsageBytes"].(float64); m <= 0 {
		t.Errorf("memoryUsageBytes = %v, want > 0", r["memoryUsageBytes"])
	}
	if l, ok := r["schedLatencyP99Ms"].(float64); !ok || l < 0 {
		t.Errorf("schedLatencyP99Ms = %v, want a number >= 0", r["schedLatencyP99Ms"])
	}
	if res["status"] != "healthy" {
		t.Errorf("status = %v, want healthy at rest", res["status"])
	}
}

// server_ping and health answer while every slot is busy; health reports
// the saturation.
func TestObserversAnswerWhenSaturated(t *testing.T) {
	c := newClient(t, setup{mode: mcp.ModeTest, tweak: func(cfg *config.Base) {
		cfg.Resources.MaxConcurrentExecutions = 1
	}})
	id, sleeping := c.callAsync("sleep", `{"ms":60000}`)
	eventually(t, "the sleep call holds the only slot", func() bool {
		return c.srv.Stats().ConcurrentExecutions == 1
	})
	c.fails("noop", `{}`, core.CodeResourceExhausted)

	res := c.ok("health", `{}`)
	if res["status"] != "unhealthy" {
		t.Errorf("status = %v, want unhealthy with every slot busy", res["status"])
	}
	r := res["resources"].(map[string]any)
	if r["concurrentExecutions"] != 1.0 || r["maxConcurrentExecutions"] != 1.0 {
		t.Errorf("resources = %v, want 1 of 1 slots in use", r)
	}
	if ping := c.ok("server_ping", `{}`); ping["mode"] != mcp.ModeTest {
		t.Errorf("server_ping = %v", ping)
	}
	// Observers neither raise nor reset the RESOURCE_EXHAUSTED counter.
	if n := c.srv.Stats().ConsecutiveExhausted; n != 1 {
		t.Errorf("ConsecutiveExhausted = %d after one rejection and observer calls, want 1", n)
	}

	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"` + id + `"}}`)
	eventually(t, "the cancelled sleep releases its slot", func() bool {
		return c.srv.Stats().ConcurrentExecutions == 0
	})
	select {
	case m := <-sleeping:
		t.Errorf("a cancelled request got a response: %v", m)
	case <-time.After(50 * time.Millisecond):
	}
	c.ok("noop", `{}`) // resets the counter
	if st := c.ok("health", `{}`)["status"]; st != "healthy" {
		t.Errorf("status = %v after the slot was released, want healthy", st)
	}
}

// Three consecutive RESOURCE_EXHAUSTED rejections make the server
// unhealthy even once the slots are free.
func TestHealthAfterExhaustion(t *testing.T) {
	c := newClient(t, setup{mode: mcp.ModeTest, tweak: func(cfg *config.Base) {
		cfg.Tools.MaxPayloadBytes = 64
	}})
	big := `{"message":"` + strings.Repeat("x", 100) + `"}`
	for range 3 { // over the limit: the same arguments would fail again
		c.failsRetryable("echo", big, core.CodeResourceExhausted, false)
	}
	if st := c.ok("health", `{}`)["status"]; st != "unhealthy" {
		t.Errorf("status = %v after 3 rejections, want unhealthy", st)
	}
	c.ok("echo", `{"message":"hi"}`)
	h := c.ok("health", `{}`)
	// A completed call clears the rejections; the scheduler latency of a
	// loaded test machine may still degrade the status, as it should.
	want := "healthy"
	if res, _ := h["resources"].(map[string]any); res != nil {
		switch p99, _ := res["schedLatencyP99Ms"].(float64); {
		case p99 > 500:
			want = "unhealthy"
		case p99 > 100:
			want = "degraded"
		}
	}
	if st := h["status"]; st != want {
		t.Errorf("status = %v after a completed call (resources %v), want %s", st, h["resources"], want)
	}
}
