package main

// The messaging defects a new user hit, through the binary: a payload's
// missing fields are named and said to be missing; every object argument
// declares "type":"object"; inbox completion offers only inboxes this
// process can read; a broadcast that reaches no one says so in agent ids.
// (READONLY's aacp_peek instead of aacp_receive: modes_test.go.)

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestAACPDefectsOfANewUser(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "shared")
	a := startAgent(t, dir, "alpha", "Manager")
	peer := startAgent(t, dir, "peer", "Implementation")
	a.ok(t, "aacp_register_agent", `{"type":"Manager"}`)

	// A broadcast with no one else registered: said in agent ids.
	e := a.fails(t, "aacp_send", sendArgsTo("*", "CUSTOM_PING", `{}`), "E_ROUTING_001")
	if !strings.Contains(e.Message, `agentId "*"`) || !strings.Contains(e.Message, `no agent other than the sender "alpha"`) ||
		!strings.Contains(e.Message, "alpha") {
		t.Errorf("empty broadcast: %q, want it to say no agent but alpha is registered", e.Message)
	}
	peer.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)

	// Missing payload fields: named, and said to be missing.
	e = a.fails(t, "aacp_send", sendArgsTo("peer", "TASK_ASSIGNMENT", `{"taskId":"t1"}`), "E_VALIDATION_001")
	all := e.Message + " " + string(mustJSON(t, e.Details))
	for _, field := range []string{"taskRef", "taskDescription", "memoryLogPath", "executionType"} {
		if !strings.Contains(all, "/payload/"+field) && !strings.Contains(all, `"`+field+`" is missing`) {
			t.Errorf("missing %s is not named: %s", field, all)
		}
	}
	if strings.Count(all, "is missing") != 4 {
		t.Errorf("want each of the 4 missing fields said to be missing: %s", all)
	}
	if strings.Contains(all, "<nil>") || strings.Contains(all, "is null") {
		t.Errorf("missing fields reported as <nil> or null: %s", all)
	}
	if e = a.fails(t, "aacp_send", `{"receiver":{"agentId":"peer"},"messageType":"CUSTOM_PING"}`, "INVALID_ARGUMENT"); !strings.Contains(e.Message, "'payload' is missing") {
		t.Errorf("no payload: %q", e.Message)
	}

	// Every object argument says so.
	var list struct {
		Result struct {
			Tools []struct {
				Name        string         `json:"name"`
				InputSchema map[string]any `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	a.p.Send(`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`)
	if err := json.Unmarshal([]byte(a.p.Expect(t)), &list); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tl := range list.Result.Tools {
		if !strings.HasPrefix(tl.Name, "aacp_") {
			continue
		}
		n++
		props, _ := tl.InputSchema["properties"].(map[string]any)
		for k, p := range props {
			if _, ok := p.(map[string]any)["type"]; !ok {
				t.Errorf("%s.%s declares no type", tl.Name, k)
			}
		}
		if tl.Name == "aacp_send" && astr(props["payload"], "type") != "object" {
			t.Errorf("aacp_send.payload: %v, want type object", props["payload"])
		}
	}
	if n == 0 {
		t.Fatal("no aacp tool listed")
	}

	// Completion offers alpha (hosted here), never peer (hosted by the
	// other process, whose inbox this one cannot read).
	a.p.Send(`{"jsonrpc":"2.0","id":"c","method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"aacp://inbox/{agentId}"},"argument":{"name":"agentId","value":""}}}`)
	var comp struct {
		Result struct {
			Completion struct {
				Values []string `json:"values"`
			} `json:"completion"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(a.p.Expect(t)), &comp); err != nil {
		t.Fatal(err)
	}
	if v := comp.Result.Completion.Values; len(v) != 1 || v[0] != "alpha" {
		t.Errorf("inbox completion %v, want [alpha]", v)
	}
	finishAgent(t, a)
	finishAgent(t, peer)
}
