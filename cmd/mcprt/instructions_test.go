package main

// Messages that reach the model: initialize's default instructions and the
// check_inbox prompt.

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestInitializeHasDefaultInstructions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  []string
		want []string
		not  []string
	}{
		{"no agent id configured", nil,
			[]string{"no agent id yet", "aacp_register_agent", "start of every task and after finishing one", "aacp_receive", "aacp_ack"},
			[]string{"You are agent"}},
		{"agent id configured", []string{"MCPRT_AACP_AGENT_ID=worker-1"},
			[]string{`You are agent "worker-1"`, "start of every task and after finishing one", "aacp_receive", "TASK_UPDATE"},
			[]string{"no agent id yet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := start(t, append([]string{"MCPRT_AACP_DATA_DIR=" + t.TempDir()}, tc.env...)...)
			res := initialize(t, p, "1", latestRevision)
			text, _ := res["instructions"].(string)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("instructions lack %q:\n%s", w, text)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(text, n) {
					t.Errorf("instructions say %q:\n%s", n, text)
				}
			}
			if lines := strings.Count(text, "\n") + 1; lines > 8 || len(text) > 1200 {
				t.Errorf("instructions are %d lines, %d bytes: keep them to a few lines", lines, len(text))
			}
			finish(t, p)
		})
	}
}

func TestCheckInboxPrompt(t *testing.T) {
	t.Parallel()
	c := newToolClient(t, "MCPRT_AACP_DATA_DIR="+t.TempDir(), "MCPRT_AACP_AGENT_ID=worker-2")
	id := c.newID()
	c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"prompts/list"}`)
	if line := c.await(id); !strings.Contains(line, `"check_inbox"`) {
		t.Fatalf("prompts/list does not list check_inbox: %s", clip(line))
	}
	id = c.newID()
	c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"prompts/get","params":{"name":"check_inbox"}}`)
	var got struct {
		Result struct {
			Messages []struct {
				Role    string `json:"role"`
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"messages"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(c.await(id)), &got); err != nil || len(got.Result.Messages) != 1 {
		t.Fatalf("prompts/get check_inbox: %v %+v", err, got)
	}
	m := got.Result.Messages[0]
	for _, w := range []string{"aacp_receive", `agent "worker-2"`, "aacp_ack", "TASK_UPDATE"} {
		if m.Role != "user" || !strings.Contains(m.Content.Text, w) {
			t.Errorf("check_inbox message (%s) lacks %q: %s", m.Role, w, m.Content.Text)
		}
	}
}
