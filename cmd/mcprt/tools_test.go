package main

// Black-box tests of tools/call through the real binary: the error table of
// the contract, the ordered pipeline and its completion records,
// deadlines and cancellation, the built-in observers and health
//, modes and tools/list, and a burst of mixed calls.
// The TEST fixtures do the work. Admin tools are in admin_test.go,
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
	"strconv"
	"strings"
	"testing"

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
// error code (with data.correlationId, the contract).
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

// successText awaits the response with id, checks that it is a success
// holding one text block and no structuredContent (a tool that returns a Go
// string), and returns that text as it is: a string result is sent
// unquoted.
func (c *toolClient) successText(id string) string {
	c.t.Helper()
	res := c.result(id)
	raw, _ := json.Marshal(res)
	if res["isError"] != false {
		c.t.Fatalf("response %s: isError is not false: %s", id, clip(string(raw)))
	}
	if _, has := res["structuredContent"]; has {
		c.t.Fatalf("response %s: a string result has structuredContent: %s", id, clip(string(raw)))
	}
	return firstText(c.t, res, string(raw))
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

// wantRetryable says whether a tool error with this code and details must
// be retryable: whether the same call can succeed when sent again. A
// timeout, a busy slot and a refused audit can pass; a panic may not
// recur; a payload over the limit, a handler's own error and a result that
// is unserializable, too large or against its outputSchema will recur.
func wantRetryable(code string, details map[string]any) bool {
	switch code {
	case "TIMEOUT", "AUDIT_ENTER_FAILED", "STORAGE_FULL", "STORAGE_IO_ERROR", "STORE_BUSY":
		return true
	case "RESOURCE_EXHAUSTED":
		return details["reason"] != "payload_too_large"
	case "INTERNAL":
		return details["reason"] == "panic"
	}
	return false
}

// toolErr is a StructuredError read from a tool error result.
type toolErr struct {
	Code, Message        string
	Details              map[string]any
	Retryable            bool
	CorrelationID, RunID string
}

// toolError awaits the response with id and checks that it is a tool error
// with code: isError true, the first content block text holding
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
	case !isBool || retryable != wantRetryable(code, e.Details):
		c.t.Fatalf("response %s: retryable %v, want %v for %s: %s", id, obj["retryable"], wantRetryable(code, e.Details), code, text)
	case e.CorrelationID == "":
		c.t.Fatalf("response %s: empty correlationId: %s", id, text)
	case !uuidV4.MatchString(e.RunID):
		c.t.Fatalf("response %s: runId %q is not a UUID v4", id, e.RunID)
	}
	if strings.Contains(e.Message, "goroutine ") || strings.Contains(e.Message, ".go:") {
		c.t.Errorf("response %s: the message looks like a stack trace: %s", id, e.Message)
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
			c.t.Errorf("request %s was answered; the contract says it gets no response", id)
		}
	}
	// One final record per call; a timed-out call has its timeout record
	// first, then one final record: late_completed, or aborted when the
	// handler was still running at exit.
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

// sleepArgs are the sleep fixture's arguments.
func sleepArgs(ms int, ignoreCancel bool) string {
	return fmt.Sprintf(`{"ms":%d,"ignoreCancel":%v}`, ms, ignoreCancel)
}

// testMode is the environment of a TEST-mode server.
const testMode = "MCPRT_SERVER_MODE=TEST"
