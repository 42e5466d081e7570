package main

// toolClient's checks of completion records and of secrets on stderr.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// records returns the completion records logged so far.
func (c *toolClient) records() []map[string]any {
	var out []map[string]any
	for _, m := range c.p.StderrLines() {
		if m["msg"] == "tool call completed" {
			out = append(out, m)
		}
	}
	return out
}

// record waits for a completion record for which match is true and checks
// its shape.
func (c *toolClient) record(what string, match func(map[string]any) bool) map[string]any {
	c.t.Helper()
	m := c.p.ExpectLog(c.t, what, func(m map[string]any) bool {
		return m["msg"] == "tool call completed" && match(m)
	})
	c.checkRecord(m)
	return m
}

// recordOf waits for the completion record of runID with outcome.
func (c *toolClient) recordOf(runID, outcome string) map[string]any {
	c.t.Helper()
	return c.record("for runId "+runID+" with outcome "+outcome, func(m map[string]any) bool {
		return m["runId"] == runID && m["outcome"] == outcome
	})
}

// nthRecord waits for the n-th completion record (counting from 1, in log
// order) for which match is true. The response to a call can be read
// before its record, which went to another pipe: tests wait for records.
func (c *toolClient) nthRecord(n int, what string, match func(map[string]any) bool) map[string]any {
	c.t.Helper()
	k := 0
	return c.record(fmt.Sprintf("#%d %s", n, what), func(m map[string]any) bool {
		if match(m) {
			k++
		}
		return k == n
	})
}

// recordLevels is the level of each outcome.
var recordLevels = map[string]string{
	"success":                "INFO",
	"tool_error":             "INFO",
	"timeout":                "WARN",
	"late_completed":         "WARN",
	"aborted":                "WARN",
	"disconnected_completed": "WARN",
	"protocol_error":         "INFO",
}

// checkRecord checks a completion record's members: exactly
// the listed fields (never arguments or results), the level of its
// outcome, the connection's id, a runId unless it is a protocol_error, an
// errorCode for tool errors and timeouts, and non-negative integer
// durationMs and payloadBytes.
func (c *toolClient) checkRecord(m map[string]any) {
	c.t.Helper()
	line, _ := json.Marshal(m)
	allowed := map[string]bool{"time": true, "level": true, "msg": true, "connectionCorrelationId": true,
		"correlationId": true, "runId": true, "tool": true, "durationMs": true, "outcome": true,
		"errorCode": true, "payloadBytes": true}
	for k := range m {
		if !allowed[k] {
			c.t.Errorf("completion record has member %q ( lists its fields): %s", k, line)
		}
	}
	outcome, _ := m["outcome"].(string)
	level, known := recordLevels[outcome]
	if !known {
		c.t.Fatalf("completion record with unknown outcome %q: %s", outcome, line)
	}
	if m["level"] != level {
		c.t.Errorf("completion record level %v, want %s for outcome %s: %s", m["level"], level, outcome, line)
	}
	if m["connectionCorrelationId"] != c.connCID() {
		c.t.Errorf("completion record connectionCorrelationId %v, want %s: %s", m["connectionCorrelationId"], c.connCID(), line)
	}
	if cid, _ := m["correlationId"].(string); cid == "" {
		c.t.Errorf("completion record without correlationId: %s", line)
	}
	if _, isString := m["tool"].(string); !isString {
		c.t.Errorf("completion record without a string tool: %s", line)
	}
	runID, hasRunID := m["runId"]
	if outcome == "protocol_error" {
		if hasRunID {
			c.t.Errorf("protocol_error record has a runId: %s", line)
		}
	} else if s, _ := runID.(string); !uuidV4.MatchString(s) {
		c.t.Errorf("completion record runId %v is not a UUID v4: %s", runID, line)
	}
	code, hasCode := m["errorCode"]
	switch outcome {
	case "tool_error":
		if s, _ := code.(string); s == "" {
			c.t.Errorf("tool_error record without errorCode: %s", line)
		}
	case "timeout":
		if code != "TIMEOUT" {
			c.t.Errorf("timeout record errorCode %v, want TIMEOUT: %s", code, line)
		}
	case "success", "protocol_error":
		if hasCode {
			c.t.Errorf("%s record with errorCode %v: %s", outcome, code, line)
		}
	}
	for _, k := range []string{"durationMs", "payloadBytes"} {
		n, isNumber := m[k].(json.Number)
		if v, err := strconv.ParseInt(string(n), 10, 64); !isNumber || err != nil || v < 0 {
			c.t.Errorf("completion record %s %v is not a non-negative integer: %s", k, m[k], line)
		}
	}
}

// checkRecordOf checks a record's tool, correlationId, errorCode ("" for
// none) and payloadBytes.
func (c *toolClient) checkRecordOf(m map[string]any, tool, cid, code string, payload int) {
	c.t.Helper()
	line, _ := json.Marshal(m)
	if m["tool"] != tool {
		c.t.Errorf("record tool %v, want %s: %s", m["tool"], tool, line)
	}
	if m["correlationId"] != cid {
		c.t.Errorf("record correlationId %v, want %s: %s", m["correlationId"], cid, line)
	}
	if got, _ := m["errorCode"].(string); got != code {
		c.t.Errorf("record errorCode %q, want %q: %s", got, code, line)
	}
	if got := fmt.Sprint(m["payloadBytes"]); got != strconv.Itoa(payload) {
		c.t.Errorf("record payloadBytes %s, want %d: %s", got, payload, line)
	}
}

// noSecret fails the test if marker appears anywhere on stderr.
func (c *toolClient) noSecret(marker string) {
	c.t.Helper()
	if strings.Contains(c.p.Stderr(), marker) {
		c.t.Errorf("the marker %q from the arguments or results reached stderr", marker)
	}
}
