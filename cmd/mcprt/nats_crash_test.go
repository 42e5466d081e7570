package main

// An mcprt client of the hub killed with SIGKILL while it sends: every
// send whose result came back is delivered, none is handed out twice,
// and the agent comes back on another process once its claim expired.

import (
	"bufio"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

func TestNATSClientKilledDuringSends(t *testing.T) {
	t.Parallel()
	const n = 300
	h := newHub(t)
	reader := startAgent(t, filepath.Join(t.TempDir(), "r"), "reader", "Implementation", h.clientEnv()...)
	reader.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)

	writerDir := filepath.Join(t.TempDir(), "w")
	cmd := exec.Command(wiretest.Build(t))
	cmd.Env = wiretest.CleanEnv(aacpEnv(writerDir, "writer", "Manager", h.clientEnv()...)...)
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
	write := func(line string) { _, _ = io.WriteString(stdin, line+"\n") }
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
	killAt := n/10 + rand.IntN(n*8/10)
	const window = 16
	returned := map[string]bool{}
	next, inFlight := 0, 0
	for len(returned) < killAt {
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
			Result struct {
				IsError    bool           `json:"isError"`
				Structured map[string]any `json:"structuredContent"`
			}
		}
		if err := json.Unmarshal([]byte(line), &resp); err != nil || resp.Result.IsError {
			t.Fatalf("send failed: %s", clip(line))
		}
		returned[astr(resp.Result.Structured, "requestId")] = true
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	t.Logf("killed the writer after %d of %d sends returned (%d sent)", len(returned), n, next)

	// The agent comes back in another process once the dead one's claim
	// expired (nats.claimTtlMs = 1 s here).
	writer := startAgent(t, writerDir, "writer", "Manager", h.clientEnv()...)
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, e := writer.await(t, writer.send("aacp_register_agent", `{"type":"Manager"}`))
		if e == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writer could not take its agent back: %s %s", e.Code, e.Message)
		}
		reader.receive(t, `{"waitMs":200,"messageTypes":["CUSTOM_NEVER_SENT"]}`) // a bounded wait on the hub
	}

	handed := map[string]int{}
	lastSeq := 0.0
	deadline = time.Now().Add(60 * time.Second)
	for missing := len(returned); missing > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d returned sends never arrived", missing)
		}
		msgs := reader.receive(t, `{"waitMs":2000,"max":32}`)
		var acks []string
		for _, m := range msgs {
			rid := astr(m, "requestId")
			if m["redelivered"] != true {
				handed[rid]++
				if returned[rid] && handed[rid] == 1 {
					missing--
				}
				if seq := anum(m, "seq"); seq <= lastSeq {
					t.Fatalf("seq %v after %v: out of channel order", seq, lastSeq)
				} else {
					lastSeq = seq
				}
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
}
