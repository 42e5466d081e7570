package domain

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
)

// rpcClient talks raw JSON-RPC to one in-memory session.
type rpcClient struct {
	t      *testing.T
	stream jsonrpc.Stream
	next   int
	// updated holds the URIs of the notifications/resources/updated read.
	updated []string
}

// rpcReply is a response's result or error.
type rpcReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
}

// call sends method with params and returns the answer to it, skipping
// notifications.
func (c *rpcClient) call(method string, params any) rpcReply {
	c.t.Helper()
	c.next++
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params})
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.stream.Write(ctx, jsonrpc.Outgoing{Data: append(msg, '\n')}); err != nil {
		c.t.Fatalf("%s: write: %v", method, err)
	}
	for {
		data, err := c.stream.Read()
		if err != nil {
			c.t.Fatalf("%s: read: %v", method, err)
		}
		var r struct {
			ID json.RawMessage `json:"id"`
			rpcReply
		}
		if err := json.Unmarshal(data, &r); err != nil {
			c.t.Fatalf("%s: %v in %s", method, err, data)
		}
		c.noteUpdate(data)
		if string(r.ID) == fmt.Sprint(c.next) {
			return r.rpcReply
		}
	}
}

// result calls method and decodes its result into out, failing on an error.
func (c *rpcClient) result(method string, params, out any) {
	c.t.Helper()
	r := c.call(method, params)
	if r.Error != nil {
		c.t.Fatalf("%s %v: error %d %s %v", method, params, r.Error.Code, r.Error.Message, r.Error.Data)
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		c.t.Fatalf("%s: %v in %s", method, err, r.Result)
	}
}

// tool calls a tool and returns its structured content.
func (c *rpcClient) tool(name string, args map[string]any) map[string]any {
	c.t.Helper()
	var res struct {
		IsError           bool           `json:"isError"`
		StructuredContent map[string]any `json:"structuredContent"`
		Content           []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	c.result("tools/call", map[string]any{"name": name, "arguments": args}, &res)
	if res.IsError {
		c.t.Fatalf("tool %s failed: %+v", name, res.Content)
	}
	return res.StructuredContent
}

// read reads uri and returns its JSON text decoded.
func (c *rpcClient) read(uri string) map[string]any {
	c.t.Helper()
	var res struct {
		Contents []struct {
			URI, MIMEType, Text string
		} `json:"contents"`
	}
	c.result("resources/read", map[string]any{"uri": uri}, &res)
	if len(res.Contents) != 1 || res.Contents[0].URI != uri || res.Contents[0].MIMEType != "application/json" {
		c.t.Fatalf("read %s: contents %+v", uri, res.Contents)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &out); err != nil {
		c.t.Fatalf("read %s: %v", uri, err)
	}
	return out
}

// complete completes argument of ref to value with context arguments.
func (c *rpcClient) complete(ref map[string]any, argument, value string, ctxArgs map[string]string) []string {
	c.t.Helper()
	params := map[string]any{"ref": ref, "argument": map[string]any{"name": argument, "value": value}}
	if ctxArgs != nil {
		params["context"] = map[string]any{"arguments": ctxArgs}
	}
	var res struct {
		Completion struct {
			Values []string `json:"values"`
		} `json:"completion"`
	}
	c.result("completion/complete", params, &res)
	return res.Completion.Values
}

// setup builds a Domain over a temp data dir and a server in mode, with
// tracing on or off, and returns an initialized client and the data dir.
func setup(t *testing.T, mode string, tracing bool) (*rpcClient, string) {
	t.Helper()
	c, dir, _ := setupFull(t, mode, tracing, "", nil, nil)
	return c, dir
}

// setupWith is setup with the agent profiles directory agentsDir ("" for
// the default, none) and connect called on the Domain before Register.
func setupWith(t *testing.T, mode string, tracing bool, agentsDir string, connect func(*Domain)) (*rpcClient, string) {
	t.Helper()
	c, dir, _ := setupFull(t, mode, tracing, agentsDir, connect, nil)
	return c, dir
}

// setupClock is setup with the Domain on clock (nil: the system's); it
// also returns the Domain.
func setupClock(t *testing.T, mode string, tracing bool, clock core.Clock) (*rpcClient, string, *Domain) {
	t.Helper()
	return setupFull(t, mode, tracing, "", nil, clock)
}

// setupFull is setup with every option.
func setupFull(t *testing.T, mode string, tracing bool, agentsDir string, connect func(*Domain), clock core.Clock) (*rpcClient, string, *Domain) {
	t.Helper()
	dir := t.TempDir()
	base := config.DefaultBase("test")
	base.AACP.DataDir, base.Server.Mode = dir, mode
	cfg := config.DefaultDomain()
	cfg.Trace.Enabled = tracing
	cfg.Agent.Dir = agentsDir
	d, err := New(Options{Config: cfg, Base: base, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcp.NewServer(serverOptions(base, mcp.Options{Audit: d.AuditSink()}))
	if err != nil {
		t.Fatal(err)
	}
	if connect != nil {
		connect(d)
	}
	if err := d.Register(srv); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("registering created %v in the data dir", entries)
	}
	server, client := jsonrpc.NewMemoryPair()
	sess := srv.Connect(server, nil)
	go func() { _ = sess.Serve(context.Background()) }()
	t.Cleanup(func() {
		sess.Close()
		_ = sess.Wait(context.Background())
		if err := d.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	c := &rpcClient{t: t, stream: client}
	var init map[string]any
	c.result("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"}}, &init)
	if err := client.Write(context.Background(), jsonrpc.Outgoing{
		Data: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")}); err != nil {
		t.Fatal(err)
	}
	return c, dir, d
}

// listed returns the URIs (or templates) of resources/list (or
// resources/templates/list).
func (c *rpcClient) listed() (uris, templates []string) {
	c.t.Helper()
	var res struct {
		Resources         []struct{ URI, MIMEType string }
		ResourceTemplates []struct {
			URITemplate string `json:"uriTemplate"`
		}
	}
	c.result("resources/list", map[string]any{}, &res)
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	c.result("resources/templates/list", map[string]any{}, &res)
	for _, r := range res.ResourceTemplates {
		templates = append(templates, r.URITemplate)
	}
	return uris, templates
}

func TestResourcesReadAndComplete(t *testing.T) {
	c, dir := setup(t, mcp.ModeFull, true)
	uris, templates := c.listed()
	if want := []string{URIAgentsAvailable, URIMemoryEntries, URIPolicies, URIReservationsActive, URISessionsActive, URITasksOpen, URITracesRecent, URIWorkflows}; !slices.Equal(uris, want) {
		t.Errorf("resources %v, want %v", uris, want)
	}
	if want := []string{URIAgent, URIMemoryEntry, URIPolicy, URISession, URITask, URITrace, URIWorkflow}; !slices.Equal(templates, want) {
		t.Errorf("templates %v, want %v", templates, want)
	}

	c.tool("memory_store", map[string]any{"key": "alpha", "value": map[string]any{"n": 1}, "namespace": "proj/a"})
	c.tool("memory_store", map[string]any{"key": "beta key", "value": "two"})
	sid := c.tool("session_create", map[string]any{"initiator": "agent-1", "task": "write tests"})["sessionId"].(string)
	if _, err := os.Stat(filepath.Join(dir, "store")); err != nil {
		t.Errorf("the store was not created by its first use: %v", err)
	}

	if got := c.read(URIMemoryEntries); got["total"] != 2.0 {
		t.Errorf("%s: %v", URIMemoryEntries, got)
	}
	if got := c.read("memory://entries/proj%2Fa/alpha"); got["found"] != true || got["namespace"] != "proj/a" {
		t.Errorf("entry: %v", got)
	}
	if got := c.read("memory://entries/default/beta%20key"); got["value"] != "two" {
		t.Errorf("entry: %v", got)
	}
	if got := c.read(URISessionsActive); got["total"] != 1.0 {
		t.Errorf("%s: %v", URISessionsActive, got)
	}
	if got := c.read("sessions://id/" + sid); got["sessionId"] != sid || got["status"] != "active" {
		t.Errorf("session: %v", got)
	}
	if got := c.read(URIPolicies); got["total"].(float64) < 2 {
		t.Errorf("%s: %v", URIPolicies, got)
	}
	if got := c.read("policies://id/default"); got["policyId"] != "default" {
		t.Errorf("policy: %v", got)
	}
	recent := c.read(URITracesRecent)
	traces, _ := recent["traces"].([]any)
	if len(traces) == 0 {
		t.Fatalf("%s: %v", URITracesRecent, recent)
	}
	traceID := traces[0].(map[string]any)["traceId"].(string)
	if got := c.read("traces://id/" + traceID); got["traceId"] != traceID {
		t.Errorf("trace: %v", got)
	}

	for _, uri := range []string{"memory://entries/default/nothing", "memory://entries/bad%3Ans/k", "sessions://id/nope",
		"traces://id/nope", "policies://id/nope", "memory://nowhere"} {
		r := c.call("resources/read", map[string]any{"uri": uri})
		if r.Error == nil || r.Error.Code != -32002 || r.Error.Data["code"] != "NOT_FOUND" {
			t.Errorf("read %s: %s %+v, want -32002 NOT_FOUND", uri, r.Result, r.Error)
		}
	}

	tmpl := func(u string) map[string]any { return map[string]any{"type": "ref/resource", "uri": u} }
	if got := c.complete(tmpl(URIMemoryEntry), "namespace", "pro", nil); !slices.Equal(got, []string{"proj/a"}) {
		t.Errorf("namespace completion %v", got)
	}
	if got := c.complete(tmpl(URIMemoryEntry), "key", "", map[string]string{"namespace": "default"}); !slices.Equal(got, []string{"beta key"}) {
		t.Errorf("key completion %v", got)
	}
	if got := c.complete(tmpl(URIMemoryEntry), "key", "", nil); !slices.Equal(got, []string{"alpha", "beta key"}) {
		t.Errorf("key completion without namespace %v", got)
	}
	if got := c.complete(tmpl(URISession), "id", sid[:4], nil); !slices.Contains(got, sid) {
		t.Errorf("session completion %v, want %s", got, sid)
	}
	if got := c.complete(tmpl(URITrace), "traceId", "", nil); !slices.Contains(got, traceID) {
		t.Errorf("trace completion %v, want %s", got, traceID)
	}
	if got := c.complete(tmpl(URIPolicy), "id", "DEF", nil); !slices.Equal(got, []string{"default"}) {
		t.Errorf("policy completion %v", got)
	}
	prompt := map[string]any{"type": "ref/prompt", "name": PromptAnalyzeTrace}
	if got := c.complete(prompt, "traceId", traceID[:3], nil); !slices.Contains(got, traceID) {
		t.Errorf("analyze_trace completion %v, want %s", got, traceID)
	}
}

func TestPrompts(t *testing.T) {
	c, _ := setup(t, mcp.ModeFull, true)
	var list struct {
		Prompts []struct{ Name string }
	}
	c.result("prompts/list", map[string]any{}, &list)
	var names []string
	for _, p := range list.Prompts {
		names = append(names, p.Name)
	}
	if want := []string{PromptAnalyzeTrace, PromptListAgents, PromptRunAgent, PromptRunWorkflow, PromptSearchMemory}; !slices.Equal(names, want) {
		t.Errorf("prompts %v, want %v", names, want)
	}
	for name, want := range map[string][]string{
		PromptSearchMemory: {"memory_search", `"deploy \"keys\""`},
		PromptAnalyzeTrace: {"trace_analyze", `"t-1"`},
	} {
		args := map[string]string{"query": `deploy "keys"`, "traceId": "t-1"}
		var res struct {
			Messages []struct {
				Role    string
				Content struct{ Type, Text string }
			}
		}
		c.result("prompts/get", map[string]any{"name": name, "arguments": args}, &res)
		if len(res.Messages) != 1 || res.Messages[0].Role != "user" || res.Messages[0].Content.Type != "text" {
			t.Fatalf("%s: %+v", name, res)
		}
		for _, w := range want {
			if !strings.Contains(res.Messages[0].Content.Text, w) {
				t.Errorf("%s: %q does not mention %s", name, res.Messages[0].Content.Text, w)
			}
		}
	}
	if r := c.call("prompts/get", map[string]any{"name": PromptSearchMemory}); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("search_memory without query: %+v", r.Error)
	}
}

// Modes and tracing decide what is registered; none of it creates a file.
func TestRegisteredByMode(t *testing.T) {
	for _, tc := range []struct {
		mode      string
		tracing   bool
		templates []string
		prompts   int
	}{
		{mcp.ModeFull, false, []string{URIAgent, URIMemoryEntry, URIPolicy, URISession, URITask, URIWorkflow}, 4},              // list_agents, run_agent, run_workflow
		{mcp.ModeReadOnly, true, []string{URIAgent, URIMemoryEntry, URIPolicy, URISession, URITask, URITrace, URIWorkflow}, 3}, // no run_agent, no run_workflow
		{mcp.ModeMinimal, true, nil, 0},
	} {
		t.Run(fmt.Sprint(tc.mode, tc.tracing), func(t *testing.T) {
			c, _ := setup(t, tc.mode, tc.tracing)
			if len(tc.templates) == 0 {
				if r := c.call("resources/list", map[string]any{}); r.Error == nil || r.Error.Code != -32601 {
					t.Errorf("resources/list: %s %+v, want -32601", r.Result, r.Error)
				}
				return
			}
			_, templates := c.listed()
			if !slices.Equal(templates, tc.templates) {
				t.Errorf("templates %v, want %v", templates, tc.templates)
			}
			var list struct{ Prompts []json.RawMessage }
			c.result("prompts/list", map[string]any{}, &list)
			if len(list.Prompts) != tc.prompts {
				t.Errorf("%d prompts, want %d", len(list.Prompts), tc.prompts)
			}
		})
	}
}

func TestCompletionsCut(t *testing.T) {
	many := make([]string, 150)
	for i := range many {
		many[i] = fmt.Sprintf("id-%03d", i)
	}
	res := completions(many, "ID-")
	if len(res.Values) != maxCompletionItems || !res.HasMore || res.Total != 150 {
		t.Errorf("completions: %d values, hasMore %v, total %d", len(res.Values), res.HasMore, res.Total)
	}
	if res := completions(many, "id-14"); len(res.Values) != 10 || res.HasMore {
		t.Errorf("completions id-14: %v", res.Values)
	}
}

// serverOptions is opts with the settings of cfg, mapped as the binary maps
// them (config.ServerOptions); a mapping error panics, failing the test.
func serverOptions(cfg config.Base, opts mcp.Options) mcp.Options {
	o, err := config.ServerOptions(cfg, opts)
	if err != nil {
		panic(fmt.Sprintf("config.ServerOptions: %v", err))
	}
	return o
}
