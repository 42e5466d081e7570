package main

// The built-in observers server_ping and health, with the health helpers.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// health calls the health tool.
func (c *toolClient) health() map[string]any {
	c.t.Helper()
	return c.ok("health", "{}")
}

// healthInt reads an integer at path in a health report.
func healthInt(t *testing.T, h map[string]any, path ...string) int {
	t.Helper()
	var v any = h
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	n, err := strconv.Atoi(fmt.Sprint(v))
	if err != nil {
		t.Fatalf("health %v is not an integer: %v", path, v)
	}
	return n
}

// statusRank orders the health statuses.
var statusRank = map[string]int{"healthy": 0, "degraded": 1, "unhealthy": 2}

// checkStatus checks that a health report's status is want — or worse, only
// as far as the scheduler latency it reports justifies. A loaded test machine can slow
// the scheduler; the status must still be exactly what the figures say.
func checkStatus(t *testing.T, h map[string]any, want string) {
	t.Helper()
	res, _ := h["resources"].(map[string]any)
	p99, err := strconv.ParseFloat(fmt.Sprint(res["schedLatencyP99Ms"]), 64)
	if err != nil {
		t.Fatalf("health schedLatencyP99Ms %v is not a number", res["schedLatencyP99Ms"])
	}
	expect := want
	switch {
	case p99 > 500:
		expect = "unhealthy"
	case p99 > 100 && statusRank[want] < statusRank["degraded"]:
		expect = "degraded"
	}
	if h["status"] != expect {
		raw, _ := json.Marshal(h)
		t.Fatalf("health status %v, want %s: %s", h["status"], expect, raw)
	}
}

// waitHealth polls health until concurrentExecutions is n and returns that
// report. It waits on answers, never on a clock, bounded by
// wiretest.ExpectTimeout.
func (c *toolClient) waitHealth(n int) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(wiretest.ExpectTimeout)
	for {
		h := c.health()
		if got := healthInt(c.t, h, "resources", "concurrentExecutions"); got == n {
			return h
		} else if time.Now().After(deadline) {
			c.t.Fatalf("health reports %d concurrent executions after %v, want %d", got, wiretest.ExpectTimeout, n)
		}
	}
}

// ---------------------------------------------------------------------------
// server_ping and health.

func TestServerPing(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode)
	r := c.ok("server_ping", `{}`)
	if len(r) != 3 || r["version"] != version || r["mode"] != "TEST" {
		t.Fatalf("server_ping %v, want {version:%s, mode:TEST, uptime_ms}", r, version)
	}
	if ms, err := strconv.ParseInt(fmt.Sprint(r["uptime_ms"]), 10, 64); err != nil || ms < 0 {
		t.Fatalf("uptime_ms %v is not a non-negative integer", r["uptime_ms"])
	}
	c.fails("server_ping", `{"x":1}`, "INVALID_ARGUMENT")
	c.close()
}

func TestHealthAtRest(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode, "MCPRT_SERVER_NAME=hn", "MCPRT_SERVER_VERSION=1.2.3",
		"MCPRT_TOOLS_DEFAULT_TIMEOUT_MS=1234", "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=7",
		"MCPRT_TOOLS_MAX_PAYLOAD_BYTES=4321", "MCPRT_TOOLS_MAX_STATE_BYTES=999")
	h := c.health()
	raw, _ := json.Marshal(h)
	want := `{"server":{"name":"hn","version":"1.2.3"},` +
		`"config":{"toolTimeoutMs":1234,"maxConcurrentExecutions":7,"maxPayloadBytes":4321,"maxStateBytes":999},` +
		`"resources":{"memoryUsageBytes":"*","schedLatencyP99Ms":"*","concurrentExecutions":0,"maxConcurrentExecutions":7,"droppedLogEntries":0},` +
		`"messaging":{"backend":"files","quarantinedLines":0},` +
		`"status":"*"}`
	if err := wiretest.Match(want, string(raw)); err != nil {
		t.Fatalf("health: %v\n%s", err, raw)
	}
	if healthInt(t, h, "resources", "memoryUsageBytes") <= 0 {
		t.Errorf("memoryUsageBytes %v, want > 0", h["resources"])
	}
	checkStatus(t, h, "healthy")
	c.close()
}

func TestHealthDegradedAndUnhealthyBySaturation(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode, "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=10")
	var sleepers []string
	for range 8 {
		sleepers = append(sleepers, c.send("sleep", sleepArgs(60000, false)))
	}
	checkStatus(t, c.waitHealth(8), "healthy") // 8 of 10 is not over 80%
	sleepers = append(sleepers, c.send("sleep", sleepArgs(60000, false)))
	checkStatus(t, c.waitHealth(9), "degraded")
	c.ok("server_ping", `{}`) // observers take no slot...
	checkStatus(t, c.waitHealth(9), "degraded")
	sleepers = append(sleepers, c.send("sleep", sleepArgs(60000, false)))
	checkStatus(t, c.waitHealth(10), "unhealthy")
	c.ok("server_ping", `{}`) // ...and answer while the server is saturated
	for _, id := range sleepers {
		c.cancel(id)
		c.neverAnswered(id)
	}
	checkStatus(t, c.waitHealth(0), "healthy")
	c.ok("noop", `{}`)
	c.close()
}

func TestHealthUnhealthyAfterThreeRejections(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode, "MCPRT_TOOLS_MAX_PAYLOAD_BYTES=32")
	big := `{"message":"` + strings.Repeat("b", 64) + `"}`
	checkStatus(t, c.health(), "healthy")
	c.fails("echo", big, "RESOURCE_EXHAUSTED")
	c.fails("echo", big, "RESOURCE_EXHAUSTED")
	checkStatus(t, c.health(), "healthy") // 2 < 3
	c.fails("echo", big, "RESOURCE_EXHAUSTED")
	checkStatus(t, c.health(), "unhealthy")
	// Observers neither raise nor reset the counter; protocol errors do
	// not touch it.
	checkStatus(t, c.health(), "unhealthy")
	c.ok("server_ping", `{}`)
	id := c.newID()
	c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":5}}`)
	c.protoError(id, -32602)
	checkStatus(t, c.health(), "unhealthy")
	// A completed call resets it.
	c.ok("noop", `{}`)
	checkStatus(t, c.health(), "healthy")
	// So does any other completed tools/call, a tool error included.
	for range 3 {
		c.fails("noop", big, "RESOURCE_EXHAUSTED")
	}
	checkStatus(t, c.health(), "unhealthy")
	c.fails("no_such_tool", `{}`, "NOT_FOUND")
	checkStatus(t, c.health(), "healthy")
	c.close()
}
