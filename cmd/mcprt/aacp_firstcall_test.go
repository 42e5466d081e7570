package main

// A model that calls several coordination tools in parallel as its very
// first move: the session's identity is registered once, and every call
// succeeds (none is refused as if another holder had claimed the agent).

import (
	"fmt"
	"path/filepath"
	"testing"
)

func TestAACPConcurrentFirstCallsRegisterOnce(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "shared")
	first := []struct{ name, args string }{
		{"aacp_heartbeat", `{"status":"starting"}`},
		{"aacp_peek", `{}`},
		{"aacp_receive", `{"waitMs":0}`},
		{"aacp_view", `{"view":"unread"}`},
		{"aacp_peek", `{}`},
		{"aacp_heartbeat", `{"status":"still starting"}`},
		{"aacp_register_agent", `{"type":"Implementation"}`},
		{"aacp_receive", `{"waitMs":0}`},
	}
	// Several fresh processes: the window in which the calls overlap is
	// small, so one process alone could pass by luck.
	for round := range 4 {
		agent := fmt.Sprintf("first_%d", round)
		a := startAgent(t, dir, agent, "Implementation")
		ids := make([]string, len(first))
		for i, c := range first {
			ids[i] = a.send(c.name, c.args) // all sent before any answer is read
		}
		for i, id := range ids {
			if _, e := a.await(t, id); e != nil {
				t.Fatalf("round %d: concurrent first call %s %s as %s: %s: %s", round, first[i].name, first[i].args, agent, e.Code, e.Message)
			}
		}
		// A second identity registered twice at once by the same session.
		other := fmt.Sprintf("second_%d", round)
		reg := `{"agentId":"` + other + `","type":"AdHoc"}`
		r1, r2 := a.send("aacp_register_agent", reg), a.send("aacp_register_agent", reg)
		for _, id := range []string{r1, r2} {
			v, e := a.await(t, id)
			if e != nil {
				t.Fatalf("round %d: concurrent aacp_register_agent %s: %s: %s", round, reg, e.Code, e.Message)
			}
			if astr(v, "agentId") != other {
				t.Fatalf("round %d: aacp_register_agent %s answered %v, want agentId %s", round, reg, v, other)
			}
		}
		agents := a.ok(t, "aacp_agents", `{"agentId":"`+agent+`"}`)["agents"].([]any)
		if len(agents) != 1 || astr(agents[0], "agentId") != agent || astr(agents[0], "presence") != "online" {
			t.Fatalf("round %d: aacp_agents %s = %v, want it once, online", round, agent, agents)
		}
		finishAgent(t, a)
	}
}
