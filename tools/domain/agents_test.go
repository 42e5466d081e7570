package domain

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/aacp"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/mcp"
	"github.com/mcprt/mcprt/tools/messaging"
)

func agentsDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestAgentToolsResourcesPrompts(t *testing.T) {
	dir := agentsDir(t, map[string]string{
		"reviewer.json": `{"agentId":"reviewer","displayName":"Reviewer","description":"Reviews code","team":"quality",
			"capabilities":["review"],"orchestration":{"maxDelegationDepth":1}}`,
		"off.json": `{"agentId":"off","description":"Disabled","team":"quality","enabled":false}`,
	})
	coord := aacp.NewCoordinator(aacp.Options{})
	t.Cleanup(func() { coord.Close(context.Background()) })
	if err := coord.RegisterAgent("echo", aacp.EchoAgent()); err != nil {
		t.Fatal(err)
	}
	var msgs *messaging.Service
	c, data := setupWith(t, mcp.ModeFull, false, dir, func(d *Domain) {
		base := config.DefaultBase("test")
		base.AACP.DataDir = filepath.Join(t.TempDir(), "aacp")
		var err error
		if msgs, err = messaging.New(messaging.Options{Config: base.AACP}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { msgs.Close() })
		if err := d.ConnectAgents(coord, msgs); err != nil {
			t.Fatal(err)
		}
	})

	list := c.tool("agent_list", map[string]any{"team": "quality"})
	if asJSON(list["agentIds"]) != `["off","reviewer"]` || list["total"] != 2.0 || list["truncated"] != false {
		t.Errorf("agent_list team quality = %v", list)
	}
	list = c.tool("agent_list", map[string]any{"enabled": true})
	if asJSON(list["agentIds"]) != `["echo","reviewer"]` {
		t.Errorf("agent_list enabled = %v", list)
	}
	got := c.tool("agent_get", map[string]any{"agentId": "reviewer"})
	if got["displayName"] != "Reviewer" || asJSON(got["orchestration"]) != `{"canWriteToShared":false,"maxDelegationDepth":1}` {
		t.Errorf("agent_get = %v", got)
	}
	run := c.tool("agent_run", map[string]any{"agentId": "echo", "input": map[string]any{"q": 1}})
	if run["runner"] != "in-process" || asJSON(run["output"]) != `{"payload":{"delegation":{"depth":1},"input":{"q":1}},"type":"agent_run"}` {
		t.Errorf("agent_run echo = %v", run)
	}
	if msgs.Opened() {
		t.Error("listing and running in-process agents opened the messaging journal")
	}

	avail := c.read(URIAgentsAvailable)
	if asJSON(avail["agentIds"]) != `["echo","off","reviewer"]` || avail["total"] != 3.0 {
		t.Errorf("%s = %v", URIAgentsAvailable, avail)
	}
	if one := c.read("agents://id/reviewer"); one["agentId"] != "reviewer" || one["team"] != "quality" {
		t.Errorf("agents://id/reviewer = %v", one)
	}
	r := c.call("resources/read", map[string]any{"uri": "agents://id/nobody"})
	if r.Error == nil || r.Error.Code != -32002 || r.Error.Data["code"] != "NOT_FOUND" {
		t.Errorf("read an unknown agent: %+v, want -32002 NOT_FOUND", r.Error)
	}
	tmpl := map[string]any{"type": "ref/resource", "uri": URIAgent}
	if got := c.complete(tmpl, "agentId", "RE", nil); !slices.Equal(got, []string{"reviewer"}) {
		t.Errorf("agentId completion %v", got)
	}
	prompt := map[string]any{"type": "ref/prompt", "name": PromptRunAgent}
	if got := c.complete(prompt, "agentId", "", nil); !slices.Equal(got, []string{"echo", "off", "reviewer"}) {
		t.Errorf("run_agent completion %v", got)
	}

	for _, tc := range []struct {
		name string
		args map[string]string
		want []string
	}{
		{PromptListAgents, map[string]string{"team": "quality", "enabled": "true"}, []string{"agent_list", `team "quality"`, "enabled true"}},
		{PromptListAgents, nil, []string{"agent_list", "no filter"}},
		{PromptRunAgent, map[string]string{"agentId": "reviewer", "task": "check \"main\"", "input": `{"pr":7}`},
			[]string{"agent_run", `"reviewer"`, `"check \"main\""`, `{"pr":7}`}},
	} {
		var res struct {
			Messages []struct{ Content struct{ Text string } }
		}
		c.result("prompts/get", map[string]any{"name": tc.name, "arguments": tc.args}, &res)
		for _, w := range tc.want {
			if len(res.Messages) != 1 || !strings.Contains(res.Messages[0].Content.Text, w) {
				t.Errorf("%s %v: %+v does not mention %s", tc.name, tc.args, res, w)
			}
		}
	}
	if r := c.call("prompts/get", map[string]any{"name": PromptListAgents, "arguments": map[string]string{"enabled": "maybe"}}); r.Error == nil {
		t.Error("list_agents with enabled maybe succeeded")
	}
	if entries, _ := os.ReadDir(filepath.Join(data, "agents")); len(entries) != 0 {
		t.Errorf("the default agents directory was written: %v", entries)
	}
}

func TestAgentsDirBad(t *testing.T) {
	dir := agentsDir(t, map[string]string{"x.json": `{"agentId":"x"}`})
	base := config.DefaultBase("test")
	base.AACP.DataDir = t.TempDir()
	cfg := config.DefaultDomain()
	cfg.Agent.Dir = dir
	_, err := New(Options{Config: cfg, Base: base})
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Key != "agent.dir" || !strings.Contains(ce.Reason, "description") || !strings.Contains(ce.Reason, "x.json") {
		t.Fatalf("New with a bad profile: %v; want a ConfigError for agent.dir naming the file and field", err)
	}
}

// asJSON is v re-encoded, for comparisons.
func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// With tracing on, an agent run handed to an in-process agent is a step
// nested in the agent_run call's trace.
func TestAgentRunTraced(t *testing.T) {
	coord := aacp.NewCoordinator(aacp.Options{})
	t.Cleanup(func() { coord.Close(context.Background()) })
	if err := coord.RegisterAgent("echo", aacp.EchoAgent()); err != nil {
		t.Fatal(err)
	}
	c, _ := setupWith(t, mcp.ModeFull, true, "", func(d *Domain) {
		if err := d.ConnectAgents(coord, nil); err != nil {
			t.Fatal(err)
		}
	})
	var res map[string]any
	c.result("tools/call", map[string]any{"name": "agent_run", "arguments": map[string]any{"agentId": "echo"},
		"_meta": map[string]any{"correlationId": "trace-agent"}}, &res)
	if res["isError"] != false {
		t.Fatalf("agent_run: %v", res)
	}
	got := asJSON(c.tool("trace_get", map[string]any{"traceId": "trace-agent"}))
	for _, want := range []string{`"agent:echo"`, `"trace-agent/echo"`, `"agent_run"`} {
		if !strings.Contains(got, want) {
			t.Errorf("trace_get has no %s: %s", want, got)
		}
	}
}
