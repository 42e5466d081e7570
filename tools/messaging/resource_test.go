package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/mcp"
)

// request sends a request and returns the whole response, collecting the
// notifications that arrive before it.
func (c *client) request(method, params string) (resp map[string]any, notes []map[string]any) {
	c.t.Helper()
	c.next++
	id := strconv.Itoa(c.next)
	c.write(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`)
	for {
		m := c.readMessage()
		if m["id"] == nil {
			notes = append(notes, m)
			continue
		}
		return m, notes
	}
}

// readMessage reads the next message, failing the test when none comes
// within a generous bound (the notification it waits for is caused, not
// timed: the bound only keeps a broken build from hanging).
func (c *client) readMessage() map[string]any {
	c.t.Helper()
	type result struct {
		data []byte
		err  error
	}
	got := make(chan result, 1)
	go func() {
		data, err := c.conn.Read()
		got <- result{data, err}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			c.t.Fatalf("read: %v", r.err)
		}
		var m map[string]any
		if err := json.Unmarshal(r.data, &m); err != nil {
			c.t.Fatalf("bad line %s", r.data)
		}
		return m
	case <-time.After(30 * time.Second):
		c.t.Fatal("no message from the server within 30s")
		return nil
	}
}

// readInbox reads an inbox resource and decodes it.
func (c *client) readInbox(uri string) broker.InboxOutput {
	c.t.Helper()
	res := c.rpc("resources/read", `{"uri":"`+uri+`"}`)
	contents := res["contents"].([]any)
	if len(contents) != 1 {
		c.t.Fatalf("read %s: contents %v, want one item", uri, contents)
	}
	item := contents[0].(map[string]any)
	if item["mimeType"] != "application/json" || item["uri"] != uri {
		c.t.Fatalf("read %s: item %v, want application/json at the URI", uri, item)
	}
	var out broker.InboxOutput
	if err := json.Unmarshal([]byte(item["text"].(string)), &out); err != nil {
		c.t.Fatalf("read %s: %v", uri, err)
	}
	return out
}

// readFails reads uri and returns the -32002 error's message.
func (c *client) readFails(uri string) string {
	c.t.Helper()
	resp, _ := c.request("resources/read", `{"uri":"`+uri+`"}`)
	e, _ := resp["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32002) || e["data"].(map[string]any)["code"] != "NOT_FOUND" {
		c.t.Fatalf("read %s: %v, want -32002 NOT_FOUND", uri, resp)
	}
	return e["message"].(string)
}

func TestInboxResource(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	svc := newService(t, testConfig(dir, "mgr"), nil)
	c := newClient(t, svc, mcp.ModeFull)

	// Listed, and lazy: registering and listing create nothing.
	tmpls := c.rpc("resources/templates/list", `{}`)["resourceTemplates"].([]any)
	if len(tmpls) != 1 || tmpls[0].(map[string]any)["uriTemplate"] != InboxTemplate || tmpls[0].(map[string]any)["mimeType"] != "application/json" {
		t.Fatalf("templates %v, want %s", tmpls, InboxTemplate)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) || svc.Opened() {
		t.Fatalf("the data directory exists before the first read (%v)", err)
	}

	// The first read opens the journal and hosts the own agent.
	uri := InboxURI("mgr")
	if got := c.readInbox(uri); got.AgentID != "mgr" || len(got.Messages) != 0 || got.Queued != 0 {
		t.Fatalf("empty inbox read as %+v", got)
	}
	if !svc.Opened() {
		t.Fatal("the read did not open the journal")
	}
	c.rpc("resources/subscribe", `{"uri":"`+uri+`"}`)

	// Another broker on the same data directory (another process, in
	// effect) sends to mgr: the subscriber hears of it.
	peer, err := broker.Open(broker.Options{DataDir: dir, Manual: true})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	ctx := context.Background()
	if _, err := peer.RegisterAgent(ctx, "peer", broker.RegisterInput{Type: envelope.Implementation}); err != nil {
		t.Fatal(err)
	}
	sent, err := peer.Send(ctx, "peer", broker.SendInput{Receiver: broker.Receiver{AgentID: "mgr"},
		MessageType: "CUSTOM_PING", Payload: json.RawMessage(`{"n":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	for {
		m := c.readMessage()
		if m["method"] == "notifications/resources/updated" {
			if p := m["params"].(map[string]any); p["uri"] != uri {
				t.Fatalf("updated %v, want %s", p, uri)
			}
			break
		}
	}

	// Reading shows the message and hands nothing out: reading twice
	// shows it twice, still queued.
	for range 2 {
		got := c.readInbox(uri)
		if got.Queued != 1 || len(got.Messages) != 1 || got.Messages[0].State != broker.InboxQueued ||
			got.Messages[0].MessageID != sent.MessageID || got.Messages[0].Sender.AgentID != "peer" {
			t.Fatalf("inbox %+v, want the queued ping from peer", got)
		}
	}
	msgs := c.ok("aacp_receive", `{}`)["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["messageId"] != sent.MessageID {
		t.Fatalf("receive after reading got %v, want the ping", msgs)
	}
	if got := c.readInbox(uri); got.Queued != 0 || got.HandedOut != 1 || got.Messages[0].State != broker.InboxHandedOut {
		t.Fatalf("inbox after receive %+v, want the ping handed out", got)
	}
	c.ok("aacp_ack", `{"messageId":"`+sent.MessageID+`","status":"processed"}`)
	if got := c.readInbox(uri); len(got.Messages) != 0 || got.HandedOut != 0 {
		t.Fatalf("inbox after the ACK %+v, want it empty", got)
	}

	// Unknown, unusable and elsewhere-hosted agents are not found.
	if msg := c.readFails(InboxURI("ghost")); !strings.Contains(msg, "no agent \"ghost\" is registered") {
		t.Errorf("ghost: %q", msg)
	}
	if msg := c.readFails(InboxURI("a_to_b")); !strings.Contains(msg, "names no inbox") {
		t.Errorf("a_to_b: %q", msg)
	}
	if msg := c.readFails(InboxURI("peer")); !strings.Contains(msg, "another process") {
		t.Errorf("peer: %q", msg)
	}

	// Completion proposes only the inboxes this process can read: not
	// peer, hosted by another process.
	res := c.rpc("completion/complete", `{"ref":{"type":"ref/resource","uri":"`+InboxTemplate+`"},"argument":{"name":"agentId","value":"P"}}`)
	if vals, _ := res["completion"].(map[string]any)["values"].([]any); len(vals) != 0 {
		t.Errorf("completion of P: %v, want none (peer is hosted elsewhere)", vals)
	}
	res = c.rpc("completion/complete", `{"ref":{"type":"ref/resource","uri":"`+InboxTemplate+`"},"argument":{"name":"agentId","value":""}}`)
	if vals := res["completion"].(map[string]any)["values"].([]any); !slices.Equal(vals, []any{"mgr"}) {
		t.Errorf("completion of \"\": %v, want [mgr]", vals)
	}
}

// Where no aacp tool is registered, there is no inbox resource either.
func TestInboxResourceOnlyWithTools(t *testing.T) {
	c := newClient(t, newService(t, testConfig(t.TempDir(), "a1"), nil), mcp.ModeMinimal)
	resp, _ := c.request("resources/templates/list", `{}`)
	if r, ok := resp["result"].(map[string]any); ok {
		if tm, _ := r["resourceTemplates"].([]any); len(tm) != 0 {
			t.Fatalf("mode MINIMAL lists templates %v", tm)
		}
	}
}
