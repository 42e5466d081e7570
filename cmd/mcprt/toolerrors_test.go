package main

// tools/call errors: the the contract table, size limits, slots, correlation ids, protocol errors.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// ---------------------------------------------------------------------------
// every row of the table, through tools/call.

func TestToolErrorTable(t *testing.T) {
	t.Parallel()
	const secret = "sk-live-MARKER-9f3a7c"
	c := newToolClient(t, testMode,
		"MCPRT_TOOLS_DEFAULT_TIMEOUT_MS=150",
		"MCPRT_TOOLS_MAX_PAYLOAD_BYTES=256",
		"MCPRT_TOOLS_MAX_RESULT_BYTES=4096",
		"MCPRT_TOOLS_ADMIN_REGISTRATION_ENABLED=true",
		"MCPRT_SECURITY_DYNAMIC_REGISTRATION_ENABLED=true") // adminPolicy deny_all by default
	rows := []struct {
		name, tool, args, code string
		check                  func(t *testing.T, e toolErr)
	}{
		{"schema type mismatch", "echo", `{ "message" : 5 }`, "INVALID_ARGUMENT", func(t *testing.T, e toolErr) {
			wantProblemAt(t, e, "/message")
		}},
		{"schema minimum and type", "sleep", `{"ms":-1,"ignoreCancel":"` + secret + `"}`, "INVALID_ARGUMENT", func(t *testing.T, e toolErr) {
			wantProblemAt(t, e, "/ms")
			wantProblemAt(t, e, "/ignoreCancel")
		}},
		{"schema required member", "echo", `{}`, "INVALID_ARGUMENT", func(t *testing.T, e toolErr) {
			wantProblemAt(t, e, "")
		}},
		{"schema additional property", "noop", `{"x":1}`, "INVALID_ARGUMENT", func(t *testing.T, e toolErr) {
			wantProblemAt(t, e, "/x")
		}},
		{"unknown tool", "no_such_tool", `{"k":"` + secret + `"}`, "NOT_FOUND", nil},
		{"deadline passed", "sleep", sleepArgs(5000, false), "TIMEOUT", nil},
		{"payload over the limit", "echo", `{"message":"` + secret + strings.Repeat("p", 300) + `"}`, "RESOURCE_EXHAUSTED", func(t *testing.T, e toolErr) {
			if fmt.Sprint(e.Details["limit"]) != "256" {
				t.Errorf("details %v: want limit 256", e.Details)
			}
		}},
		{"handler error", "fail", `{"message":"` + secret + `"}`, "INTERNAL", nil},
		{"handler panic", "panic", ``, "INTERNAL", nil},
		{"result not serializable", "unserializable", `{}`, "INTERNAL", func(t *testing.T, e toolErr) {
			if e.Details["reason"] != "result_not_serializable" {
				t.Errorf("details %v: want reason result_not_serializable", e.Details)
			}
		}},
		{"result too large", "big_result", `{"bytes":4097}`, "INTERNAL", func(t *testing.T, e toolErr) {
			if e.Details["reason"] != "result_too_large" || fmt.Sprint(e.Details["limit"]) != "4096" {
				t.Errorf("details %v: want reason result_too_large and limit 4096", e.Details)
			}
		}},
		{"admin policy deny_all", "admin_register_tool", `{"name":"x1","description":"d","toolType":"echo"}`, "UNAUTHORIZED", nil},
		{"unknown agent", "agent_send_message", `{"targetAgentId":"nobody","message":{"type":"t","payload":"` + secret + `"}}`, "NOT_FOUND", nil},
	}
	runIDs := map[string]bool{}
	generated := map[string]bool{}
	for i, row := range rows {
		// Once with a client correlation id, once without.
		for _, clientCID := range []string{fmt.Sprintf("client-cid-%d", i), ""} {
			var id string
			if clientCID != "" {
				id = c.sendCID(row.tool, row.args, clientCID)
			} else {
				id = c.send(row.tool, row.args)
			}
			e := c.toolError(id, row.code)
			if clientCID != "" && e.CorrelationID != clientCID {
				t.Errorf("%s: correlationId %q, want the client's %q", row.name, e.CorrelationID, clientCID)
			}
			if clientCID == "" {
				if !uuidV4.MatchString(e.CorrelationID) || generated[e.CorrelationID] {
					t.Errorf("%s: generated correlationId %q is not a fresh UUID v4", row.name, e.CorrelationID)
				}
				generated[e.CorrelationID] = true
			}
			if runIDs[e.RunID] || e.RunID == e.CorrelationID {
				t.Errorf("%s: runId %s is not distinct per call", row.name, e.RunID)
			}
			runIDs[e.RunID] = true
			if row.check != nil {
				row.check(t, e)
			}
			outcome := "tool_error"
			if row.code == "TIMEOUT" {
				outcome = "timeout"
			}
			rec := c.recordOf(e.RunID, outcome)
			c.checkRecordOf(rec, row.tool, e.CorrelationID, row.code, compactLen(t, row.args))
			if row.code == "TIMEOUT" {
				late := c.recordOf(e.RunID, "late_completed")
				if late["correlationId"] != e.CorrelationID || late["tool"] != "sleep" {
					t.Errorf("late_completed record %v does not match the call", late)
				}
			}
		}
	}
	c.ping()
	c.noSecret(secret)
	c.close()
}

// wantProblemAt checks that an INVALID_ARGUMENT error lists a problem at the
// instance path (a JSON Pointer, "" for the root) in details.errors.
func wantProblemAt(t *testing.T, e toolErr, path string) {
	t.Helper()
	problems, _ := e.Details["errors"].([]any)
	for _, p := range problems {
		pm, _ := p.(map[string]any)
		if msg, _ := pm["message"].(string); pm["path"] == path && msg != "" {
			return
		}
	}
	t.Errorf("details.errors %v has no problem at instance path %q with a message", e.Details["errors"], path)
}

// TestSizeLimitsAtTheBoundary: tools.maxPayloadBytes bounds the compact
// JSON length of the arguments, so a payload of exactly
// the limit passes and whitespace does not count; tools.maxResultBytes
// bounds the encoded CallToolResult (step 14), measured here on the wire.
func TestSizeLimitsAtTheBoundary(t *testing.T) {
	t.Parallel()
	const payloadLimit, resultLimit = 64, 600
	c := newToolClient(t, testMode, fmt.Sprintf("MCPRT_TOOLS_MAX_PAYLOAD_BYTES=%d", payloadLimit),
		fmt.Sprintf("MCPRT_TOOLS_MAX_RESULT_BYTES=%d", resultLimit))
	msg := func(n int) string { return strings.Repeat("m", n) }
	fit := payloadLimit - len(`{"message":""}`)
	c.ok("echo", `{"message":"`+msg(fit)+`"}`)
	c.ok("echo", "{ \"message\" :\t\""+msg(fit)+"\" }") // more bytes, same compact form
	e := c.fails("echo", `{"message":"`+msg(fit+1)+`"}`, "RESOURCE_EXHAUSTED")
	if fmt.Sprint(e.Details["limit"]) != strconv.Itoa(payloadLimit) {
		t.Errorf("details %v, want limit %d", e.Details, payloadLimit)
	}

	// The wire size of big_result's CallToolResult for n bytes is n plus
	// a constant overhead; measure it, then probe both sides of the limit.
	resultBytes := func(n int) (int, string) {
		id := c.send("big_result", fmt.Sprintf(`{"bytes":%d}`, n))
		line := c.await(id)
		var resp struct{ Result json.RawMessage }
		if err := json.Unmarshal([]byte(line), &resp); err != nil || resp.Result == nil {
			t.Fatalf("big_result %d: %s", n, clip(line))
		}
		c.stash[id] = line // let the caller read it as usual
		return len(resp.Result), id
	}
	size, id := resultBytes(100)
	c.successText(id)
	overhead := size - 100
	n := resultLimit - overhead
	if size, id = resultBytes(n); size != resultLimit {
		t.Fatalf("big_result %d encodes to %d bytes, want exactly %d", n, size, resultLimit)
	}
	c.successText(id)
	_, id = resultBytes(n + 1)
	e = c.toolError(id, "INTERNAL")
	if e.Details["reason"] != "result_too_large" || fmt.Sprint(e.Details["limit"]) != strconv.Itoa(resultLimit) {
		t.Errorf("details %v, want reason result_too_large and limit %d", e.Details, resultLimit)
	}
	c.close()
}

// TestNoSlotIsResourceExhausted: step 6 rejects at once when every slot is
// busy — and the pipeline's order shows: existence (5) comes before the slot
// (6), which comes before validation (7); payload size (4) before existence.
func TestNoSlotIsResourceExhausted(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode, "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=1", "MCPRT_TOOLS_MAX_PAYLOAD_BYTES=64")
	sleeper := c.send("sleep", sleepArgs(60000, false))
	c.waitHealth(1)
	c.fails("noop", `{}`, "RESOURCE_EXHAUSTED")
	c.fails("echo", `{"message":7}`, "RESOURCE_EXHAUSTED")                                // slot (6) before validation (7)
	c.fails("no_such_tool", `{}`, "NOT_FOUND")                                            // existence (5) before slot (6)
	c.fails("no_such_tool", `{"m":"`+strings.Repeat("z", 100)+`"}`, "RESOURCE_EXHAUSTED") // payload (4) before existence (5)
	c.cancel(sleeper)
	c.neverAnswered(sleeper)
	c.record("aborted for the sleeper", func(m map[string]any) bool { return m["tool"] == "sleep" && m["outcome"] == "aborted" })
	if res := c.ok("noop", `{}`); len(res) != 0 {
		t.Errorf("noop returned %v, want {}", res)
	}
	c.close()
}

// TestCorrelationIDRules: params._meta.correlationId is used when it is a
// non-empty string of at most 128 bytes; otherwise one is generated. Unknown _meta keys are ignored.
func TestCorrelationIDRules(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode)
	euro := strings.Repeat("€", 42) // 126 bytes, 42 characters
	cases := []struct {
		meta string
		want string // "" means generated
	}{
		{`{"correlationId":"` + strings.Repeat("a", 128) + `"}`, strings.Repeat("a", 128)},
		{`{"correlationId":"` + strings.Repeat("a", 129) + `"}`, ""},
		{`{"correlationId":"` + euro + `ab"}`, euro + "ab"}, // 128 bytes
		{`{"correlationId":"` + euro + `€"}`, ""},           // 129 bytes, 43 characters
		{`{"correlationId":""}`, ""},
		{`{"correlationId":5}`, ""},
		{`{"correlationId":null}`, ""},
		{`{}`, ""},
		{`{"progressToken":"p1","io.example/extra":{"x":1},"correlationId":"with-extras"}`, "with-extras"},
	}
	for _, tc := range cases {
		for _, tool := range []string{"noop", "no_such_tool"} {
			id := c.newID()
			c.p.Send(toolsCallLine(id, tool, `{}`, tc.meta))
			var cid, runID string
			if tool == "noop" {
				c.success(id)
				rec := c.record("for the noop with _meta "+tc.meta, func(m map[string]any) bool {
					return m["tool"] == "noop" && m["outcome"] == "success" && !c.noted(m)
				})
				cid, runID = rec["correlationId"].(string), rec["runId"].(string)
			} else {
				e := c.toolError(id, "NOT_FOUND")
				cid, runID = e.CorrelationID, e.RunID
				rec := c.recordOf(runID, "tool_error")
				if rec["correlationId"] != cid {
					t.Errorf("record correlationId %v, response %s", rec["correlationId"], cid)
				}
			}
			c.note(runID)
			switch {
			case tc.want != "" && cid != tc.want:
				t.Errorf("_meta %s: correlationId %q, want the client's", clip(tc.meta), cid)
			case tc.want == "" && !uuidV4.MatchString(cid):
				t.Errorf("_meta %s: correlationId %q, want a generated UUID v4", clip(tc.meta), cid)
			}
		}
	}
	c.close()
}

// note and noted remember runIds a test has already looked at, so that it
// can wait for the next record of a kind.
func (c *toolClient) note(runID string) {
	if c.looked == nil {
		c.looked = map[string]bool{}
	}
	c.looked[runID] = true
}

func (c *toolClient) noted(m map[string]any) bool { return c.looked[fmt.Sprint(m["runId"])] }

// ---------------------------------------------------------------------------
// protocol errors and their records.

func TestToolsCallProtocolErrors(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode)
	cases := []struct {
		name   string
		params string
		tool   string // the record's tool
		cid    string // the client's correlation id, if the params carry one
	}{
		{"name missing", `{"arguments":{}}`, "", ""},
		{"name a number", `{"name":5}`, "", ""},
		{"name null", `{"name":null}`, "", ""},
		{"name an object", `{"name":{"n":"echo"}}`, "", ""},
		{"params an array", `["echo"]`, "", ""},
		{"arguments an array", `{"name":"echo","arguments":["hi"]}`, "echo", ""},
		{"arguments a string", `{"name":"echo","arguments":"{}","_meta":{"correlationId":"proto-cid-1"}}`, "echo", "proto-cid-1"},
		{"_meta a string", `{"name":"noop","_meta":"x"}`, "noop", ""},
		{"_meta an array", `{"name":"noop","arguments":{},"_meta":[{"correlationId":"c"}]}`, "noop", ""},
	}
	for i, tc := range cases {
		id := c.newID()
		c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + tc.params + `}`)
		e := c.protoError(id, -32602)
		wantCID := tc.cid
		if wantCID == "" {
			wantCID = c.connCID()
		}
		if got := errData(e)["correlationId"]; got != wantCID {
			t.Errorf("%s: error.data.correlationId %v, want %s", tc.name, got, wantCID)
		}
		rec := c.nthRecord(i+1, "record", func(map[string]any) bool { return true })
		if rec["outcome"] != "protocol_error" || rec["tool"] != tc.tool || rec["correlationId"] != wantCID {
			t.Errorf("%s: record %v, want protocol_error for tool %q with correlationId %s", tc.name, rec, tc.tool, wantCID)
		}
	}
	// An empty name is a string: a tool error, not a protocol error.
	c.fails("", `{}`, "NOT_FOUND")
	c.ping()
	c.close()
	if n := len(c.records()); n != len(cases)+1 {
		t.Errorf("%d completion records, want one per call (%d)", n, len(cases))
	}
}

func TestToolsCallBeforeRunning(t *testing.T) {
	t.Parallel()
	p := start(t, testMode)
	c := &toolClient{t: t, p: p, stash: map[string]string{}, seen: map[string]int{}}
	// STARTING.
	c.p.Send(toolsCallLine("1", "noop", `{}`, `{"correlationId":"early"}`))
	e := c.protoError("1", -32002)
	d := errData(e)
	if d["code"] != "NOT_INITIALIZED" || d["correlationId"] != c.connCID() {
		t.Errorf("state error data %v, want NOT_INITIALIZED with the connection's correlation id", d)
	}
	rec := c.record("protocol_error in STARTING", func(m map[string]any) bool { return m["outcome"] == "protocol_error" })
	if rec["tool"] != "noop" || rec["correlationId"] != c.connCID() {
		t.Errorf("record %v, want tool noop and the connection's correlation id", rec)
	}
	// INITIALIZING.
	initialize(t, p, "2", latestRevision) // read directly, not through c
	c.p.Send(toolsCallLine("3", "echo", `{"message":"x"}`, ""))
	c.protoError("3", -32002)
	rec = c.nthRecord(2, "record", func(map[string]any) bool { return true })
	if rec["outcome"] != "protocol_error" || rec["tool"] != "echo" || rec["correlationId"] != c.connCID() {
		t.Errorf("record %v, want a protocol_error for echo with the connection's correlation id", rec)
	}
	// RUNNING: now it works.
	c.p.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.rev = latestRevision
	c.next = 3
	c.ok("noop", `{}`)
	c.close()
	if n := len(c.records()); n != 3 {
		t.Errorf("%d completion records, want 3", n)
	}
}
