package main

// A writer process killed with SIGKILL at a random moment while it sends:
// every send whose result came back is delivered exactly once, the
// channel's numbering stays dense, and the writer's journal reopens
// cleanly when the agent is started again.

import (
	"bufio"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// envInt reads a positive integer from the environment, or def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func TestAACPWriterKilledDuringSends(t *testing.T) {
	t.Parallel()
	n := envInt("MCPRT_AACP_CRASH_SENDS", 1000) // 10000 for the long run
	dir := filepath.Join(t.TempDir(), "shared")
	reader := startAgent(t, dir, "reader", "Implementation")
	reader.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)

	// The writer runs outside wiretest: its stdout ends abruptly.
	cmd := exec.Command(wiretest.Build(t))
	cmd.Env = wiretest.CleanEnv(aacpEnv(dir, "writer", "Manager")...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	out := make(chan string, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			out <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	write := func(line string) bool {
		_, err := io.WriteString(stdin, line+"\n")
		return err == nil
	}
	read := func() (string, bool) {
		select {
		case line, ok := <-out:
			return line, ok
		case <-time.After(wiretest.ExpectTimeout):
			t.Fatalf("the writer answered nothing for %v", wiretest.ExpectTimeout)
			return "", false
		}
	}
	write(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	write(toolsCallLine(`"reg"`, "aacp_register_agent", `{"type":"Manager"}`, ""))
	for range 2 {
		if _, ok := read(); !ok {
			t.Fatal("the writer ended during the handshake")
		}
	}

	// Sends with request ids req-0, req-1, …, 16 in flight; the writer is
	// killed once killAt of them have returned.
	killAt := n/10 + rand.IntN(n*8/10)
	const window = 16
	returned := map[string]bool{}
	next, inFlight := 0, 0
	killed := false
	for !killed && (next < n || inFlight > 0) {
		for inFlight < window && next < n {
			args := sendArgsTo("reader", "CUSTOM_SEQ", `{"n":`+strconv.Itoa(next)+`}`, `"requestId":"req-`+strconv.Itoa(next)+`"`)
			write(toolsCallLine(strconv.Itoa(next), "aacp_send", args, ""))
			next++
			inFlight++
		}
		line, ok := read()
		if !ok {
			t.Fatal("the writer died before it was killed")
		}
		inFlight--
		var resp struct {
			ID     int
			Result struct {
				IsError    bool           `json:"isError"`
				Structured map[string]any `json:"structuredContent"`
			}
		}
		if err := json.Unmarshal([]byte(line), &resp); err != nil || resp.Result.IsError {
			t.Fatalf("send failed: %s", clip(line))
		}
		returned[astr(resp.Result.Structured, "requestId")] = true
		if len(returned) == killAt {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	_ = cmd.Wait()
	t.Logf("killed the writer after %d of %d sends returned (%d sent)", len(returned), n, next)

	// The agent comes back on the same journal: its unanswered sends
	// are resumed, and each returned one is known to it.
	writer := startAgent(t, dir, "writer", "Manager")
	reg := writer.ok(t, "aacp_register_agent", `{"type":"Manager"}`)
	if int(anum(reg, "pendingOutbound")) < len(returned) {
		t.Fatalf("the restarted writer resumes %v sends, want at least the %d that returned", reg["pendingOutbound"], len(returned))
	}
	writer.ok(t, "aacp_status", `{"requestId":"req-0"}`)

	// The reader gets every returned send exactly once, in channel order.
	handed := map[string]int{}
	var lastSeq float64
	deadline := time.Now().Add(60 * time.Second)
	for missing := len(returned); missing > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d returned sends never arrived", missing)
		}
		msgs := reader.receive(t, `{"waitMs":2000,"max":32}`) // 32 acks in flight fit the 64 slots
		var acks []string
		for _, m := range msgs {
			rid := astr(m, "requestId")
			if m["redelivered"] != true {
				handed[rid]++
				if returned[rid] && handed[rid] == 1 {
					missing--
				}
			}
			if seq := anum(m, "seq"); seq <= lastSeq && m["redelivered"] != true {
				t.Fatalf("seq %v after %v: out of channel order", seq, lastSeq)
			} else {
				lastSeq = seq
			}
			acks = append(acks, reader.send("aacp_ack", `{"messageId":`+jsonString(astr(m, "messageId"))+`,"status":"processed"}`))
		}
		for _, id := range acks {
			if _, e := reader.await(t, id); e != nil {
				t.Fatalf("ack: %s %s", e.Code, e.Message)
			}
		}
	}
	for rid, k := range handed {
		if k != 1 {
			t.Errorf("request %s handed out %d times", rid, k)
		}
	}
	// Dense numbering: the channel holds seq 1..last without a gap.
	chOut, _, code := runOperator(t, []string{"MCPRT_AACP_DATA_DIR=" + dir}, "--json", "channel", "writer", "reader")
	var ch struct{ Messages []struct{ Seq uint64 } }
	if err := json.Unmarshal([]byte(chOut), &ch); err != nil || code != 0 {
		t.Fatalf("mcprt aacp channel: exit %d, %v", code, err)
	}
	for i, m := range ch.Messages {
		if m.Seq != uint64(i+1) {
			t.Fatalf("channel entry %d has seq %d: the numbering has a gap", i, m.Seq)
		}
	}
	if len(ch.Messages) < len(returned) {
		t.Fatalf("the channel holds %d messages, fewer than the %d sends that returned", len(ch.Messages), len(returned))
	}
	finishAgent(t, writer)
	finishAgent(t, reader)
}
