package main

// Black-box tests of tools/call through the real binary: the error table of
// SPEC §6, the ordered pipeline and its completion records (§7.3, §7.6),
// deadlines and cancellation (§7.4), the built-in observers and health
// (§8, §8.1), modes and tools/list (§7.2, §9), and a burst of mixed calls.
// The TEST fixtures (§8.3) do the work. Admin tools are in admin_test.go,
// agents in agents_test.go; the helpers of all three live here.
//
// Timing: no test sleeps to let something happen. Tests wait for stdout
// lines and stderr records (bounded by wiretest's generous timeouts); the
// only clock comparisons are lower bounds that real time guarantees, or
// loose upper bounds several times larger than what they bound.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// ---------------------------------------------------------------------------
// The client helper.

// toolClient drives one mcprt process in RUNNING. Responses may arrive in
// any order (tools/call handlers run concurrently), so await reads lines
// until the response with the wanted id has come, keeping the others for
// later. Every response read is counted by id: a second response for an id
// fails the test at once.
type toolClient struct {
	t     *testing.T
	p     *wiretest.Proc
	rev   string
	cid   string            // connection correlation id, read lazily
	next  int               // last numeric id used
	stash map[string]string // responses read but not yet awaited, by raw id
	seen  map[string]int    // raw id -> responses read
	never []string          // raw ids that must never be answered
	notes []string          // notifications read (raw lines), in order

	looked map[string]bool // runIds a test has already looked at
}

// newToolClient starts the binary with env and brings it to RUNNING under
// the latest revision.
func newToolClient(t *testing.T, env ...string) *toolClient {
	t.Helper()
	return newToolClientRev(t, latestRevision, env...)
}

// newToolClientRev starts the binary with env and brings it to RUNNING
// under rev.
func newToolClientRev(t *testing.T, rev string, env ...string) *toolClient {
	t.Helper()
	p := start(t, env...)
	p.Handshake(t, rev)
	return &toolClient{t: t, p: p, rev: rev, stash: map[string]string{}, seen: map[string]int{}}
}

// newID returns a fresh numeric request id (JSON text).
func (c *toolClient) newID() string {
	c.next++
	return strconv.Itoa(c.next)
}

// toolsCallLine is a tools/call request; args and meta are JSON texts, left
// out when empty.
func toolsCallLine(id, name, args, meta string) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":` + jsonString(name))
	if args != "" {
		b.WriteString(`,"arguments":` + args)
	}
	if meta != "" {
		b.WriteString(`,"_meta":` + meta)
	}
	b.WriteString(`}}`)
	return b.String()
}

// send sends a tools/call of name with args (JSON text, "" for none) and
// returns its id.
func (c *toolClient) send(name, args string) string {
	id := c.newID()
	c.p.Send(toolsCallLine(id, name, args, ""))
	return id
}

// sendCID is send with params._meta.correlationId = cid.
func (c *toolClient) sendCID(name, args, cid string) string {
	id := c.newID()
	c.p.Send(toolsCallLine(id, name, args, `{"correlationId":`+jsonString(cid)+`}`))
	return id
}

// readOne reads one stdout line and files it: a notification in notes, a
// response in stash.
func (c *toolClient) readOne() {
	c.t.Helper()
	line := c.p.Expect(c.t)
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &raw); err != nil {
		c.t.Fatalf("stdout line is not a single message object: %s", clip(line))
	}
	id, hasID := raw["id"]
	_, hasMethod := raw["method"]
	switch {
	case hasMethod && !hasID:
		c.notes = append(c.notes, line)
	case hasMethod:
		c.t.Fatalf("unexpected request from the server: %s", clip(line))
	default:
		key := string(id)
		c.seen[key]++
		if c.seen[key] > 1 {
			c.t.Fatalf("a second response for id %s: %s", key, clip(line))
		}
		c.stash[key] = line
	}
}

// await returns the response line with the raw id, reading (and keeping)
// other lines until it arrives.
func (c *toolClient) await(id string) string {
	c.t.Helper()
	for {
		if line, ok := c.stash[id]; ok {
			delete(c.stash, id)
			return line
		}
		c.readOne()
	}
}

// result awaits the response with id and returns its result object; an
// error response fails the test.
func (c *toolClient) result(id string) map[string]any {
	c.t.Helper()
	line := c.await(id)
	res, err := wiretest.CheckResult(line, id)
	if err != nil {
		c.t.Fatal(err)
	}
	return res
}

// protoError awaits the response with id and checks that it is the JSON-RPC
// error code (with data.correlationId, SPEC §3.3).
func (c *toolClient) protoError(id string, code int) map[string]any {
	c.t.Helper()
	line := c.await(id)
	e, err := wiretest.CheckError(line, id, code)
	if err != nil {
		c.t.Fatal(err)
	}
	return e
}

// success awaits a successful tools/call result and returns the value its
// text block holds. It checks the CallToolResult's shape: one text block
// with the result's JSON, isError false, and structuredContent equal to
// that value exactly when it is an object and the revision has it (from
// 2025-06-18).
func (c *toolClient) success(id string) any {
	c.t.Helper()
	return c.successOf(id, c.result(id))
}

// successOf is success for a result already read.
func (c *toolClient) successOf(id string, res map[string]any) any {
	c.t.Helper()
	raw, _ := json.Marshal(res)
	if res["isError"] != false {
		c.t.Fatalf("response %s: isError is not false: %s", id, clip(string(raw)))
	}
	for k := range res {
		if k != "content" && k != "structuredContent" && k != "isError" {
			c.t.Errorf("response %s: unexpected member %q in the CallToolResult", id, k)
		}
	}
	text := firstText(c.t, res, string(raw))
	v := tcDecode(c.t, text)
	_, isObject := v.(map[string]any)
	sc, hasSC := res["structuredContent"]
	wantSC := isObject && c.rev >= "2025-06-18"
	if hasSC != wantSC {
		c.t.Fatalf("response %s under %s: structuredContent present=%v, want %v: %s", id, c.rev, hasSC, wantSC, clip(string(raw)))
	}
	if hasSC && !reflect.DeepEqual(sc, v) {
		c.t.Fatalf("response %s: structuredContent %v differs from the text block %s", id, sc, text)
	}
	return v
}

// ok calls name with args and returns its object result.
func (c *toolClient) ok(name, args string) map[string]any {
	c.t.Helper()
	id := c.send(name, args)
	v := c.success(id)
	m, isObject := v.(map[string]any)
	if !isObject {
		c.t.Fatalf("%s returned %v, want an object", name, v)
	}
	return m
}

// firstText returns the text of the result's first content block after
// checking that it is a text block.
func firstText(t *testing.T, res map[string]any, raw string) string {
	t.Helper()
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("result without content blocks: %s", clip(raw))
	}
	block, _ := content[0].(map[string]any)
	if block["type"] != "text" {
		t.Fatalf("the first content block is not text: %s", clip(raw))
	}
	text, isString := block["text"].(string)
	if !isString {
		t.Fatalf("the first content block has no string text: %s", clip(raw))
	}
	return text
}

// tcDecode decodes one JSON value with UseNumber (as wiretest does).
func tcDecode(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		t.Fatalf("not one JSON value (%v): %s", err, clip(s))
	}
	return v
}

// retryableByCode is the retryable column of SPEC §6.
var retryableByCode = map[string]bool{
	"INVALID_ARGUMENT":   false,
	"NOT_FOUND":          false,
	"TIMEOUT":            true,
	"RESOURCE_EXHAUSTED": true,
	"INTERNAL":           true,
	"UNAUTHORIZED":       false,
	"NOT_IMPLEMENTED":    false,
	"AUDIT_ENTER_FAILED": true,
}

// toolErr is a StructuredError read from a tool error result.
type toolErr struct {
	Code, Message        string
	Details              map[string]any
	Retryable            bool
	CorrelationID, RunID string
}

// toolError awaits the response with id and checks that it is a tool error
// (SPEC §6) with code: isError true, the first content block text holding
// the JSON of {code, message, details?, retryable, correlationId, runId},
// retryable as the table says, runId a UUID v4.
func (c *toolClient) toolError(id, code string) toolErr {
	c.t.Helper()
	return c.toolErrorOf(id, code, c.result(id))
}

// toolErrorOf is toolError for a result already read.
func (c *toolClient) toolErrorOf(id, code string, res map[string]any) toolErr {
	c.t.Helper()
	raw, _ := json.Marshal(res)
	if res["isError"] != true {
		c.t.Fatalf("response %s: want a tool error %s, got %s", id, code, clip(string(raw)))
	}
	text := firstText(c.t, res, string(raw))
	obj, isObject := tcDecode(c.t, text).(map[string]any)
	if !isObject {
		c.t.Fatalf("response %s: the error text is not a JSON object: %s", id, text)
	}
	allowed := map[string]bool{"code": true, "message": true, "details": true, "retryable": true, "correlationId": true, "runId": true}
	for k := range obj {
		if !allowed[k] {
			c.t.Errorf("response %s: unexpected member %q in the StructuredError %s", id, k, text)
		}
	}
	for _, k := range []string{"code", "message", "retryable", "correlationId", "runId"} {
		if _, has := obj[k]; !has {
			c.t.Fatalf("response %s: the StructuredError has no %q: %s", id, k, text)
		}
	}
	var e toolErr
	e.Code, _ = obj["code"].(string)
	e.Message, _ = obj["message"].(string)
	e.CorrelationID, _ = obj["correlationId"].(string)
	e.RunID, _ = obj["runId"].(string)
	retryable, isBool := obj["retryable"].(bool)
	e.Retryable = retryable
	if d, has := obj["details"]; has {
		dm, isMap := d.(map[string]any)
		if !isMap {
			c.t.Fatalf("response %s: details is not an object: %s", id, text)
		}
		e.Details = dm
	}
	switch {
	case e.Code != code:
		c.t.Fatalf("response %s: code %q, want %s: %s", id, e.Code, code, text)
	case e.Message == "":
		c.t.Fatalf("response %s: empty message: %s", id, text)
	case !isBool || retryable != retryableByCode[code]:
		c.t.Fatalf("response %s: retryable %v, want %v for %s (SPEC §6)", id, obj["retryable"], retryableByCode[code], code)
	case e.CorrelationID == "":
		c.t.Fatalf("response %s: empty correlationId: %s", id, text)
	case !uuidV4.MatchString(e.RunID):
		c.t.Fatalf("response %s: runId %q is not a UUID v4", id, e.RunID)
	}
	if strings.Contains(e.Message, "goroutine ") || strings.Contains(e.Message, ".go:") {
		c.t.Errorf("response %s: the message looks like a stack trace (SPEC §6: none on the wire): %s", id, e.Message)
	}
	return e
}

// fails calls name with args (no client correlation id) and returns the
// tool error with code after checking its completion record.
func (c *toolClient) fails(name, args, code string) toolErr {
	c.t.Helper()
	id := c.send(name, args)
	e := c.toolError(id, code)
	if !uuidV4.MatchString(e.CorrelationID) {
		c.t.Fatalf("%s: generated correlationId %q is not a UUID v4", name, e.CorrelationID)
	}
	rec := c.recordOf(e.RunID, "tool_error")
	c.checkRecordOf(rec, name, e.CorrelationID, code, compactLen(c.t, args))
	return e
}

// compactLen is the compact JSON length of args ({} when empty), the
// payloadBytes of a completion record.
func compactLen(t *testing.T, args string) int {
	t.Helper()
	if args == "" {
		return 2
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(args)); err != nil {
		t.Fatalf("test arguments are not JSON: %v", err)
	}
	return b.Len()
}

// ping sends a JSON-RPC ping and awaits {}.
func (c *toolClient) ping() {
	c.t.Helper()
	id := c.newID()
	c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
	if res := c.result(id); len(res) != 0 {
		c.t.Fatalf("ping result %v, want {}", res)
	}
}

// cancel sends notifications/cancelled for the raw request id.
func (c *toolClient) cancel(rawID string) {
	c.p.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + rawID + `,"reason":"test"}}`)
}

// neverAnswered marks a raw id that must get no response, ever; close
// checks it once the process has exited.
func (c *toolClient) neverAnswered(rawID string) {
	c.never = append(c.never, rawID)
	if c.seen[rawID] > 0 {
		c.t.Fatalf("id %s was answered; it must not be", rawID)
	}
}

// close closes stdin, expects exit code 0, and checks that nothing was left
// unread on stdout or in the stash, that the ids marked neverAnswered got
// no response, and that every completion record is well-formed.
func (c *toolClient) close() {
	c.t.Helper()
	c.p.CloseStdin()
	if code := c.p.Wait(c.t); code != 0 {
		c.t.Fatalf("exit code %d after stdin EOF, want 0\nstderr:\n%s", code, c.p.Stderr())
	}
	c.done()
}

// done runs close's checks on a process that has exited.
func (c *toolClient) done() {
	c.t.Helper()
	c.p.ExpectSilence(c.t, 0) // after exit every line is queued: none may be left
	for id, line := range c.stash {
		c.t.Errorf("response %s was never expected: %s", id, clip(line))
	}
	for _, id := range c.never {
		if c.seen[id] > 0 {
			c.t.Errorf("request %s was answered; SPEC §7.4 says it gets no response", id)
		}
	}
	// One final record per call; a timed-out call has its timeout record
	// first, then one final record: late_completed, or aborted when the
	// handler was still running at exit (SPEC §4.2, §7.6).
	type run struct {
		outcomes []string
	}
	runs := map[string]*run{}
	var order []string
	for _, rec := range c.records() {
		c.checkRecord(rec)
		id, _ := rec["runId"].(string)
		if id == "" {
			continue // protocol_error
		}
		if runs[id] == nil {
			runs[id] = &run{}
			order = append(order, id)
		}
		runs[id].outcomes = append(runs[id].outcomes, rec["outcome"].(string))
	}
	for _, id := range order {
		got := runs[id].outcomes
		ok := len(got) == 1 && got[0] != "timeout" && got[0] != "late_completed"
		if len(got) == 2 && got[0] == "timeout" {
			ok = got[1] == "late_completed" || got[1] == "aborted"
		}
		if !ok {
			c.t.Errorf("run %s has the records %v; want one final record, or timeout then late_completed (or aborted)", id, got)
		}
	}
}

// connCID returns the connection correlation id.
func (c *toolClient) connCID() string {
	c.t.Helper()
	if c.cid == "" {
		c.cid = connCID(c.t, c.p)
	}
	return c.cid
}

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

// recordLevels is the level of each outcome (SPEC §7.6).
var recordLevels = map[string]string{
	"success":                "INFO",
	"tool_error":             "INFO",
	"timeout":                "WARN",
	"late_completed":         "WARN",
	"aborted":                "WARN",
	"disconnected_completed": "WARN",
	"protocol_error":         "INFO",
}

// checkRecord checks a completion record's members (SPEC §7.6): exactly
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
			c.t.Errorf("completion record has member %q (SPEC §7.6 lists its fields): %s", k, line)
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
			c.t.Errorf("protocol_error record has a runId (SPEC §7.6: none): %s", line)
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
		c.t.Errorf("the marker %q from the arguments or results reached stderr (SPEC §7.6, §11)", marker)
	}
}

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
// as far as the scheduler latency it reports justifies (SPEC §8.1: p99 over
// 100 ms is degraded, over 500 ms unhealthy). A loaded test machine can slow
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

// sleepArgs are the sleep fixture's arguments.
func sleepArgs(ms int, ignoreCancel bool) string {
	return fmt.Sprintf(`{"ms":%d,"ignoreCancel":%v}`, ms, ignoreCancel)
}

// testMode is the environment of a TEST-mode server.
const testMode = "MCPRT_SERVER_MODE=TEST"

// ---------------------------------------------------------------------------
// SPEC §6: every row of the table, through tools/call.

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
		{"result too large", "big_result", `{"bytes":5000}`, "INTERNAL", func(t *testing.T, e toolErr) {
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
// JSON length of the arguments (SPEC §7.3 step 4), so a payload of exactly
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
	c.success(id)
	overhead := size - 100
	n := resultLimit - overhead
	if size, id = resultBytes(n); size != resultLimit {
		t.Fatalf("big_result %d encodes to %d bytes, want exactly %d", n, size, resultLimit)
	}
	c.success(id)
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
// non-empty string of at most 128 bytes; otherwise one is generated (SPEC
// §5). Unknown _meta keys are ignored.
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
// SPEC §7.3 step 1 and 2: protocol errors and their records.

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

// ---------------------------------------------------------------------------
// SPEC §7.6: every completion outcome.

func TestOutcomeSuccess(t *testing.T) {
	t.Parallel()
	const secret = "ghp_SECRETMARKER0042"
	c := newToolClient(t, testMode)
	id := c.sendCID("echo", `{ "message" : "`+secret+`" }`, "success-cid")
	v := c.success(id)
	if !reflect.DeepEqual(v, map[string]any{"message": secret}) {
		t.Fatalf("echo returned %v", v)
	}
	rec := c.record("success for echo", func(m map[string]any) bool { return m["tool"] == "echo" })
	if rec["outcome"] != "success" {
		t.Fatalf("record %v, want outcome success", rec)
	}
	c.checkRecordOf(rec, "echo", "success-cid", "", len(`{"message":"`+secret+`"}`))
	// Absent arguments count as {}.
	c.ok("noop", "")
	rec = c.record("success for noop", func(m map[string]any) bool { return m["tool"] == "noop" })
	if fmt.Sprint(rec["payloadBytes"]) != "2" {
		t.Errorf("noop record payloadBytes %v, want 2 for absent arguments", rec["payloadBytes"])
	}
	c.close()
	c.noSecret(secret)
}

func TestOutcomeTimeoutThenLateCompleted(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode, "MCPRT_TOOLS_DEFAULT_TIMEOUT_MS=100")
	for _, ignoreCancel := range []bool{false, true} {
		sent := time.Now()
		id := c.send("sleep", sleepArgs(400, ignoreCancel))
		e := c.toolError(id, "TIMEOUT")
		if elapsed := time.Since(sent); elapsed < 100*time.Millisecond {
			t.Errorf("TIMEOUT after %v, before the 100 ms deadline", elapsed)
		}
		late := c.recordOf(e.RunID, "late_completed")
		lines := c.p.StderrLines()
		timeoutAt, lateAt := -1, -1
		count := 0
		for i, m := range lines {
			if m["msg"] != "tool call completed" || m["runId"] != e.RunID {
				continue
			}
			count++
			switch m["outcome"] {
			case "timeout":
				timeoutAt = i
			case "late_completed":
				lateAt = i
			}
		}
		if count != 2 || timeoutAt < 0 || timeoutAt > lateAt {
			t.Errorf("ignoreCancel=%v: records of run %s: timeout at %d, late_completed at %d, %d in all; want timeout then late_completed, two records",
				ignoreCancel, e.RunID, timeoutAt, lateAt, count)
		}
		if late["correlationId"] != e.CorrelationID {
			t.Errorf("late_completed correlationId %v, want %s", late["correlationId"], e.CorrelationID)
		}
		if ignoreCancel && time.Since(sent) < 400*time.Millisecond {
			t.Errorf("late_completed logged before the 400 ms sleep could have ended")
		}
	}
	c.ping()
	c.close()
}

func TestOutcomeDisconnectedCompleted(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode)
	sent := time.Now()
	id := c.send("sleep", sleepArgs(600, true))
	c.ping() // the sleep was dispatched before the ping was read
	c.neverAnswered(id)
	c.close() // exit code 0
	if elapsed := time.Since(sent); elapsed < 600*time.Millisecond {
		t.Errorf("the process exited %v after the call, before the 600 ms handler could return", elapsed)
	}
	rec := c.record("disconnected_completed for the sleep", func(m map[string]any) bool { return m["tool"] == "sleep" })
	if rec["outcome"] != "disconnected_completed" {
		t.Fatalf("record %v, want outcome disconnected_completed", rec)
	}
	if n := len(c.records()); n != 1 {
		t.Errorf("%d completion records, want 1", n)
	}
}

func TestOutcomeAbortedAtShutdown(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode, "MCPRT_SERVER_SHUTDOWN_TIMEOUT_MS=300")
	id := c.sendCID("sleep", sleepArgs(10000, true), "shutdown-cid")
	c.waitHealth(1)
	c.neverAnswered(id)
	signalled := time.Now()
	c.p.Signal(syscall.SIGTERM)
	if code := c.p.Wait(t); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0\nstderr:\n%s", code, c.p.Stderr())
	}
	if elapsed := time.Since(signalled); elapsed > 5*time.Second {
		t.Errorf("exit %v after SIGTERM; server.shutdownTimeoutMs is 300", elapsed)
	}
	c.done()
	rec := c.record("aborted for the sleep", func(m map[string]any) bool { return m["tool"] == "sleep" })
	if rec["outcome"] != "aborted" || rec["correlationId"] != "shutdown-cid" {
		t.Fatalf("record %v, want outcome aborted with correlationId shutdown-cid", rec)
	}
}

// TestTimedOutCallAbortedAtShutdown: a call that timed out and whose
// handler still runs when the shutdown time is up has two records, timeout
// then aborted (SPEC §4.2, §7.6).
func TestTimedOutCallAbortedAtShutdown(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode, "MCPRT_SERVER_SHUTDOWN_TIMEOUT_MS=300", "MCPRT_TOOLS_DEFAULT_TIMEOUT_MS=100")
	e := c.toolError(c.send("sleep", sleepArgs(10000, true)), "TIMEOUT")
	c.recordOf(e.RunID, "timeout")
	c.p.Signal(syscall.SIGTERM)
	if code := c.p.Wait(t); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}
	c.done() // checks: timeout, then one final record
	c.recordOf(e.RunID, "aborted")
}

// ---------------------------------------------------------------------------
// SPEC §7.4: the slot stays held until a timed-out handler returns.

func TestSlotHeldAfterTimeout(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode, "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=1", "MCPRT_TOOLS_DEFAULT_TIMEOUT_MS=200")
	sent := time.Now()
	sleeper := c.send("sleep", sleepArgs(1500, true))
	e := c.toolError(sleeper, "TIMEOUT")
	tookMs := time.Since(sent).Milliseconds()
	if tookMs < 200 || tookMs >= 1500 {
		t.Errorf("TIMEOUT after %d ms, want it at the 200 ms deadline, long before the handler returns", tookMs)
	}
	c.recordOf(e.RunID, "timeout")
	// The handler still runs and holds the only slot.
	c.fails("noop", `{}`, "RESOURCE_EXHAUSTED")
	h := c.health() // an observer: answers without a slot
	if time.Since(sent) >= 1500*time.Millisecond {
		// The sleeper started after sent, so before this it cannot have
		// returned; past it, the checks below would prove nothing.
		t.Fatalf("the checks took until %v after the call, past the sleeper's 1500 ms (machine too slow)", time.Since(sent))
	}
	if healthInt(t, h, "resources", "concurrentExecutions") != 1 || healthInt(t, h, "resources", "maxConcurrentExecutions") != 1 {
		t.Errorf("health resources %v, want concurrentExecutions 1 of 1", h["resources"])
	}
	checkStatus(t, h, "unhealthy")
	late := c.recordOf(e.RunID, "late_completed")
	if time.Since(sent) < 1500*time.Millisecond {
		t.Errorf("late_completed logged before the 1500 ms sleep could have ended: %v", late)
	}
	c.ok("noop", `{}`)
	// Never a second response for the timed-out id (readOne fails on one);
	// close also checks that nothing is left on stdout.
	c.close()
}

// ---------------------------------------------------------------------------
// SPEC §7.4: notifications/cancelled.

func TestCancellation(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode, "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=1")
	for _, rawID := range []string{`"cancel-me"`, `4242`} {
		cid := "cancel-cid-" + strings.Trim(rawID, `"`)
		c.p.Send(toolsCallLine(rawID, "sleep", sleepArgs(5000, false), `{"correlationId":"`+cid+`"}`))
		c.waitHealth(1) // in flight
		c.cancel(rawID)
		c.neverAnswered(rawID)
		rec := c.record("for the cancelled sleep "+rawID, func(m map[string]any) bool { return m["correlationId"] == cid })
		if rec["outcome"] != "aborted" || rec["tool"] != "sleep" {
			t.Errorf("record %v, want outcome aborted for the sleep", rec)
		}
		// The slot is free again: with one slot, a call succeeds.
		c.ok("noop", `{}`)
		c.ping()
	}
	// A handler that ignores the cancellation keeps its slot until it
	// returns (SPEC §7.3 step 13); the request still gets no response.
	sent := time.Now()
	c.p.Send(toolsCallLine(`"stubborn"`, "sleep", sleepArgs(1500, true), `{"correlationId":"stubborn-cid"}`))
	c.waitHealth(1)
	c.cancel(`"stubborn"`)
	c.neverAnswered(`"stubborn"`)
	c.ping() // the cancellation was read before the ping
	c.fails("noop", `{}`, "RESOURCE_EXHAUSTED")
	if time.Since(sent) >= 1500*time.Millisecond {
		t.Fatalf("the checks took until %v after the call, past the sleeper's 1500 ms (machine too slow)", time.Since(sent))
	}
	rec := c.record("for the stubborn sleep", func(m map[string]any) bool { return m["correlationId"] == "stubborn-cid" })
	if rec["outcome"] != "aborted" {
		t.Errorf("record %v, want outcome aborted", rec)
	}
	c.ok("noop", `{}`)
	// 1 and 1.0 are different ids: cancelling 1 leaves 1.0 running.
	c.p.Send(toolsCallLine(`1.0`, "sleep", sleepArgs(300, false), ""))
	c.cancel(`1`)
	if v := c.success(`1.0`); fmt.Sprint(v) != "map[sleptMs:300]" {
		t.Errorf("sleep 1.0 returned %v", v)
	}
	c.record("success for the sleep 1.0", func(m map[string]any) bool {
		return m["tool"] == "sleep" && m["outcome"] == "success"
	})
	aborted := 0
	for _, rec := range c.records() {
		if rec["outcome"] == "aborted" {
			aborted++
		}
	}
	if aborted != 3 {
		t.Errorf("%d aborted records, want 3", aborted)
	}
	c.close()
}

// ---------------------------------------------------------------------------
// SPEC §4.2, §7.3 step 10: a panicking handler.

func TestPanicKeepsServing(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode)
	for range 3 {
		c.fails("panic", `{}`, "INTERNAL")
		c.ping()
		c.ok("noop", `{}`)
	}
	found := false
	for _, m := range c.p.StderrLines() {
		if strings.Contains(fmt.Sprint(m["msg"]), "panic") {
			found = true
		}
	}
	if !found {
		t.Errorf("no log line about the recovered panic")
	}
	c.close()
}

// ---------------------------------------------------------------------------
// SPEC §8, §8.1: server_ping and health.

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
		`"resources":{"memoryUsageBytes":"*","schedLatencyP99Ms":"*","concurrentExecutions":0,"maxConcurrentExecutions":7},` +
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

// ---------------------------------------------------------------------------
// SPEC §9 and §7.2: modes, tools/list, pagination, revisions.

// listNames returns the names of every tool tools/list lists, walking the
// pages, after checking that each page is sorted and no name repeats.
func (c *toolClient) listNames() []string {
	c.t.Helper()
	var names []string
	cursor := ""
	for page := 0; ; page++ {
		if page > 100 {
			c.t.Fatal("tools/list pagination does not end")
		}
		id := c.newID()
		params := `{}`
		if cursor != "" {
			params = `{"cursor":` + jsonString(cursor) + `}`
		}
		c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":` + params + `}`)
		res := c.result(id)
		tools, isArray := res["tools"].([]any)
		if !isArray {
			c.t.Fatalf("tools/list result has no tools array: %v", res)
		}
		for _, tl := range tools {
			m, _ := tl.(map[string]any)
			name, _ := m["name"].(string)
			names = append(names, name)
		}
		next, hasNext := res["nextCursor"]
		if !hasNext {
			break
		}
		if s, _ := next.(string); s == "" {
			c.t.Fatalf("nextCursor %v is not a non-empty string", next)
		}
		cursor = next.(string)
	}
	if !sort.StringsAreSorted(names) {
		c.t.Errorf("tools/list is not sorted by name: %v", names)
	}
	if len(slices.Compact(slices.Clone(names))) != len(names) {
		c.t.Errorf("tools/list repeats a name: %v", names)
	}
	return names
}

var (
	baseTools    = []string{"agent_get_state", "agent_list", "agent_send_message", "health", "server_ping"}
	adminNames   = []string{"admin_register_tool", "admin_unregister_tool"}
	fixtureNames = []string{"big_result", "echo", "fail", "noop", "panic", "sleep", "unserializable"}
)

func sortedUnion(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.Sort(out)
	return out
}

const (
	adminOn1 = "MCPRT_TOOLS_ADMIN_REGISTRATION_ENABLED=true"
	adminOn2 = "MCPRT_SECURITY_DYNAMIC_REGISTRATION_ENABLED=true"
)

func TestModesListExactlyTheirTools(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     []string
		want    []string
		missing []string // tools that must be NOT_FOUND when called
	}{
		{"FULL", []string{"MCPRT_SERVER_MODE=FULL"}, baseTools, sortedUnion(adminNames, []string{"noop", "echo"})},
		{"FULL admin", []string{"MCPRT_SERVER_MODE=FULL", adminOn1, adminOn2}, sortedUnion(baseTools, adminNames), []string{"noop"}},
		{"FULL admin registration only", []string{adminOn1}, baseTools, adminNames},
		{"FULL dynamic registration only", []string{adminOn2}, baseTools, adminNames},
		{"READONLY", []string{"MCPRT_SERVER_MODE=READONLY", adminOn1, adminOn2},
			[]string{"agent_get_state", "agent_list", "health", "server_ping"},
			sortedUnion(adminNames, []string{"agent_send_message", "noop"})},
		{"MINIMAL", []string{"MCPRT_SERVER_MODE=MINIMAL", adminOn1, adminOn2}, []string{"health", "server_ping"},
			sortedUnion(adminNames, []string{"agent_send_message", "agent_list", "agent_get_state", "sleep"})},
		{"TEST", []string{testMode}, sortedUnion(baseTools, fixtureNames), adminNames},
		{"TEST admin", []string{testMode, adminOn1, adminOn2}, sortedUnion(baseTools, fixtureNames, adminNames), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newToolClient(t, tt.env...)
			if got := c.listNames(); !slices.Equal(got, tt.want) {
				t.Errorf("tools/list names\n got  %v\n want %v", got, tt.want)
			}
			for _, name := range tt.missing {
				args := `{}`
				if name == "agent_get_state" {
					args = `{"agentId":"echo"}`
				}
				c.fails(name, args, "NOT_FOUND")
			}
			mode := "FULL"
			for _, kv := range tt.env {
				if m, found := strings.CutPrefix(kv, "MCPRT_SERVER_MODE="); found {
					mode = m
				}
			}
			if r := c.ok("server_ping", `{}`); r["mode"] != mode {
				t.Errorf("server_ping mode %v, want %s", r["mode"], mode)
			}
			c.close()
		})
	}
}

func TestToolsListPagination(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, testMode, adminOn1, adminOn2, "MCPRT_TOOLS_PAGE_SIZE=3")
	all := sortedUnion(baseTools, fixtureNames, adminNames)
	var got []string
	cursor := ""
	pages := 0
	for {
		id := c.newID()
		params := `{}`
		if cursor != "" {
			params = `{"cursor":` + jsonString(cursor) + `}`
		}
		c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":` + params + `}`)
		res := c.result(id)
		tools, _ := res["tools"].([]any)
		pages++
		next, hasNext := res["nextCursor"].(string)
		if hasNext && len(tools) != 3 || !hasNext && (len(tools) == 0 || len(tools) > 3) {
			t.Fatalf("page %d has %d tools (nextCursor %v), want 3 per page but the last", pages, len(tools), res["nextCursor"])
		}
		for _, tl := range tools {
			got = append(got, tl.(map[string]any)["name"].(string))
		}
		if !hasNext {
			break
		}
		cursor = next
	}
	if !slices.Equal(got, all) {
		t.Errorf("the pages list\n %v\nwant every tool once, sorted:\n %v", got, all)
	}
	if want := (len(all) + 2) / 3; pages != want {
		t.Errorf("%d pages, want %d", pages, want)
	}
	if got2 := c.listNames(); !slices.Equal(got2, all) {
		t.Errorf("a second walk lists %v", got2)
	}
	for _, bad := range []string{`"not a cursor"`, `"AAAA"`, `""`, `7`} {
		id := c.newID()
		c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{"cursor":` + bad + `}}`)
		c.protoError(id, -32602)
	}
	c.close()
}

func TestRevisionsShapeListingAndResults(t *testing.T) {
	t.Parallel()
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			c := newToolClientRev(t, rev, testMode)
			modern := rev >= "2025-06-18"
			// success checks structuredContent against the revision.
			if v := c.ok("echo", `{"message":"m"}`); v["message"] != "m" {
				t.Errorf("echo returned %v", v)
			}
			if v := c.success(c.send("big_result", `{"bytes":3}`)); v != "xxx" {
				t.Errorf("big_result returned %v, want \"xxx\" (not an object: no structuredContent)", v)
			}
			id := c.newID()
			c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`)
			res := c.result(id)
			tools, _ := res["tools"].([]any)
			byName := map[string]map[string]any{}
			for _, tl := range tools {
				m := tl.(map[string]any)
				byName[m["name"].(string)] = m
				if _, has := m["inputSchema"]; !has {
					t.Errorf("%v has no inputSchema", m["name"])
				}
				if _, has := m["title"]; has && !modern {
					t.Errorf("%s lists title %v under %s (only from 2025-06-18)", m["name"], m["title"], rev)
				}
				if _, has := m["outputSchema"]; has && !modern {
					t.Errorf("%s lists outputSchema under %s (only from 2025-06-18)", m["name"], rev)
				}
			}
			health := byName["health"]
			if _, has := health["title"]; has != modern {
				t.Errorf("health title present=%v under %s, want %v", has, rev, modern)
			}
			if _, has := health["outputSchema"]; has != modern {
				t.Errorf("health outputSchema present=%v under %s, want %v", has, rev, modern)
			}
			c.close()
		})
	}
}

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
		if e["retryable"] != retryableByCode[code] || !uuidV4.MatchString(fmt.Sprint(e["runId"])) ||
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
