package main

// The load group, continued: bounded schema validation, bounded results,
// completion records that match what the client got, rate-limited
// warnings and clipped echoes (see load_test.go).

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// toolErrorCode decodes a tools/call answer that is a tool error and
// returns its code and the error text; anything else fails t.
func toolErrorCode(t *testing.T, line []byte) (code, text string) {
	t.Helper()
	var m struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &m); err != nil || !m.Result.IsError || len(m.Result.Content) == 0 {
		t.Fatalf("not a tool error: %s", clip(string(line)))
	}
	var e struct {
		Code string `json:"code"`
	}
	text = m.Result.Content[0].Text
	if err := json.Unmarshal([]byte(text), &e); err != nil || e.Code == "" {
		t.Fatalf("tool error text is not {code, ...}: %s", clip(text))
	}
	return e.Code, text
}

// manyKeys is a JSON object of n distinct members "xyz":0 (8 bytes each).
func manyKeys(n int) string {
	const al = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + string(al[i%62]) + string(al[i/62%62]) + string(al[i/(62*62)%62]) + `":0`)
	}
	b.WriteByte('}')
	return b.String()
}

// TestLoadSchemaValidationIsBounded: arguments with 100,000 members the
// schema does not allow are refused at a bounded cost. Before, ten such
// noop calls (800 KB each) took 14.6 s and 1.08 GB. The cost is measured
// as the server's CPU time, which other load on the machine barely
// changes.
func TestLoadSchemaValidationIsBounded(t *testing.T) {
	t.Parallel()
	const (
		calls     = 10
		keys      = 100_000
		maxCPU    = 6.0 // seconds, for all ten (measured 2.0-2.3; before: about 15)
		maxAnswer = 64 << 10
		ceilingMB = 200.0 // measured 99-115 MB; before: 244-421 MB here, 1.08 GB reported
	)
	p := startLoad(t, false)
	p.handshake("2025-06-18")
	args := manyKeys(keys)
	cpu0 := p.cpuSeconds()
	go func() {
		for i := 1; i <= calls; i++ {
			p.send(loadCall(i, "noop", args))
		}
	}()
	seen := make([]bool, calls+1)
	for range calls {
		line, n := p.readLine()
		id, err := responseID(line)
		if err != nil {
			t.Fatal(err)
		}
		i, err := strconv.Atoi(id)
		if err != nil || i < 1 || i > calls || seen[i] {
			t.Fatalf("unexpected or repeated answer: %s", clip(string(line)))
		}
		seen[i] = true
		if n > maxAnswer {
			t.Fatalf("the answer to call %d is %d bytes, want at most %d: %s", i, n, maxAnswer, clip(string(line)))
		}
		if code, text := toolErrorCode(t, line); code != "INVALID_ARGUMENT" {
			t.Fatalf("noop with %d unknown arguments: %s, want INVALID_ARGUMENT: %s", keys, code, clip(text))
		}
	}
	cpu := p.cpuSeconds() - cpu0
	peak := p.finish()
	t.Logf("%d calls of %d bytes refused in %.2f s of server CPU; server peak %.1f MB", calls, len(args), cpu, peak)
	if cpu > maxCPU {
		t.Errorf("validation took %.2f s of server CPU, want at most %.0f s", cpu, maxCPU)
	}
	if peak > ceilingMB {
		t.Errorf("server peak %.1f MB, ceiling %.0f MB", peak, ceilingMB)
	}
}

// TestLoadResultBoundedWhileEncoding: the largest result big_result may
// make (tools.maxResultBytes + 1 bytes) fails with INTERNAL
// result_too_large, and the server's memory for it stays within a small
// multiple of the bound: encoding stops at the bound instead of building
// the whole text (and its copies) first. The calls go one at a time, so
// the peak measures one call.
func TestLoadResultBoundedWhileEncoding(t *testing.T) {
	t.Parallel()
	const (
		calls     = 3
		maxResult = 16 << 20
		// The string itself, the encoding up to the bound, and slack for
		// the garbage collector: 5 times the bound (measured 2.1).
		// Building the whole encoding and its copies took 6 to 10 times.
		maxFactor = 5.0
	)
	p := startLoad(t, false, fmt.Sprintf("MCPRT_TOOLS_MAX_RESULT_BYTES=%d", maxResult))
	p.handshake("2025-06-18")
	base := p.procStatus("VmHWM")
	for i := 1; i <= calls; i++ {
		p.send(loadCall(i, "big_result", fmt.Sprintf(`{"bytes":%d}`, maxResult+1)))
		line, n := p.readLine()
		if n > 4096 {
			t.Fatalf("an answer of %d bytes: %s", n, clip(string(line)))
		}
		code, text := toolErrorCode(t, line)
		if code != "INTERNAL" || !strings.Contains(text, "result_too_large") {
			t.Fatalf("big_result of %d bytes: %s, want INTERNAL result_too_large", maxResult+1, clip(text))
		}
	}
	peak := p.finish()
	factor := (peak - base) * (1 << 20) / maxResult
	t.Logf("server peak %.1f MB from %.1f MB at rest: %.1f times the %d-byte bound", peak, base, factor, maxResult)
	if factor > maxFactor {
		t.Errorf("a result over the bound cost %.1f times the bound in memory, want at most %.0f", factor, maxFactor)
	}
}

// TestLoadCancelledCallsRecordedAborted: a call the client cancelled and
// that got no answer is recorded as aborted, never success, even when its
// handler ran to the end (sleep with ignoreCancel). Every call has one
// record, and a record says success or tool_error exactly when the client
// got the answer.
func TestLoadCancelledCallsRecordedAborted(t *testing.T) {
	t.Parallel()
	const calls = 400
	kinds := [][2]string{
		{"noop", `{}`},
		{"sleep", `{"ms":5,"ignoreCancel":true}`},
		{"sleep", `{"ms":5}`},
		{"echo", `{"message":"load"}`},
	}
	p := startLoad(t, false, "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=1000")
	p.handshake("2025-06-18")
	var b strings.Builder
	for i := 1; i <= calls; i++ {
		k := kinds[i%len(kinds)]
		b.WriteString(loadCall(i, k[0], k[1]) + "\n")
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"load"}}`+"\n", i)
	}
	p.write([]byte(b.String()))
	// Once every call has its record, each answer that went out precedes
	// the answer to a ping sent now.
	p.stderr.waitMsg(t, "tool call completed", calls)
	p.send(`{"jsonrpc":"2.0","id":"end","method":"ping"}`)
	answered := make([]bool, calls)
	for {
		line, _ := p.readLine()
		id, err := responseID(line)
		if err != nil {
			t.Fatal(err)
		}
		if id == `"end"` {
			break
		}
		i, err := strconv.Atoi(id)
		if err != nil || i < 1 || i > calls || answered[i-1] {
			t.Fatalf("unexpected or repeated answer: %s", clip(string(line)))
		}
		answered[i-1] = true
	}
	p.finish()
	checkRecordsMatch(t, p, answered, 1)
	unanswered := 0
	for _, ok := range answered {
		if !ok {
			unanswered++
		}
	}
	t.Logf("%d of %d cancelled calls got no answer", unanswered, calls)
	if unanswered == 0 {
		t.Errorf("every call was answered before its cancellation: the test did not exercise cancellation")
	}
}

// TestLoadRecordsMatchAnswersAtEOF: when stdin ends while answers are
// still queued, a call whose answer never reached the client is not
// recorded as success.
func TestLoadRecordsMatchAnswersAtEOF(t *testing.T) {
	t.Parallel()
	const calls = 100
	p := startLoad(t, false, "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=1000")
	p.handshake("2025-06-18")
	var b strings.Builder
	for i := 1; i <= calls; i++ {
		b.WriteString(loadCall(i, "big_result", `{"bytes":1000000}`) + "\n")
	}
	p.write([]byte(b.String()))
	p.in.Close()
	answered := make([]bool, calls)
	for {
		if err := p.out.SetReadDeadline(time.Now().Add(loadGuard)); err != nil {
			t.Fatal(err)
		}
		if _, err := p.rd.Peek(1); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("stdout did not end within %v of stdin EOF", loadGuard)
			}
			break // EOF: the server has exited or closed stdout
		}
		line, _ := p.readLine()
		id, err := responseID(line)
		if err != nil {
			t.Fatal(err)
		}
		i, err := strconv.Atoi(id)
		if err != nil || i < 1 || i > calls || answered[i-1] {
			t.Fatalf("unexpected or repeated answer: %s", clip(string(line)))
		}
		answered[i-1] = true
	}
	p.end()
	n := 0
	for _, ok := range answered {
		if ok {
			n++
		}
	}
	t.Logf("%d of %d calls answered before the server ended", n, calls)
	checkRecordsMatch(t, p, answered, 1)
}

// TestLoadRepeatedWarningsAreRateLimited: a flood of notifications/cancelled
// without a valid requestId, and of responses matching no request, is
// not echoed line for line on stderr. Before, 200,000 of them made 40 MB
// of stderr.
func TestLoadRepeatedWarningsAreRateLimited(t *testing.T) {
	t.Parallel()
	const (
		each      = 50_000
		maxStderr = 256 << 10 // before: about 230 bytes per message, 23 MB here
	)
	p := startLoad(t, false)
	p.handshake("2025-06-18")
	var b strings.Builder
	for i := range each {
		if i%2 == 0 {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"n":%d}}}`+"\n", i)
		} else {
			b.WriteString(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"no id"}}` + "\n")
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":"x-%d","result":{}}`+"\n", i)
	}
	b.WriteString(`{"jsonrpc":"2.0","id":"end","method":"ping"}` + "\n")
	go p.write([]byte(b.String()))
	line, _ := p.readLine()
	if id, err := responseID(line); err != nil || id != `"end"` {
		t.Fatalf("first answer %s, want the ping's", clip(string(line)))
	}
	p.finish()
	total, lines := p.stderr.counts()
	logs := p.stderr.logLines(t)
	var cancelled, unmatched int
	for _, m := range logs {
		msg, _ := m["msg"].(string)
		switch {
		case strings.Contains(msg, "cancelled"):
			cancelled++
		case strings.Contains(msg, "matches no request"):
			unmatched++
		}
	}
	t.Logf("%d messages of each kind: %d bytes, %d lines of stderr (%d about cancellations, %d about unmatched responses)",
		each, total, lines, cancelled, unmatched)
	if total > maxStderr {
		t.Errorf("%d bytes of stderr for %d ignored messages, want at most %d", total, 2*each, maxStderr)
	}
	if cancelled == 0 || unmatched == 0 {
		t.Errorf("the warnings were not logged at all (%d, %d): the first of each kind must be", cancelled, unmatched)
	}
}

// TestLoadHugeToolNameIsClipped: a tool name of 1 MB is echoed clipped, in
// the NOT_FOUND error and in the completion record.
func TestLoadHugeToolNameIsClipped(t *testing.T) {
	t.Parallel()
	const (
		nameBytes = 1_000_000
		maxEcho   = 130
	)
	p := startLoad(t, false)
	p.handshake("2025-06-18")
	p.send(loadCall(1, strings.Repeat("n", nameBytes), `{}`))
	line, n := p.readLine()
	if id, err := responseID(line); err != nil || id != "1" {
		t.Fatalf("answer %s, want id 1", clip(string(line)))
	}
	code, text := toolErrorCode(t, line)
	if code != "NOT_FOUND" {
		t.Fatalf("a 1 MB tool name: %s, want NOT_FOUND: %s", code, clip(text))
	}
	if run := longestRun(text, 'n'); run > maxEcho || n > 4096 {
		t.Errorf("the NOT_FOUND answer (%d bytes) echoes %d bytes of the name, want at most %d", n, run, maxEcho)
	}
	p.ping("2")
	p.finish()
	var found bool
	for _, m := range p.stderr.logLines(t) {
		if s := fmt.Sprint(m); len(s) > 4096 {
			t.Errorf("a stderr line of %d bytes: %s", len(s), clip(s))
		}
		if m["correlationId"] == "load-1" && m["msg"] == "tool call completed" {
			found = true
			if tool, _ := m["tool"].(string); len(tool) > maxEcho {
				t.Errorf("the completion record's tool has %d bytes, want at most %d", len(tool), maxEcho)
			}
		}
	}
	if !found {
		t.Errorf("no completion record for the call")
	}
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := range len(s) {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}
