package main

// Damaged journals through the binary: lines a person (or a broken tool)
// wrote into a channel — invalid UTF-8, a seq of 2^64-1, a repeated seq —
// are quarantined and reported; the good messages around them are
// delivered, and the numbering goes on.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// damagedLine is line (a stored channel line) with seq and messageId
// replaced and, when badByte, one invalid UTF-8 byte in its payload.
func damagedLine(t *testing.T, line []byte, seq, messageID string, badByte bool) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("not a channel line: %s", line)
	}
	m["messageId"] = json.RawMessage(`"` + messageID + `"`)
	delete(m, "seq")
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	// Seq first, as the journal writes it.
	out := append([]byte(`{"seq":`+seq+`,`), bytes.TrimPrefix(b, []byte("{"))...)
	if badByte {
		out = bytes.Replace(out, []byte(`"n":1`), []byte("\"n\":1,\"x\":\"\xff\""), 1)
	}
	return append(out, '\n')
}

func TestDamagedJournalQuarantined(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "aacp")
	rcv := startAgent(t, dir, "rcv", "Implementation")
	rcv.receive(t, `{"waitMs":0}`) // registers rcv
	snd := startAgent(t, dir, "snd", "Manager")
	snd.ok(t, "aacp_send", sendArgsTo("rcv", "CUSTOM_PING", `{"n":1}`))
	if m := rcv.receiveOne(t); anum(m, "payload", "n") != 1 {
		t.Fatalf("first message: %v", m)
	}
	path := filepath.Join(dir, "channels", "snd_to_rcv", "messages.ndjson")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first := bytes.SplitN(data, []byte("\n"), 2)[0]
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range [][]byte{
		damagedLine(t, first, "2", "bad-utf8", true),
		damagedLine(t, first, "18446744073709551615", "seq-max", false),
		damagedLine(t, first, "1", "seq-repeated", false),
	} {
		if _, err := f.Write(l); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()

	// The next messages are numbered on and delivered.
	for n := 2; n <= 3; n++ {
		snd.ok(t, "aacp_send", sendArgsTo("rcv", "CUSTOM_PING", fmt.Sprintf(`{"n":%d}`, n)))
		m := rcv.receiveOne(t)
		if anum(m, "payload", "n") != float64(n) {
			t.Fatalf("after the damaged lines, message %d: got %v", n, m)
		}
	}

	out, errOut, code := runOperator(t, []string{"MCPRT_AACP_DATA_DIR=" + dir}, "quarantine", "--json")
	if code != 0 {
		t.Fatalf("mcprt aacp quarantine: exit %d: %s", code, errOut)
	}
	var q struct {
		Lines []struct {
			Channel, Reason string
			Seq             uint64
		}
	}
	if err := json.Unmarshal([]byte(out), &q); err != nil {
		t.Fatalf("mcprt aacp quarantine --json: %v: %s", err, out)
	}
	var reasons []string
	for _, l := range q.Lines {
		if l.Channel != "snd_to_rcv" {
			t.Errorf("quarantined line of channel %q", l.Channel)
		}
		reasons = append(reasons, l.Reason)
	}
	joined := strings.Join(reasons, " | ")
	if len(q.Lines) != 3 || !strings.Contains(joined, "UTF-8") || !strings.Contains(joined, "18446744073709551615") || !strings.Contains(joined, "repeated") {
		t.Fatalf("quarantine: %d lines: %s", len(q.Lines), joined)
	}
	if out, _, _ := runOperator(t, []string{"MCPRT_AACP_DATA_DIR=" + dir}, "quarantine"); !strings.Contains(out, "3 quarantined line(s)") {
		t.Errorf("mcprt aacp quarantine: %s", out)
	}
	// health reports them too, in every process that shares the directory.
	for _, p := range []*aproc{rcv, snd} {
		h := p.ok(t, "health", `{}`)
		m, _ := h["messaging"].(map[string]any)
		if m["backend"] != "files" || m["quarantinedLines"] != float64(3) || m["lastQuarantined"] == nil {
			t.Errorf("health's messaging report: %v, want backend files and 3 quarantined lines", h["messaging"])
		}
	}
}
