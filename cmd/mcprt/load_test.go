package main

// The load group: each test reproduces, through the real binary, a way a
// client could once make the server use memory, time or output without
// bound, and asserts the bound. Run them with
//
//	go test -race -run 'TestLoad' ./cmd/mcprt/
//
// The assertions are structural where they can be (how much input the
// server consumed while its output was stalled, how many calls had
// completed before the first answer left, the length of a line) and
// otherwise peak memory under a ceiling several times what the server
// needs and far below what the unbounded behaviour took. Timeouts
// (loadGuard) only end a hung test. MCPRT_LOAD_BIN runs the group against
// another build of mcprt.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// stallWindow is how long a write to the server's stdin must make no
// progress at all for the test to take the server as no longer reading.
// Only a stall can be observed this way, so a slow server makes the test
// pass, never fail, at this point; the bounds checked afterwards decide.
const stallWindow = 250 * time.Millisecond

// TestLoadStalledStdoutStopsReading: a client that sends requests without
// reading stdout makes the server stop reading stdin once its output
// budget and in-flight bound are used, instead of buffering answers
// without bound (before: a 1 MB result then 1,000,000 pings grew the
// server to 116.7 MB, linearly). Once the client reads again every answer
// arrives, exactly once.
func TestLoadStalledStdoutStopsReading(t *testing.T) {
	t.Parallel()
	const (
		pings = 200_000
		// What the server may consume while stalled: its in-flight bound
		// (1024), the answers that fit in the stdout pipe (64 KiB / 36
		// bytes) and its read buffer; 20,000 pings are 800 KB.
		maxConsumed = 20_000
		ceilingMB   = 60.0 // measured 18-19 MB
	)
	p := startLoad(t, false)
	p.handshake("2025-06-18")
	p.send(loadCall(1, "big_result", `{"bytes":1000000}`))
	var all bytes.Buffer
	for i := range pings {
		fmt.Fprintf(&all, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", 100+i)
	}
	fmt.Fprintf(&all, `{"jsonrpc":"2.0","id":"last","method":"ping"}`+"\n")
	data := all.Bytes()
	lineLen := len(data) / (pings + 1)

	// Write without reading stdout until the server stops reading.
	written := 0
	began := time.Now()
	for {
		if written == len(data) {
			t.Fatalf("the server read all %d pings (%d bytes) while nobody read its stdout", pings, len(data))
		}
		if time.Since(began) > loadGuard {
			t.Fatalf("the server kept reading for %v while nobody read its stdout (%d bytes)", loadGuard, written)
		}
		if err := p.in.SetWriteDeadline(time.Now().Add(stallWindow)); err != nil {
			t.Fatal(err)
		}
		n, err := p.in.Write(data[written:min(len(data), written+64<<10)])
		written += n
		if errors.Is(err, os.ErrDeadlineExceeded) && n == 0 {
			break // a whole window without the server reading a page
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal(err)
		}
	}
	if err := p.in.SetWriteDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	// Everything written may have been read, less what the stdin pipe
	// holds; the bound holds for all of it.
	consumed := written / lineLen
	stalledMB := p.procStatus("VmHWM")
	t.Logf("stalled after the client wrote %d pings (%d bytes); server peak %.1f MB", consumed, written, stalledMB)
	if consumed > maxConsumed {
		t.Errorf("the server consumed up to %d pings while its stdout was not read, want at most %d", consumed, maxConsumed)
	}
	if stalledMB > ceilingMB {
		t.Errorf("server peak %.1f MB while its stdout was stalled, ceiling %.0f MB", stalledMB, ceilingMB)
	}

	// Resume: the rest goes in while the client reads everything.
	go p.write(data[written:])
	pinged := make([]bool, pings)
	var gotBig, gotLast bool
	for range pings + 2 {
		line, n := p.readLine()
		id, err := responseID(line)
		if err != nil {
			t.Fatal(err)
		}
		switch id {
		case "1":
			if gotBig || n < 1_000_000 {
				t.Fatalf("big_result answered twice or short (%d bytes)", n)
			}
			gotBig = true
		case `"last"`:
			gotLast = true
		default:
			i, err := strconv.Atoi(id)
			if err != nil || i < 100 || i >= 100+pings || pinged[i-100] {
				t.Fatalf("unexpected or repeated answer: %s", clip(string(line)))
			}
			if string(line) != `{"jsonrpc":"2.0","id":`+id+`,"result":{}}` {
				t.Fatalf("ping answer %s", clip(string(line)))
			}
			pinged[i-100] = true
		}
	}
	if !gotBig || !gotLast {
		t.Fatalf("big_result answered: %v; the last ping answered: %v", gotBig, gotLast)
	}
	peak := p.finish()
	t.Logf("server peak over the whole test %.1f MB", peak)
	if peak > ceilingMB {
		t.Errorf("server peak %.1f MB, ceiling %.0f MB", peak, ceilingMB)
	}
}

// TestLoadCorkIsBounded: responses made while more input is buffered are
// gathered (corked) only up to a small bound. Before, 300 big_result calls
// of 1 MB sent in one write were all computed and held before the first
// answer left (after 17.3 s, at 1.19 GB). Here: how many calls had
// completed (had their record) when the first answer began to arrive, and
// the peak memory.
func TestLoadCorkIsBounded(t *testing.T) {
	t.Parallel()
	const (
		calls     = 100
		ceilingMB = 150.0 // measured 36-48 MB; before: 390 MB (4 MB per call held)
	)
	p := startLoad(t, false, "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=1000")
	p.handshake("2025-06-18")
	var b strings.Builder
	for i := 1; i <= calls; i++ {
		b.WriteString(loadCall(i, "big_result", `{"bytes":1000000}`) + "\n")
	}
	p.write([]byte(b.String())) // one write: all of it is buffered input
	p.peekByte()
	before := p.stderr.countMsg("tool call completed")
	t.Logf("%d of %d calls had completed when the first answer arrived", before, calls)
	if before > calls/4 {
		t.Errorf("%d of %d calls had completed before the first answer arrived: answers were held back", before, calls)
	}
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
		if n < 1_000_000 {
			t.Fatalf("answer %d has %d bytes, want the 1 MB result: %s", i, n, clip(string(line)))
		}
		seen[i] = true
	}
	p.ping(`"after"`)
	peak := p.finish()
	t.Logf("server peak %.1f MB", peak)
	if peak > ceilingMB {
		t.Errorf("server peak %.1f MB, ceiling %.0f MB", peak, ceilingMB)
	}
	checkRecordsMatch(t, p, seen[1:], 1)
}

// checkRecordsMatch checks that the completion record of call i (its
// correlationId load-<first+i>) says success exactly when answered[i]:
// one record per call.
func checkRecordsMatch(t *testing.T, p *loadProc, answered []bool, first int) {
	t.Helper()
	outcomes := map[string]string{}
	for _, r := range completionRecords(p.stderr.logLines(t)) {
		cid, _ := r["correlationId"].(string)
		if _, dup := outcomes[cid]; dup {
			t.Errorf("two completion records for %s", cid)
		}
		outcomes[cid], _ = r["outcome"].(string)
	}
	for i, ok := range answered {
		cid := "load-" + strconv.Itoa(first+i)
		got, has := outcomes[cid]
		switch {
		case !has:
			t.Errorf("no completion record for %s", cid)
		case ok && got != "success" && got != "tool_error":
			t.Errorf("%s was answered, but its record says %s", cid, got)
		case !ok && (got == "success" || got == "tool_error"):
			t.Errorf("%s got no answer, but its record says %s", cid, got)
		}
	}
}

// TestLoadUnreadStderr: a client that never reads stderr must not hang the
// server. Before, with stderr a pipe nobody read, 20,000 pipelined noop
// calls stopped being answered at 1,901, and ping and health went
// unanswered. The log writer drops what does not fit and says how much.
func TestLoadUnreadStderr(t *testing.T) {
	t.Parallel()
	const calls = 8000 // about 3 MB of records: far more than the pipe and the log buffer hold
	p := startLoad(t, true, "MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=1000")
	p.handshake("2025-06-18")
	var b strings.Builder
	for i := 1; i <= calls; i++ {
		b.WriteString(loadCall(i, "noop", `{}`) + "\n")
	}
	go p.write([]byte(b.String()))
	seen := make([]bool, calls+1)
	for range calls {
		line, _ := p.readLine()
		id, err := responseID(line)
		if err != nil {
			t.Fatal(err)
		}
		i, err := strconv.Atoi(id)
		if err != nil || i < 1 || i > calls || seen[i] {
			t.Fatalf("unexpected or repeated answer: %s", clip(string(line)))
		}
		seen[i] = true
	}
	// Still serving, with stderr unread all along.
	p.ping(`"ping"`)
	p.send(loadCall(calls+1, "health", `{}`))
	line, _ := p.readLine()
	if id, err := responseID(line); err != nil || id != strconv.Itoa(calls+1) || !bytes.Contains(line, []byte(`status`)) {
		t.Fatalf("health answer %s", clip(string(line)))
	}
	if total, _ := p.stderr.counts(); total != 0 {
		t.Fatalf("the test read %d bytes of stderr too early", total)
	}
	p.finish()                    // reads stderr from here on
	lines := p.stderr.logLines(t) // every line whole JSON: nothing cut in half
	var dropped float64
	for _, m := range lines {
		if m["msg"] == "log entries dropped while stderr was not being read" {
			if m["level"] != "WARN" {
				t.Errorf("drop summary at level %v: %v", m["level"], m)
			}
			n, _ := m["dropped"].(json.Number)
			f, err := n.Float64()
			if err != nil {
				t.Errorf("drop summary without a count: %v", m)
			}
			dropped += f
		}
	}
	records := len(completionRecords(lines))
	t.Logf("%d completion records written, %.0f entries dropped and counted", records, dropped)
	if dropped == 0 {
		t.Errorf("no drop summary on stderr, with %d of %d records written", records, calls+1)
	}
	if float64(records)+dropped < calls+1 {
		t.Errorf("%d records written and %.0f entries counted as dropped: fewer than the %d calls", records, dropped, calls+1)
	}
}

// TestLoadBatchAnswerIsBounded: under 2025-03-26 the answer to one batch
// is bounded (16 MiB); elements whose answers would pass the bound get a
// short error instead. Before, a 1 MB batch of tools/list was answered
// with one line of 122.5 MB.
func TestLoadBatchAnswerIsBounded(t *testing.T) {
	t.Parallel()
	const (
		elems     = 5000 // 250 KB of requests, 30 MB of answers unbounded
		bound     = 16 << 20
		maxLine   = 20 << 20 // the bound plus the short errors
		ceilingMB = 150.0    // measured 70-83 MB
	)
	p := startLoad(t, false)
	p.handshake("2025-03-26")
	var b strings.Builder
	b.WriteByte('[')
	for i := range elems {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i)
	}
	b.WriteString("]\n")
	p.write([]byte(b.String()))
	line, n := p.readLine()
	t.Logf("a batch of %d bytes was answered with %d bytes", b.Len(), n)
	if n > maxLine {
		t.Fatalf("the batch's answer is %d bytes, want at most %d", n, maxLine)
	}
	var results, errs, resultBytes int
	seen := make([]bool, elems)
	var elements []json.RawMessage
	if err := json.Unmarshal(line, &elements); err != nil {
		t.Fatalf("the batch's answer is not a JSON array: %v", err)
	}
	for _, el := range elements {
		id, err := responseID(el)
		if err != nil {
			t.Fatal(err)
		}
		i, err := strconv.Atoi(id)
		if err != nil || i < 0 || i >= elems || seen[i] {
			t.Fatalf("unexpected or repeated element: %s", clip(string(el)))
		}
		seen[i] = true
		if bytes.Contains(el[:min(len(el), 64)], []byte(`"result":`)) {
			results++
			resultBytes += len(el) + 1
		} else {
			checkError(t, string(el), id, -32603)
			errs++
		}
	}
	t.Logf("%d results (%d bytes), %d errors", results, resultBytes, errs)
	if results+errs != elems || results == 0 || resultBytes > bound {
		t.Errorf("%d results of %d bytes and %d errors for %d elements, want every element answered and at most %d bytes of results",
			results, resultBytes, errs, elems, bound)
	}
	p.ping("1")
	if peak := p.finish(); peak > ceilingMB {
		t.Errorf("server peak %.1f MB, ceiling %.0f MB", peak, ceilingMB)
	} else {
		t.Logf("server peak %.1f MB", peak)
	}
}
