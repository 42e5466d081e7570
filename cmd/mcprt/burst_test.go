package main

// A burst of mixed pipelined tools/call requests.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// ---------------------------------------------------------------------------
// Property: a burst of mixed pipelined calls.

func TestBurstOfMixedCalls(t *testing.T) {
	t.Parallel()
	const maxConc = 4
	c := newToolClient(t, testMode, fmt.Sprintf("MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=%d", maxConc))
	type call struct{ tool, args string }
	kinds := []call{
		{"noop", `{}`},
		{"echo", `{"message":"burst"}`},
		{"fail", `{"message":"burst failure"}`},
		{"no_such_tool", `{}`},
		{"sleep", `{"ms":2}`},
	}
	const n = 200
	var b strings.Builder
	sent := map[string]call{}
	var healthIDs []string
	for i := range n {
		k := kinds[(i*7+i/5)%len(kinds)]
		id := c.newID()
		sent[id] = k
		b.WriteString(toolsCallLine(id, k.tool, k.args, "") + "\n")
		if i%10 == 9 { // sample health in the middle of the burst
			hid := c.newID()
			healthIDs = append(healthIDs, hid)
			b.WriteString(toolsCallLine(hid, "health", `{}`, "") + "\n")
		}
	}
	c.p.SendRaw([]byte(b.String())) // all at once, without waiting
	counts := map[string]int{}
	wantResult := map[string]string{"noop": "map[]", "echo": "map[message:burst]", "sleep": "map[sleptMs:2]"}
	for id, k := range sent {
		res := c.result(id)
		if res["isError"] == false {
			if got := fmt.Sprint(c.successOf(id, res)); got != wantResult[k.tool] {
				t.Errorf("%s (id %s) returned %s, want %s", k.tool, id, got, wantResult[k.tool])
			}
			counts[k.tool+" ok"]++
			continue
		}
		raw, _ := json.Marshal(res)
		text := firstText(t, res, string(raw))
		e, _ := tcDecode(t, text).(map[string]any)
		code, _ := e["code"].(string)
		want := map[string][]string{
			"noop":         {"RESOURCE_EXHAUSTED"},
			"echo":         {"RESOURCE_EXHAUSTED"},
			"sleep":        {"RESOURCE_EXHAUSTED"},
			"fail":         {"INTERNAL", "RESOURCE_EXHAUSTED"},
			"no_such_tool": {"NOT_FOUND"},
		}[k.tool]
		if !slices.Contains(want, code) {
			t.Errorf("%s (id %s) failed with %s, want one of %v: %s", k.tool, id, code, want, text)
		}
		details, _ := e["details"].(map[string]any)
		if e["retryable"] != wantRetryable(code, details) || !uuidV4.MatchString(fmt.Sprint(e["runId"])) ||
			!uuidV4.MatchString(fmt.Sprint(e["correlationId"])) {
			t.Errorf("malformed tool error: %s", text)
		}
		counts[k.tool+" "+code]++
	}
	for _, hid := range healthIDs {
		v := c.success(hid).(map[string]any)
		if got := healthInt(t, v, "resources", "concurrentExecutions"); got > maxConc {
			t.Errorf("health saw %d concurrent executions, max %d", got, maxConc)
		}
	}
	t.Logf("burst outcomes: %v", counts)
	// Exactly one record per call (no timeouts here: one each).
	wantRecords := n + len(healthIDs)
	c.nthRecord(wantRecords, "record", func(map[string]any) bool { return true })
	c.close()
	recs := c.records()
	if len(recs) != wantRecords {
		t.Errorf("%d completion records, want %d", len(recs), wantRecords)
	}
	runs := map[string]bool{}
	for _, r := range recs {
		if runs[fmt.Sprint(r["runId"])] {
			t.Errorf("two records for run %v", r["runId"])
		}
		runs[fmt.Sprint(r["runId"])] = true
	}
}
