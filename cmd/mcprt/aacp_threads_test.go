package main

// Threads, subjects and search through two binaries sharing a data
// directory: a message one process sends is found at once by the other's
// aacp_search; aacp_reply answers in the thread; aacp_thread shows the
// thread in order with each message's state; `mcprt aacp reindex`
// rebuilds the index from the journal to the same thread.

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestAACPThreadsAndSearch(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "shared")
	a := startAgent(t, dir, "alpha", "Manager")
	b := startAgent(t, dir, "beta", "Implementation")
	a.ok(t, "aacp_register_agent", `{"type":"Manager"}`)
	b.ok(t, "aacp_register_agent", `{"type":"Implementation"}`)

	sent := a.ok(t, "aacp_send", sendArgsTo("beta", "CUSTOM_BUG", `{"text":"the lexer panics on tabs"}`,
		`"subject":"parser crash"`, `"threadId":"bug-42"`))
	hits := b.ok(t, "aacp_search", `{"query":"lexer tabs"}`)["hits"].([]any)
	if len(hits) != 1 || astr(hits[0], "messageId") != astr(sent, "messageId") || astr(hits[0], "threadId") != "bug-42" ||
		astr(hits[0], "subject") != "parser crash" || !strings.Contains(astr(hits[0], "snippet"), "[lexer]") {
		t.Fatalf("search from the other process: %v", hits)
	}
	if hits := b.ok(t, "aacp_search", `{"query":"lexer","agentId":"gamma"}`)["hits"].([]any); len(hits) != 0 {
		t.Fatalf("search narrowed to another agent found %v", hits)
	}
	b.fails(t, "aacp_search", `{"query":"  "}`, "INVALID_ARGUMENT")

	view := func(p *aproc, v string) []any {
		t.Helper()
		return p.ok(t, "aacp_view", `{"view":"`+v+`"}`)["messages"].([]any)
	}
	if u, w := view(b, "unread"), view(a, "awaiting_their_ack"); len(u) != 1 || len(w) != 1 || astr(u[0], "messageId") != astr(sent, "messageId") {
		t.Fatalf("before taking: beta unread %v, alpha awaiting their ack %v", u, w)
	}
	m := b.receiveOne(t)
	if u, w := view(b, "unread"), view(b, "awaiting_my_ack"); len(u) != 0 || len(w) != 1 {
		t.Fatalf("after taking: beta unread %v, awaiting my ack %v", u, w)
	}
	b.fails(t, "aacp_view", `{"view":"everything"}`, "INVALID_ARGUMENT")
	reply := b.ok(t, "aacp_reply", `{"messageId":`+jsonString(astr(m, "messageId"))+`,"text":"fixed in abc123"}`)
	if astr(reply, "deliveries") == "" && len(reply["deliveries"].([]any)) != 1 {
		t.Fatalf("reply %v", reply)
	}
	b.fails(t, "aacp_reply", `{"messageId":"no-such-message","text":"x"}`, "NOT_FOUND")

	thread := a.ok(t, "aacp_thread", `{"threadId":"bug-42"}`)["messages"].([]any)
	if len(thread) != 2 || astr(thread[0], "sender") != "alpha" || astr(thread[0], "state") != "taken" ||
		astr(thread[1], "sender") != "beta" || astr(thread[1], "receiver") != "alpha" || astr(thread[1], "subject") != "Re: parser crash" ||
		astr(thread[1], "payload", "text") != "fixed in abc123" {
		t.Fatalf("thread %v", thread)
	}

	out, errOut, code := runOperator(t, []string{"MCPRT_AACP_DATA_DIR=" + dir}, "reindex")
	if code != 0 || !strings.Contains(out, "reindexed") {
		t.Fatalf("mcprt aacp reindex: exit %d\n%s%s", code, out, errOut)
	}
	if again := a.ok(t, "aacp_thread", `{"threadId":"bug-42"}`)["messages"].([]any); !reflect.DeepEqual(again, thread) {
		t.Fatalf("after reindex the thread is\n%v\nwant\n%v", again, thread)
	}
	finishAgent(t, a)
	finishAgent(t, b)
}
