package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/aacp"
	"github.com/mcprt/mcprt/core"
)

var t0 = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

func mustParse(t *testing.T, js string) Profile {
	t.Helper()
	p, err := ParseProfile([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// workflows is a WorkflowRunner that records its calls.
type workflows struct {
	calls []string
	depth int
	fail  error
}

func (w *workflows) RunWorkflow(ctx context.Context, id string, input map[string]any) (any, error) {
	w.calls = append(w.calls, id)
	w.depth = DepthOf(ctx)
	if w.fail != nil {
		return nil, w.fail
	}
	return map[string]any{"workflow": id, "input": input}, nil
}

// newCatalogue is a service with profiles, a coordinator with agents
// "echo" and "boom", and a workflow runner.
func newCatalogue(t *testing.T) (*Service, *workflows, *core.ManualClock) {
	t.Helper()
	clock := core.NewManualClock(t0)
	svc, err := NewService(Options{Clock: clock, IDs: &core.SequenceGenerator{}, Profiles: []Profile{
		mustParse(t, goodProfile),
		mustParse(t, `{"agentId":"flow","description":"Runs a workflow","team":"ops","workflowId":"wf-1","capabilities":["deploy"]}`),
		mustParse(t, `{"agentId":"off","description":"Disabled","team":"ops","enabled":false}`),
		mustParse(t, `{"agentId":"shallow","description":"No delegation","orchestration":{"maxDelegationDepth":0},"workflowId":"wf-2"}`),
		mustParse(t, `{"agentId":"echo","description":"Echo with a profile","team":"test"}`),
		mustParse(t, `{"agentId":"idle","description":"Nothing runs it"}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	coord := aacp.NewCoordinator(aacp.Options{})
	t.Cleanup(func() { coord.Close(context.Background()) })
	if err := coord.RegisterAgent("echo", aacp.HandlerFunc(func(ctx context.Context, m aacp.Message, _ aacp.State) (any, error) {
		clock.Advance(40 * time.Millisecond)
		var p any
		_ = json.Unmarshal(m.Payload, &p)
		return map[string]any{"type": m.Type, "payload": p, "ctxDepth": DepthOf(ctx)}, nil
	})); err != nil {
		t.Fatal(err)
	}
	if err := coord.RegisterAgent("boom", aacp.HandlerFunc(func(context.Context, aacp.Message, aacp.State) (any, error) {
		return nil, errors.New("the boom agent blew up")
	})); err != nil {
		t.Fatal(err)
	}
	svc.SetCoordinator(coord)
	wf := &workflows{}
	svc.SetWorkflowRunner(wf)
	return svc, wf, clock
}

func TestListFilters(t *testing.T) {
	svc, _, _ := newCatalogue(t)
	tools := NewTools(svc)
	yes, no := true, false
	for _, tc := range []struct {
		name string
		in   ListInput
		want string
	}{
		{"all", ListInput{}, "boom echo flow idle off reviewer shallow"},
		{"team", ListInput{Team: "ops"}, "flow off"},
		{"enabled", ListInput{Enabled: &yes}, "boom echo flow idle reviewer shallow"},
		{"disabled", ListInput{Enabled: &no}, "off"},
		{"capability", ListInput{Capability: "review"}, "reviewer"},
		{"in-process", ListInput{Source: SourceInProcess}, "boom echo"},
		{"profile and team", ListInput{Source: SourceProfile, Team: "test"}, "echo"},
		{"no match", ListInput{Team: "nobody"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tools.List(context.Background(), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(out.AgentIDs, " "); got != tc.want || out.Total != len(out.AgentIDs) || out.Truncated {
				t.Errorf("agentIds %q (total %d, truncated %v), want %q", got, out.Total, out.Truncated, tc.want)
			}
			if len(out.Agents) != len(out.AgentIDs) {
				t.Errorf("%d agents described, want %d", len(out.Agents), len(out.AgentIDs))
			}
		})
	}
	out, _ := tools.List(context.Background(), ListInput{Limit: 2})
	if len(out.Agents) != 2 || len(out.AgentIDs) != 7 || out.Total != 7 {
		t.Errorf("limit 2: %d agents, %d ids, total %d; want 2, 7, 7", len(out.Agents), len(out.AgentIDs), out.Total)
	}
	echo := out.Agents[1]
	if echo.AgentID != "echo" || !slices.Equal(echo.Sources, []string{SourceProfile, SourceInProcess}) || echo.Team != "test" {
		t.Errorf("echo listed as %+v", echo)
	}
	for _, in := range []ListInput{{Limit: -1}, {Limit: 1001}, {Source: "disk"}} {
		if _, err := tools.List(context.Background(), in); core.AsError(err).Code != core.CodeInvalidArgument {
			t.Errorf("List(%+v): %v, want INVALID_ARGUMENT", in, err)
		}
	}
}

func TestGet(t *testing.T) {
	svc, _, _ := newCatalogue(t)
	tools := NewTools(svc)
	out, err := tools.Get(context.Background(), IDInput{AgentID: "reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Orchestration.MaxDelegationDepth != 2 || out.Role != "quality" || len(out.Workflow) != 1 || !out.Enabled ||
		!slices.Equal(out.Sources, []string{SourceProfile}) || out.Orchestration.CanReadWorkspaces[0] != "src" {
		t.Errorf("agent_get reviewer = %+v", out)
	}
	out, _ = tools.Get(context.Background(), IDInput{AgentID: "boom"})
	if out.Description != "" || out.Orchestration.MaxDelegationDepth != DefaultMaxDelegationDepth || !out.Enabled {
		t.Errorf("agent_get boom = %+v, want the defaults of an agent without profile", out)
	}
	_, err = tools.Get(context.Background(), IDInput{AgentID: "nobody"})
	if e := core.AsError(err); e.Code != CodeAgentNotFound || !strings.Contains(e.Message, "nobody") || !strings.Contains(e.Message, "reviewer") {
		t.Errorf("unknown agent: %v; want AGENT_NOT_FOUND naming it and known agents", err)
	}
	if _, err := tools.Get(context.Background(), IDInput{}); core.AsError(err).Code != core.CodeInvalidArgument {
		t.Errorf("empty id: %v, want INVALID_ARGUMENT", err)
	}
}

func TestRun(t *testing.T) {
	svc, wf, _ := newCatalogue(t)
	tools := NewTools(svc)
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		in       RunInput
		ctxDepth int
		code     core.Code
		runner   string
		check    func(t *testing.T, out RunOutput)
	}{
		{name: "in-process", in: RunInput{AgentID: "echo", Input: map[string]any{"x": 1.0}, Task: "say it", SessionID: "s1"}, runner: RunnerInProcess,
			check: func(t *testing.T, out RunOutput) {
				got, _ := json.Marshal(out.Output)
				want := `{"ctxDepth":1,"payload":{"delegation":{"depth":1},"input":{"x":1},"sessionId":"s1","task":"say it"},"type":"agent_run"}`
				if string(got) != want || out.TotalDurationMs != 40 || out.SessionID != "s1" || !out.Success {
					t.Errorf("output %s (%d ms), want %s (40 ms)", got, out.TotalDurationMs, want)
				}
			}},
		{name: "workflow", in: RunInput{AgentID: "flow", DelegationDepth: 2}, runner: RunnerWorkflow,
			check: func(t *testing.T, out RunOutput) {
				if wf.calls[len(wf.calls)-1] != "wf-1" || wf.depth != 3 || out.Depth != 2 {
					t.Errorf("workflow calls %v at depth %d (run depth %d); want wf-1 at 3 (2)", wf.calls, wf.depth, out.Depth)
				}
			}},
		{name: "depth at the profile's limit passes", in: RunInput{AgentID: "reviewer", DelegationDepth: 2}, code: core.CodeNotImplemented},
		{name: "depth past the profile's limit", in: RunInput{AgentID: "reviewer", DelegationDepth: 3}, code: CodeDepthExceeded},
		{name: "depth over the profile's limit", in: RunInput{AgentID: "shallow", DelegationDepth: 1}, code: CodeDepthExceeded},
		{name: "depth from the context", in: RunInput{AgentID: "shallow"}, ctxDepth: 1, code: CodeDepthExceeded},
		{name: "depth zero is allowed", in: RunInput{AgentID: "shallow"}, runner: RunnerWorkflow},
		{name: "depth over the default", in: RunInput{AgentID: "echo", DelegationDepth: DefaultMaxDelegationDepth + 1}, code: CodeDepthExceeded},
		{name: "depth out of range", in: RunInput{AgentID: "echo", DelegationDepth: MaxDelegationDepth + 1}, code: core.CodeInvalidArgument},
		{name: "disabled", in: RunInput{AgentID: "off"}, code: CodePermissionDenied},
		{name: "unknown", in: RunInput{AgentID: "ghost"}, code: CodeAgentNotFound},
		{name: "agent error", in: RunInput{AgentID: "boom"}, code: CodeStageFailed},
		{name: "nothing runs it", in: RunInput{AgentID: "idle"}, code: core.CodeNotImplemented},
		{name: "no agent id", in: RunInput{}, code: core.CodeInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tools.Run(WithDepth(ctx, tc.ctxDepth), tc.in)
			if tc.code != "" {
				if e := core.AsError(err); err == nil || e.Code != tc.code {
					t.Fatalf("Run: %v; want %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Runner != tc.runner {
				t.Errorf("runner %q, want %q", out.Runner, tc.runner)
			}
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}

func TestRunWorkflowErrors(t *testing.T) {
	svc, wf, _ := newCatalogue(t)
	wf.fail = errors.New("step 2 broke")
	_, err := svc.RunAgent(context.Background(), "flow", nil)
	if e := core.AsError(err); e.Code != CodeStageFailed || !strings.Contains(e.Message, "step 2 broke") {
		t.Errorf("failing workflow: %v, want AGENT_STAGE_FAILED with the reason", err)
	}
	wf.fail = core.NewError(core.CodeNotFound, "no workflow wf-1")
	if _, err := svc.RunAgent(context.Background(), "flow", nil); core.AsError(err).Code != core.CodeNotFound {
		t.Errorf("a workflow's own code: %v, want it kept", err)
	}
	svc.SetWorkflowRunner(nil)
	if _, err := svc.RunAgent(context.Background(), "flow", nil); core.AsError(err).Code != core.CodeNotImplemented {
		t.Errorf("no workflow engine: %v, want NOT_IMPLEMENTED", err)
	}
}

func TestNewServiceRefuses(t *testing.T) {
	p := Profile{AgentID: "a", Description: "d"}
	for i, opts := range []Options{
		{Profiles: []Profile{p, p}},
		{Profiles: []Profile{{AgentID: "a"}}},
		{DefaultMaxDepth: MaxDelegationDepth + 1},
	} {
		if _, err := NewService(opts); err == nil {
			t.Errorf("case %d: NewService succeeded", i)
		}
	}
}

func TestManyAgentsTruncated(t *testing.T) {
	coord := aacp.NewCoordinator(aacp.Options{})
	defer coord.Close(context.Background())
	for i := range MaxListedIDs + 3 {
		if err := coord.RegisterAgent(fmt.Sprintf("a%04d", i), aacp.EchoAgent()); err != nil {
			t.Fatal(err)
		}
	}
	svc, _ := NewService(Options{})
	svc.SetCoordinator(coord)
	out, err := NewTools(svc).List(context.Background(), ListInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.AgentIDs) != MaxListedIDs || !out.Truncated || out.Total != MaxListedIDs+3 || len(out.Agents) != DefaultListLimit {
		t.Errorf("%d ids, truncated %v, total %d, %d agents", len(out.AgentIDs), out.Truncated, out.Total, len(out.Agents))
	}
}
