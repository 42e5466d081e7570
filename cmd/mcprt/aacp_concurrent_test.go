package main

// Four mcprt processes sending to each other at once through one data
// directory: every message is delivered exactly once, and each channel's
// messages arrive in the order they were sent.

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestAACPFourProcessesConcurrently(t *testing.T) {
	t.Parallel()
	const procs = 4
	total := envInt("MCPRT_AACP_STRESS_SENDS", 200) // per process; 5000 for the long run
	perPeer := (total + procs - 2) / (procs - 1)
	dir := filepath.Join(t.TempDir(), "shared")
	var ps [procs]*aproc
	for i := range ps {
		ps[i] = startAgent(t, dir, fmt.Sprintf("agent_%d", i), "AdHoc", "MCPRT_AACP_FSYNC=batch")
		ps[i].ok(t, "aacp_register_agent", `{"type":"AdHoc"}`) // every agent exists before anyone sends
	}
	// got[i][j]: the n of each message agent_i received from agent_j, in
	// arrival order.
	var got [procs][procs][]int
	var sent, received [procs]int
	want := perPeer * (procs - 1)
	// Each round, every process gets its calls before any answer is
	// awaited, so the four work at the same time: one send per peer (each
	// channel's sends stay sequential) and a receive; then the ACKs of
	// what was received.
	for round, stalls := 0, 0; ; round++ {
		done := true
		for i := range procs {
			done = done && sent[i] == perPeer && received[i] == want
		}
		if done {
			break
		}
		if stalls > 10 {
			out, _, _ := runOperator(t, []string{"MCPRT_AACP_DATA_DIR=" + dir}, "agents")
			t.Fatalf("no progress in 10 rounds (round %d): sent %v/peer, received %v of %d each\n%s", round, sent, received, want, out)
		}
		var sends [procs][]string
		var recvs [procs]string
		for i, a := range ps {
			if sent[i] < perPeer {
				for j := range procs {
					if j != i {
						sends[i] = append(sends[i], a.send("aacp_send", sendArgsTo(fmt.Sprintf("agent_%d", j), "CUSTOM_SEQ", `{"n":`+strconv.Itoa(sent[i])+`}`)))
					}
				}
				sent[i]++
			}
			wait := "0"
			if sent[i] == perPeer {
				wait = "500"
			}
			recvs[i] = a.send("aacp_receive", `{"waitMs":`+wait+`,"max":32}`)
		}
		var acks [procs][]string
		progress := false
		for i, a := range ps {
			for _, id := range sends[i] {
				if _, e := a.await(t, id); e != nil {
					t.Fatalf("agent_%d send: %s %s", i, e.Code, e.Message)
				}
				progress = true
			}
			v, e := a.await(t, recvs[i])
			if e != nil {
				t.Fatalf("agent_%d receive: %s %s", i, e.Code, e.Message)
			}
			for _, x := range v["messages"].([]any) {
				m := x.(map[string]any)
				if m["redelivered"] == true {
					t.Fatalf("agent_%d: %v redelivered; nothing should be retried here", i, m["requestId"])
				}
				from, err := strconv.Atoi(strings.TrimPrefix(astr(m, "sender", "agentId"), "agent_"))
				if err != nil || from == i || from >= procs {
					t.Fatalf("agent_%d: a message from %q: %v", i, astr(m, "sender", "agentId"), m)
				}
				got[i][from] = append(got[i][from], int(anum(m, "payload", "n")))
				received[i]++
				progress = true
				acks[i] = append(acks[i], a.send("aacp_ack", `{"messageId":`+jsonString(astr(m, "messageId"))+`,"status":"processed"}`))
			}
		}
		for i, a := range ps {
			for _, id := range acks[i] {
				if _, e := a.await(t, id); e != nil {
					t.Fatalf("agent_%d ack: %s %s", i, e.Code, e.Message)
				}
			}
		}
		if progress {
			stalls = 0
		} else {
			stalls++
		}
	}
	for i := range procs {
		for j := range procs {
			if i == j {
				continue
			}
			seq := got[i][j]
			if len(seq) != perPeer {
				t.Errorf("agent_%d got %d messages from agent_%d, want %d", i, len(seq), j, perPeer)
			}
			for k, n := range seq {
				if n != k {
					t.Fatalf("agent_%d's messages from agent_%d arrived as %v…; want 0, 1, 2, … once each, in order", i, j, seq[:min(len(seq), k+5)])
				}
			}
		}
	}
	for _, p := range ps {
		finishAgent(t, p)
	}
}
