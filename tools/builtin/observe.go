package builtin

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// pingResult is server_ping's result.
type pingResult struct {
	Version  string `json:"version"`
	Mode     string `json:"mode"`
	UptimeMs int64  `json:"uptime_ms"`
}

// healthReport is the result of the health tool, also returned by dynamic
// tools of toolType health.
type healthReport struct {
	// Server identifies the server: server.name and server.version.
	Server healthServer `json:"server"`
	// Config is a summary of the limits in force.
	Config healthConfig `json:"config"`
	// Resources are the live figures the status is judged on.
	Resources healthResources `json:"resources"`
	// Status is healthy, degraded or unhealthy, as core.Health judges it.
	Status core.HealthStatus `json:"status"`
}

// messagingHealthReport is the health result when Options.MessagingHealth
// is set: the report plus the messaging backend's.
type messagingHealthReport struct {
	healthReport
	Messaging any `json:"messaging"`
}

// healthServer is the server part of a healthReport.
type healthServer struct {
	Name    string `json:"name"`    // server.name
	Version string `json:"version"` // server.version
}

// healthConfig is the config part of a healthReport.
type healthConfig struct {
	ToolTimeoutMs           int `json:"toolTimeoutMs"`           // tools.defaultTimeoutMs
	MaxConcurrentExecutions int `json:"maxConcurrentExecutions"` // resources.maxConcurrentExecutions
	MaxPayloadBytes         int `json:"maxPayloadBytes"`         // tools.maxPayloadBytes
	MaxStateBytes           int `json:"maxStateBytes"`           // tools.maxStateBytes
}

// healthResources is the resources part of a healthReport.
type healthResources struct {
	// MemoryUsageBytes is the live heap after the last GC.
	MemoryUsageBytes uint64 `json:"memoryUsageBytes"`
	// SchedLatencyP99Ms is the scheduler latency p99 over the last ~10 s,
	// in milliseconds with microsecond precision (a fraction: 0.032 is
	// 32 µs). It stands in for Node's event loop delay.
	SchedLatencyP99Ms float64 `json:"schedLatencyP99Ms"`
	// ConcurrentExecutions is the number of concurrency slots in use;
	// observer tools (health, server_ping) take none.
	ConcurrentExecutions int `json:"concurrentExecutions"`
	// MaxConcurrentExecutions is the number of slots.
	MaxConcurrentExecutions int `json:"maxConcurrentExecutions"`
	// DroppedLogEntries counts log entries dropped because stderr was not
	// being read (the server never blocks on its logs).
	DroppedLogEntries uint64 `json:"droppedLogEntries"`
}

// observerTools returns server_ping and health: observers that take no
// concurrency slot, so they answer while the server is saturated, and
// essential tools, so mode MINIMAL keeps them. Their output schemas are
// written by hand: the mode and status enums and the bounds of the figures
// are more than a Go type says.
func observerTools(srv *mcp.Server, opts Options) []mcp.ToolDef {
	version := opts.Version
	return []mcp.ToolDef{
		mcp.Typed(mcp.Tool{
			Name:         "server_ping",
			Title:        "Server ping",
			Description:  "Check that the server answers: its version, mode and uptime. Answers even when the server is busy.",
			OutputSchema: serverPingOutput,
			Annotations:  readOnly("Server ping"),
			Observer:     true,
			Essential:    true,
		}, func(context.Context, *mcp.CallToolRequest, struct{}) (pingResult, error) {
			v := version
			if v == "" {
				v = srv.Info().Version
			}
			return pingResult{Version: v, Mode: srv.Mode(), UptimeMs: srv.Stats().Uptime.Milliseconds()}, nil
		}),
		health(srv, mcp.Tool{
			Name:  "health",
			Title: "Server health",
			Description: "Server health: status healthy, degraded (over 80% of the slots busy or scheduler p99 " +
				"over 100 ms) or unhealthy (all slots busy, p99 over 500 ms, or 3+ calls in a row refused " +
				"RESOURCE_EXHAUSTED), with its limits and resource figures. Answers even when busy.",
			OutputSchema:     healthSchema(opts.MessagingHealth != nil),
			HideOutputSchema: true,
			Annotations:      readOnly("Server health"),
			Observer:         true,
			Essential:        true,
		}, opts.MessagingHealth, opts.MaxStateBytes),
	}
}

// healthSchema is healthOutput, with the messaging object when the
// health result carries one.
func healthSchema(messaging bool) json.RawMessage {
	if !messaging {
		return healthOutput
	}
	return json.RawMessage(strings.Replace(string(healthOutput), `"status": {"type": "string"`,
		`"messaging": {"type": "object", "description": "The messaging backend: backend (files or nats); files: quarantinedLines, lastQuarantined; nats: connected, reconnects, cluster, leader, replicas, lag."}, "status": {"type": "string"`, 1))
}

// health is the health tool: with f, its result carries f's report as
// messaging (and its schema says so).
func health(srv *mcp.Server, t mcp.Tool, f func() any, maxState int) mcp.ToolDef {
	if f == nil {
		return mcp.Typed(t, healthTool(srv, maxState))
	}
	h := healthTool(srv, maxState)
	return mcp.Typed(t, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (messagingHealthReport, error) {
		r, err := h(ctx, req, in)
		return messagingHealthReport{healthReport: r, Messaging: f()}, err
	})
}

// healthTool returns the handler of the health tool and of dynamic tools
// of toolType health.
func healthTool(srv *mcp.Server, maxState int) func(context.Context, *mcp.CallToolRequest, struct{}) (healthReport, error) {
	return func(context.Context, *mcp.CallToolRequest, struct{}) (healthReport, error) {
		return healthOf(srv, maxState), nil
	}
}

// healthOf returns srv's health report, as the health tool answers it.
func healthOf(srv *mcp.Server, maxStateBytes int) healthReport {
	st, limits, info := srv.Stats(), srv.Limits(), srv.Info()
	rt := srv.Telemetry().Snapshot()
	return healthReport{
		Server: healthServer{Name: info.Name, Version: info.Version},
		Config: healthConfig{
			ToolTimeoutMs:           int(limits.ToolTimeout.Milliseconds()),
			MaxConcurrentExecutions: limits.MaxConcurrentExecutions,
			MaxPayloadBytes:         limits.MaxPayloadBytes,
			MaxStateBytes:           maxStateBytes,
		},
		Resources: healthResources{
			MemoryUsageBytes:        rt.HeapLiveBytes,
			SchedLatencyP99Ms:       millis(rt.SchedLatencyP99),
			ConcurrentExecutions:    st.ConcurrentExecutions,
			MaxConcurrentExecutions: st.MaxConcurrentExecutions,
			DroppedLogEntries:       st.DroppedLogEntries,
		},
		Status: core.Health(core.HealthInputs{
			ConcurrentExecutions:    st.ConcurrentExecutions,
			MaxConcurrentExecutions: st.MaxConcurrentExecutions,
			SchedLatencyP99:         rt.SchedLatencyP99,
			ConsecutiveExhausted:    st.ConsecutiveExhausted,
		}),
	}
}

// millis converts d to milliseconds, rounded to the microsecond.
func millis(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}
