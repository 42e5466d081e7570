package main

// Hostile inputs to every aacp_* tool: each gets the error the catalogue
// names, the server keeps serving, and nothing is written outside the
// data directory.

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestAACPHostileInputs(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "data")
	a := startAgent(t, dir, "h1", "Manager")
	a.ok(t, "aacp_register_agent", `{"agentId":"peer","type":"Implementation"}`)
	big := strings.Repeat("x", 2<<20)
	// A payload that fits tools.maxPayloadBytes (1 MiB of arguments) but
	// makes an envelope over the 1 MiB message limit.
	nearly := strings.Repeat("y", 1<<20-200)
	longID := strings.Repeat("r", 200)
	ping := `{"n":1}`
	cases := []struct{ tool, args, code string }{
		// aacp_register_agent
		{"aacp_register_agent", `{"type":"Boss"}`, "E_VALIDATION_003"},
		{"aacp_register_agent", `{"agentId":"../x","type":"AdHoc"}`, "E_ROUTING_002"},
		{"aacp_register_agent", `{"agentId":"../../etc/passwd","type":"AdHoc"}`, "E_ROUTING_002"},
		{"aacp_register_agent", `{"agentId":"a\u0000b","type":"AdHoc"}`, "E_ROUTING_002"},
		{"aacp_register_agent", `{"agentId":"a_to_b","type":"AdHoc"}`, "E_ROUTING_002"},
		{"aacp_register_agent", `{"agentId":"/abs","type":"AdHoc"}`, "E_ROUTING_002"},
		{"aacp_register_agent", `{"agentId":"` + strings.Repeat("a", 65) + `","type":"AdHoc"}`, "E_ROUTING_002"},
		{"aacp_register_agent", `{"type":"AdHoc","supportedVersions":["9.0.0"]}`, "E_PROTOCOL_001"},
		{"aacp_register_agent", `{"type":"AdHoc","capabilities":[""]}`, "E_VALIDATION_004"},
		{"aacp_register_agent", `{}`, "INVALID_ARGUMENT"},
		{"aacp_register_agent", `{"type":7}`, "INVALID_ARGUMENT"},
		// aacp_agents
		{"aacp_agents", `{"type":"Boss"}`, "E_VALIDATION_003"},
		{"aacp_agents", `{"agentId":"../x"}`, "E_ROUTING_002"},
		{"aacp_agents", `{"extra":1}`, "INVALID_ARGUMENT"},
		// aacp_send
		{"aacp_send", sendArgsTo("peer", "BOGUS", ping), "E_VALIDATION_003"},
		{"aacp_send", sendArgsTo("peer", "custom_lower", ping), "E_VALIDATION_003"},
		{"aacp_send", sendArgsTo("peer", "ACK", ping), "E_VALIDATION_003"},
		{"aacp_send", sendArgsTo("peer", "TASK_ASSIGNMENT", `{"taskId":"t"}`), "E_VALIDATION_001"},
		{"aacp_send", sendArgsTo("peer", "TASK_UPDATE", `{"taskId":"t","status":"sleeping","progress":0.1}`), "E_VALIDATION_003"},
		{"aacp_send", sendArgsTo("peer", "TASK_UPDATE", `{"taskId":"t","status":"completed","progress":"all"}`), "E_VALIDATION_002"},
		{"aacp_send", sendArgsTo("peer", "CUSTOM_X", `42`), "INVALID_ARGUMENT"}, // payload declares "type":"object",
		{"aacp_send", sendArgsTo("peer", "CUSTOM_X", ping, `"priority":"URGENT"`), "E_VALIDATION_003"},
		{"aacp_send", sendArgsTo("peer", "CUSTOM_X", ping, `"ttlSeconds":-1`), "E_VALIDATION_004"},
		{"aacp_send", sendArgsTo("peer", "CUSTOM_X", ping, `"tags":[""]`), "E_VALIDATION_004"},
		{"aacp_send", sendArgsTo("peer", "CUSTOM_X", ping, `"requestId":"`+longID+`"`), "E_PROTOCOL_003"},
		{"aacp_send", sendArgsTo("peer", "CUSTOM_X", ping, `"correlationId":"`+longID+`"`), "E_PROTOCOL_003"},
		{"aacp_send", sendArgsTo("../x", "CUSTOM_X", ping), "E_ROUTING_002"},
		{"aacp_send", sendArgsTo("..", "CUSTOM_X", ping), "E_ROUTING_002"},
		{"aacp_send", sendArgsTo("x\u0000y", "CUSTOM_X", ping), "E_ROUTING_002"},
		{"aacp_send", sendArgsTo("nobody", "CUSTOM_X", ping), "E_ROUTING_001"},
		{"aacp_send", `{"agentId":"../x",` + sendArgsTo("peer", "CUSTOM_X", ping)[1:], "E_ROUTING_002"},
		{"aacp_send", `{"agentId":"ghost",` + sendArgsTo("peer", "CUSTOM_X", ping)[1:], "E_ROUTING_001"},
		{"aacp_send", `{"receiver":{"agentId":"peer","type":"Manager"},"messageType":"CUSTOM_X","payload":{}}`, "E_ROUTING_002"},
		{"aacp_send", sendArgsTo("peer", "CUSTOM_X", `{"s":"`+nearly+`"}`), "E_VALIDATION_005"},
		{"aacp_send", sendArgsTo("peer", "CUSTOM_X", `{"s":"`+big+`"}`), "RESOURCE_EXHAUSTED"},
		{"aacp_send", `{"receiver":{"agentId":"peer"},"payload":{}}`, "INVALID_ARGUMENT"},
		{"aacp_send", `{"receiver":"peer","messageType":"CUSTOM_X","payload":{}}`, "INVALID_ARGUMENT"},
		// aacp_receive
		{"aacp_receive", `{"waitMs":-1}`, "E_VALIDATION_004"},
		{"aacp_receive", `{"max":-5}`, "E_VALIDATION_004"},
		{"aacp_receive", `{"messageTypes":["nope"]}`, "E_VALIDATION_003"},
		{"aacp_receive", `{"agentId":"ghost"}`, "E_ROUTING_001"},
		{"aacp_receive", `{"agentId":"../../x"}`, "E_ROUTING_002"},
		{"aacp_receive", `{"waitMs":"soon"}`, "INVALID_ARGUMENT"},
		// aacp_ack, aacp_nack
		{"aacp_ack", `{"messageId":"no-such-message","status":"processed"}`, "NOT_FOUND"},
		{"aacp_ack", `{"messageId":"../../etc/passwd","status":"processed"}`, "NOT_FOUND"},
		{"aacp_ack", `{"messageId":"m","status":"done"}`, "E_VALIDATION_003"},
		{"aacp_ack", `{"messageId":"","status":"processed"}`, "E_VALIDATION_001"},
		{"aacp_ack", `{"agentId":"a\u0000","messageId":"m","status":"processed"}`, "E_ROUTING_002"},
		{"aacp_nack", `{"messageId":"m","reason":"","canRetry":false}`, "E_VALIDATION_001"},
		{"aacp_nack", `{"messageId":"m","reason":"r","errorCode":"lower-case","canRetry":false}`, "E_VALIDATION_004"},
		{"aacp_nack", `{"messageId":"no-such-message","reason":"r","canRetry":true}`, "NOT_FOUND"},
		{"aacp_nack", `{"messageId":"m","reason":"r"}`, "INVALID_ARGUMENT"},
		// aacp_status, aacp_dead_letters, aacp_requeue
		{"aacp_status", `{}`, "E_VALIDATION_001"},
		{"aacp_status", `{"requestId":"no-such-request"}`, "NOT_FOUND"},
		{"aacp_status", `{"messageId":"../x"}`, "NOT_FOUND"},
		{"aacp_dead_letters", `{"limit":-1}`, "E_VALIDATION_004"},
		{"aacp_dead_letters", `{"agentId":"../x"}`, "E_ROUTING_002"},
		{"aacp_requeue", `{"messageId":"no-such-message"}`, "NOT_FOUND"},
		{"aacp_requeue", `{"messageId":""}`, "E_VALIDATION_001"},
		{"aacp_requeue", `{}`, "INVALID_ARGUMENT"},
	}
	for _, tc := range cases {
		e := a.fails(t, tc.tool, tc.args, tc.code)
		if len(e.Message) > 2000 || strings.Contains(e.Message, ".go:") {
			t.Errorf("%s %s: message %q is not for people", tc.tool, clip(tc.args), clip(e.Message))
		}
	}

	// Still serving, and the valid call next to the hostile ones works.
	a.ok(t, "server_ping", `{}`)
	// (The session registered peer last: that is its agent; h1 is the
	// process's configured one, which it may act as by name.)
	sent := a.ok(t, "aacp_send", sendArgsTo("peer", "CUSTOM_X", `{"s":"nul\u0000 and ../ in a payload are data"}`, `"agentId":"h1"`))
	got := a.receiveAs(t, "peer")
	if astr(got, "requestId") != sent["requestId"] || astr(got, "payload", "s") != "nul\x00 and ../ in a payload are data" {
		t.Fatalf("received %v", got)
	}
	finishAgent(t, a)

	// Nothing outside the data directory, and inside it only the journal's
	// layout with file names made of valid agent ids.
	if entries, _ := os.ReadDir(base); len(entries) != 1 || entries[0].Name() != "data" {
		t.Fatalf("%s holds %v, want only data/", base, entries)
	}
	// store/ is the domain tools' database, which shares the directory.
	top := []string{"channels", "deadletter", "ledger", "locks", "presence", "registry", "store"}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		first, _, _ := strings.Cut(rel, string(filepath.Separator))
		if !slices.Contains(top, first) || strings.Contains(rel, "..") || strings.ContainsRune(rel, 0) {
			t.Errorf("unexpected file in the data directory: %q", rel)
		}
		if first == "channels" && d.IsDir() && filepath.Dir(rel) == "channels" &&
			!slices.Contains([]string{"h1_to_peer", "peer_to_h1"}, d.Name()) {
			t.Errorf("unexpected channel %q", d.Name())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
