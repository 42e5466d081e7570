package messaging

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/setting"
	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
)

// client drives one in-process session over an in-memory stream, one call
// at a time.
type client struct {
	t    *testing.T
	conn jsonrpc.Stream
	next int
}

// newClient registers the tools of svc on a server in mode and completes
// the handshake.
func newClient(t *testing.T, svc *Service, mode string) *client {
	t.Helper()
	srv, err := mcp.NewServer(mcp.Options{Version: "test", Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Register(srv); err != nil {
		t.Fatal(err)
	}
	serverEnd, clientEnd := jsonrpc.NewMemoryPair()
	sess := srv.Connect(serverEnd, nil)
	served := make(chan struct{})
	go func() {
		_ = sess.Serve(context.Background())
		close(served)
	}()
	t.Cleanup(func() {
		_ = clientEnd.Close()
		<-served
		_ = svc.Close()
	})
	c := &client{t: t, conn: clientEnd}
	c.rpc("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	c.write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *client) write(line string) {
	c.t.Helper()
	if err := c.conn.Write(context.Background(), jsonrpc.Outgoing{Data: []byte(line), Flush: true}); err != nil {
		c.t.Fatal(err)
	}
}

// rpc sends a request and returns its result (failing on an error
// response).
func (c *client) rpc(method, params string) map[string]any {
	c.t.Helper()
	c.next++
	id := strconv.Itoa(c.next)
	c.write(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`)
	for {
		data, err := c.conn.Read()
		if err != nil {
			c.t.Fatalf("read: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			c.t.Fatalf("bad line %s", data)
		}
		if m["id"] == nil {
			continue // a notification
		}
		if m["error"] != nil {
			c.t.Fatalf("%s: error response %s", method, data)
		}
		return m["result"].(map[string]any)
	}
}

// call calls a tool and returns its structured result, or the tool
// error's code.
func (c *client) call(name, args string) (map[string]any, string) {
	c.t.Helper()
	res := c.rpc("tools/call", `{"name":"`+name+`","arguments":`+args+`}`)
	text := res["content"].([]any)[0].(map[string]any)["text"].(string)
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		c.t.Fatalf("%s: text %q is not an object", name, text)
	}
	if res["isError"] == true {
		return v, v["code"].(string)
	}
	return v, ""
}

func (c *client) ok(name, args string) map[string]any {
	c.t.Helper()
	v, code := c.call(name, args)
	if code != "" {
		c.t.Fatalf("%s %s: %s %v", name, args, code, v["message"])
	}
	return v
}

func (c *client) fails(name, args, want string) map[string]any {
	c.t.Helper()
	v, code := c.call(name, args)
	if code != want {
		c.t.Fatalf("%s %s: code %q (%v), want %s", name, args, code, v["message"], want)
	}
	return v
}

func newService(t *testing.T, cfg Config, open func(broker.Options) (*broker.Broker, error)) *Service {
	t.Helper()
	svc, err := New(Options{Config: cfg, Open: open})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func testConfig(dir, agent string) Config {
	c := DefaultConfig()
	c.DataDir, c.AgentID = dir, agent
	return c
}

// untyped reports every property schema under schema without a "type".
func untyped(t *testing.T, tool, path string, schema any) {
	t.Helper()
	m, _ := schema.(map[string]any)
	if m == nil {
		return
	}
	if _, ok := m["type"]; !ok {
		t.Errorf("%s: the schema at %q declares no type", tool, cmp.Or(path, "/"))
	}
	props, _ := m["properties"].(map[string]any)
	for k, v := range props {
		untyped(t, tool, path+"/"+k, v)
	}
	if items, ok := m["items"]; ok {
		untyped(t, tool, path+"/items", items)
	}
}

func TestToolsListedWithTruthfulAnnotations(t *testing.T) {
	readOnly := []string{"aacp_agents", "aacp_dead_letters", "aacp_peek", "aacp_search", "aacp_status", "aacp_thread", "aacp_view"}
	writing := []string{"aacp_ack", "aacp_heartbeat", "aacp_nack", "aacp_receive", "aacp_register_agent", "aacp_reply", "aacp_requeue", "aacp_send"}
	for _, tc := range []struct {
		mode string
		want []string
	}{
		{mcp.ModeFull, slices.Sorted(slices.Values(append(slices.Clone(readOnly), writing...)))},
		{mcp.ModeReadOnly, readOnly},
		{mcp.ModeMinimal, nil},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			c := newClient(t, newService(t, testConfig(dir, "a1"), nil), tc.mode)
			tools, _ := c.rpc("tools/list", `{}`)["tools"].([]any)
			var names []string
			for _, x := range tools {
				tl := x.(map[string]any)
				name := tl["name"].(string)
				names = append(names, name)
				ann := tl["annotations"].(map[string]any)
				if ro := ann["readOnlyHint"] == true; ro != slices.Contains(readOnly, name) {
					t.Errorf("%s: readOnlyHint %v", name, ann["readOnlyHint"])
				}
				withOut := slices.Contains([]string{"aacp_ack", "aacp_heartbeat", "aacp_nack", "aacp_reply", "aacp_send"}, name)
				if tl["inputSchema"] == nil || (tl["outputSchema"] == nil) == withOut {
					t.Errorf("%s: input schema %v, output schema %v; want an input schema, and an output schema unless it lists envelopes", name, tl["inputSchema"] != nil, tl["outputSchema"] != nil)
				}
				if name == "aacp_nack" && ann["destructiveHint"] != true {
					t.Errorf("aacp_nack: destructiveHint %v, want true", ann["destructiveHint"])
				}
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("tools %v, want %v", names, tc.want)
			}
			// The whole aacp listing fits a model's budget, and every
			// argument says its JSON type (schema-driven clients need it).
			if raw, _ := json.Marshal(tools); len(raw) > 12<<10 {
				t.Errorf("the aacp tools take %d bytes of tools/list, want at most 12 KiB", len(raw))
			}
			for _, x := range tools {
				tl := x.(map[string]any)
				untyped(t, tl["name"].(string), "", tl["inputSchema"])
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("listing the tools created the data directory (%v)", err)
			}
		})
	}
}

// A server that never messages creates no files; the first call opens
// the journal and registers the own agent.
func TestLazyOpenAndOwnAgent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	svc := newService(t, testConfig(dir, "mgr"), nil)
	c := newClient(t, svc, mcp.ModeFull)
	if svc.Opened() {
		t.Fatal("the broker is open before any call")
	}
	got := c.ok("aacp_receive", `{}`)
	if msgs := got["messages"].([]any); len(msgs) != 0 {
		t.Fatalf("messages %v, want none", msgs)
	}
	if _, err := os.Stat(filepath.Join(dir, "registry", "agents.ndjson")); err != nil {
		t.Fatalf("the first call did not register the own agent: %v", err)
	}
	agents := c.ok("aacp_agents", `{"agentId":"mgr"}`)["agents"].([]any)
	if len(agents) != 1 || agents[0].(map[string]any)["type"] != "AdHoc" || agents[0].(map[string]any)["local"] != true {
		t.Fatalf("agents %v, want mgr, AdHoc, local", agents)
	}
}

func TestTwoAgentsInOneProcess(t *testing.T) {
	svc := newService(t, testConfig(t.TempDir(), "mgr"), nil)
	c := newClient(t, svc, mcp.ModeFull)
	c.ok("aacp_register_agent", `{"type":"Manager"}`)
	c.ok("aacp_register_agent", `{"agentId":"impl","type":"Implementation","capabilities":["TASK_ASSIGNMENT"]}`)
	// The session's identity is now impl (its last registration); it
	// still holds mgr and may act for it by name.
	sent := c.ok("aacp_send", `{"agentId":"mgr","receiver":{"agentId":"impl","type":"Implementation"},"messageType":"TASK_ASSIGNMENT",
		"payload":{"taskId":"t1","taskRef":"T1","taskDescription":"write it","memoryLogPath":"m.md","executionType":"single-step"}}`)
	msgs := c.ok("aacp_receive", `{"agentId":"impl","waitMs":5000}`)["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("impl received %v, want the assignment", msgs)
	}
	m := msgs[0].(map[string]any)
	if m["requestId"] != sent["requestId"] || m["sender"].(map[string]any)["type"] != "Manager" {
		t.Fatalf("received %v, want request %v from the Manager", m, sent["requestId"])
	}
	c.ok("aacp_ack", `{"agentId":"impl","messageId":"`+m["messageId"].(string)+`","status":"processed"}`)
	// The ACK reaches mgr's side through the journal; status follows.
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := c.ok("aacp_status", `{"agentId":"mgr","requestId":"`+sent["requestId"].(string)+`"}`)
		if st["outcome"] == "COMPLETED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %v, want outcome COMPLETED", st)
		}
		c.ok("aacp_receive", `{"agentId":"mgr","waitMs":20}`) // reads mgr's inbox (the ACK)
	}
	// Acting for an agent this process does not host.
	c.fails("aacp_receive", `{"agentId":"ghost"}`, string(envelope.CodeAgentNotFound))
	c.fails("aacp_receive", `{"agentId":"../x"}`, string(envelope.CodeInvalidReceiver))
}

// Timing through the broker's manual clock: a message nobody takes is
// not late; once taken and left unanswered it is re-offered; its ttl
// alone fails it → dead letter and one ERROR_REPORT to the sender; an
// expired message cannot be requeued.
func TestInboxPacedTimeoutDeadLetter(t *testing.T) {
	clock := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var b *broker.Broker
	open := func(o broker.Options) (*broker.Broker, error) {
		o.Clock, o.Manual, o.Jitter = clock, true, -1
		var err error
		b, err = broker.Open(o)
		return b, err
	}
	cfg := testConfig(t.TempDir(), "mgr")
	cfg.AckTimeout, cfg.MaxRetries, cfg.RetryBase = time.Second, 1, 100*time.Millisecond
	c := newClient(t, newService(t, cfg, open), mcp.ModeFull)
	c.ok("aacp_register_agent", `{"agentId":"impl","type":"Implementation"}`)
	sent := c.ok("aacp_send", `{"receiver":{"agentId":"impl"},"messageType":"CUSTOM_PING","payload":{"n":1},"ttlSeconds":30}`)
	ctx := context.Background()
	step := func(d time.Duration) {
		t.Helper()
		clock.Advance(d)
		if _, err := b.RetryDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	status := func() map[string]any {
		return c.ok("aacp_status", `{"requestId":"`+sent["requestId"].(string)+`"}`)
	}
	step(20 * time.Second) // untaken: not late
	if st := status(); st["state"] != "IN_TRANSIT" {
		t.Fatalf("untaken after 20s: %v, want IN_TRANSIT", st)
	}
	got := c.ok("aacp_receive", `{"agentId":"impl"}`)["messages"].([]any)
	if len(got) != 1 {
		t.Fatalf("impl received %v", got)
	}
	step(0)
	step(time.Second)            // taken, unanswered past the timeout
	step(200 * time.Millisecond) // re-offered
	again := c.ok("aacp_receive", `{"agentId":"impl"}`)["messages"].([]any)
	if len(again) != 1 || again[0].(map[string]any)["redelivered"] != true {
		t.Fatalf("re-offer %v, want the message again, redelivered", again)
	}
	step(10 * time.Second) // past the ttl: FAILED
	step(time.Minute)
	if st := status(); st["state"] != "FAILED" || st["outcome"] != "FAILED" {
		t.Fatalf("status %v, want FAILED", st)
	}
	dl := c.ok("aacp_dead_letters", `{}`)
	letters := dl["deadLetters"].([]any)
	if len(letters) != 1 || dl["total"] != float64(1) {
		t.Fatalf("dead letters %v, want one", dl)
	}
	reports := c.ok("aacp_receive", `{"messageTypes":["ERROR_REPORT"]}`)["messages"].([]any)
	if len(reports) != 1 || reports[0].(map[string]any)["sender"].(map[string]any)["agentId"] != envelope.SystemAgentID {
		t.Fatalf("the sender got %v, want one ERROR_REPORT from %s", reports, envelope.SystemAgentID)
	}
	c.fails("aacp_ack", `{"agentId":"impl","messageId":"`+again[0].(map[string]any)["messageId"].(string)+`","status":"processed"}`, string(envelope.CodeTimeout))
	c.fails("aacp_requeue", `{"messageId":"`+letters[0].(map[string]any)["messageId"].(string)+`"}`, string(envelope.CodeTimeout))
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct {
		key  string
		edit func(*Config)
	}{
		{"aacp.agentId", func(c *Config) { c.AgentID = "../x" }},
		{"aacp.agentId", func(c *Config) { c.AgentID = "a_to_b" }},
		{"aacp.agentType", func(c *Config) { c.AgentType = "Boss" }},
		{"aacp.fsync", func(c *Config) { c.Fsync = "sometimes" }},
		{"aacp.dataDir", func(c *Config) { c.DataDir = "" }},
	} {
		cfg := testConfig("d", "a")
		tc.edit(&cfg)
		_, err := New(Options{Config: cfg})
		var ce *setting.Error
		if !errors.As(err, &ce) || ce.Key != tc.key {
			t.Errorf("New(%+v) = %v, want a *setting.Error for %s", cfg, err, tc.key)
		}
	}
}

func TestDefaultAgentID(t *testing.T) {
	id := DefaultAgentID()
	if err := envelope.CheckAgentID(id); err != nil {
		t.Fatalf("DefaultAgentID() = %q: %v", id, err)
	}
	if want := "-" + strconv.Itoa(os.Getpid()); len(id) < len(want) || id[len(id)-len(want):] != want {
		t.Errorf("DefaultAgentID() = %q, want it to end with the pid", id)
	}
}
