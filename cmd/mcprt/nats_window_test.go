package main

import (
	"testing"
	"time"

	"github.com/mcprt/mcprt/config"
)

// TestStateDedupWindow: the SHARED_STATE stream's duplicate window is
// the longest of nats.dedupWindowMs, tools.defaultTimeoutMs and
// agent.runTimeoutMs (the longest a state write is sent again).
func TestStateDedupWindow(t *testing.T) {
	for _, c := range []struct {
		name                   string
		dedupMs, toolMs, runMs int
		want                   time.Duration
	}{
		{"defaults: a run's deadline", 0, 0, 0, 5 * time.Minute},
		{"nats.dedupWindowMs longest", 600000, 30000, 300000, 10 * time.Minute},
		{"tools.defaultTimeoutMs longest", 120000, 900000, 300000, 15 * time.Minute},
		{"agent.runTimeoutMs longest", 120000, 30000, 3600000, time.Hour},
	} {
		t.Run(c.name, func(t *testing.T) {
			all := config.Default("test")
			if c.dedupMs > 0 {
				ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
				all.NATS.DedupWindow, all.Base.Tools.DefaultTimeout, all.Domain.Agent.RunTimeout = ms(c.dedupMs), ms(c.toolMs), ms(c.runMs)
			}
			if got := stateDedupWindow(all.NATS, all.Base, all.Domain); got != c.want {
				t.Fatalf("stateDedupWindow = %v, want %v", got, c.want)
			}
		})
	}
}
