package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// fakeTool is a tool of fakeInvoker.
type fakeTool func(ctx context.Context, args map[string]any) (any, error)

// fakeInvoker calls fakeTools and counts the calls.
type fakeInvoker struct {
	mu    sync.Mutex
	tools map[string]fakeTool
	calls []ToolCall
}

func (f *fakeInvoker) HasTool(name string) bool { _, ok := f.tools[name]; return ok }

func (f *fakeInvoker) InvokeTool(ctx context.Context, call ToolCall) (json.RawMessage, error) {
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	var args map[string]any
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return nil, err
	}
	out, err := f.tools[call.Name](ctx, args)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

func (f *fakeInvoker) callList() []ToolCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ToolCall(nil), f.calls...)
}

// recTracer keeps the events.
type recTracer struct {
	mu  sync.Mutex
	evs []StepEvent
}

func (r *recTracer) Step(ev StepEvent) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
}

// engineWith parses docs and returns an engine over them with inv, a
// manual clock and a tracer.
func engineWith(t *testing.T, inv *fakeInvoker, docs ...string) (*Engine, *core.ManualClock, *recTracer) {
	t.Helper()
	var defs []*Definition
	for _, doc := range docs {
		d, err := Parse([]byte(doc), "test")
		if err != nil {
			t.Fatal(err)
		}
		defs = append(defs, d)
	}
	clock := core.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	tr := &recTracer{}
	e := NewEngine(defs, Options{Clock: clock, Tracer: tr})
	if inv != nil {
		e.SetInvoker(inv)
	}
	return e, clock, tr
}

var (
	echoTool = func(_ context.Context, args map[string]any) (any, error) { return args, nil }
	failTool = func(context.Context, map[string]any) (any, error) {
		return nil, core.NewError(core.CodeInternal, "boom")
	}
)

func TestRunTemplatesAndOutput(t *testing.T) {
	inv := &fakeInvoker{tools: map[string]fakeTool{"echo": echoTool}}
	e, _, tr := engineWith(t, inv, `{"id":"w","name":"W","output":{"final":"{{steps.b.output.got}}"},
		"inputSchema":{"type":"object","required":["topic"],"properties":{"topic":{"type":"string"}}},
		"steps":[{"id":"a","tool":"echo","input":{"t":"{{input.topic}}","n":3}},
		         {"id":"b","tool":"echo","input":{"got":"{{steps.a.output}}","note":"topic={{input.topic}}"}}]}`)
	input := map[string]any{"topic": "go"}
	res, err := e.Run(context.Background(), RunRequest{WorkflowID: "w", Input: input, CorrelationID: "T"})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res.Output); string(b) != `{"final":{"n":3,"t":"go"}}` {
		t.Fatalf("output %s", b)
	}
	if !res.Success || res.Status != RunSucceeded || strings.Join(res.StepsCompleted, ",") != "a,b" || res.Steps[1].Attempts != 1 {
		t.Fatalf("%+v", res)
	}
	calls := inv.callList()
	if string(calls[1].Args) != `{"got":{"n":3,"t":"go"},"note":"topic=go"}` || calls[0].CorrelationID != "T/a" || calls[1].CorrelationID != "T/b" {
		t.Fatalf("calls %+v", calls)
	}
	if len(input) != 1 || input["topic"] != "go" {
		t.Fatalf("the input was modified: %v", input)
	}
	if len(tr.evs) != 2 || tr.evs[0].CorrelationID != "T/a" || tr.evs[1].Name != "echo" || tr.evs[1].Err != nil {
		t.Fatalf("traced %+v", tr.evs)
	}
}

func TestRunRefusesBeforeAnyStep(t *testing.T) {
	inv := &fakeInvoker{tools: map[string]fakeTool{"echo": echoTool}}
	e, _, _ := engineWith(t, inv,
		`{"id":"needs","name":"N","inputSchema":{"type":"object","required":["x"]},"steps":[{"id":"a","tool":"echo"}]}`,
		`{"id":"unknown-tool","name":"U","steps":[{"id":"a","tool":"echo"},{"id":"b","tool":"no_such_tool"}]}`,
		`{"id":"off","name":"O","status":"inactive","steps":[{"id":"a","tool":"echo"}]}`)
	tests := []struct {
		id   string
		in   map[string]any
		code core.Code
		want string
	}{
		{"missing", nil, CodeWorkflowNotFound, "workflow_list shows"},
		{"needs", map[string]any{"y": 1}, core.CodeInvalidArgument, "inputSchema"},
		{"unknown-tool", nil, CodeValidationError, "no_such_tool"},
		{"off", nil, CodeValidationError, "inactive"},
		{"needs", map[string]any{"x": strings.Repeat("a", MaxInputBytes)}, core.CodeInvalidArgument, "limit"},
	}
	for _, tc := range tests {
		res, err := e.Run(context.Background(), RunRequest{WorkflowID: tc.id, Input: tc.in})
		if ce := core.AsError(err); res != nil || ce.Code != tc.code || !strings.Contains(ce.Message, tc.want) {
			t.Errorf("%s: got %v, %v; want %s saying %q", tc.id, res, err, tc.code, tc.want)
		}
	}
	if n := len(inv.callList()); n != 0 {
		t.Fatalf("%d tool calls; a refused run calls none", n)
	}
}

func TestRunFailurePolicies(t *testing.T) {
	inv := &fakeInvoker{tools: map[string]fakeTool{"echo": echoTool, "fail": failTool}}
	tests := []struct {
		name, doc, status, completed string
		code                         core.Code
		statuses                     string
	}{
		{"stop", def(`[{"id":"a","tool":"fail"},{"id":"b","tool":"echo"}]`), RunFailed, "", CodeStepFailed, "failed,skipped"},
		{"continue", def(`[{"id":"a","tool":"fail","onFailure":"continue"},{"id":"b","tool":"echo"}]`), RunPartial, "b", "", "failed,succeeded"},
		{"continue then use", def(`[{"id":"a","tool":"fail","onFailure":"continue"},{"id":"b","tool":"echo","input":{"x":"{{steps.a.output}}"}}]`),
			RunFailed, "", CodeStepFailed, "failed,failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, _, _ := engineWith(t, inv, tc.doc)
			res, err := e.Run(context.Background(), RunRequest{WorkflowID: "w"})
			if res == nil || res.Status != tc.status || strings.Join(res.StepsCompleted, ",") != tc.completed || res.Success {
				t.Fatalf("result %+v", res)
			}
			var statuses []string
			for _, s := range res.Steps {
				statuses = append(statuses, s.Status)
			}
			if strings.Join(statuses, ",") != tc.statuses {
				t.Fatalf("step statuses %v, want %s", statuses, tc.statuses)
			}
			if tc.code == "" {
				if err != nil || res.Steps[0].Error.Code != "INTERNAL" {
					t.Fatalf("err %v, step error %+v", err, res.Steps[0].Error)
				}
				return
			}
			if ce := core.AsError(err); ce.Code != tc.code || res.Error == nil || res.Error.Code != string(tc.code) || ce.Details["runId"] != res.RunID {
				t.Fatalf("err %v, run error %+v", err, res.Error)
			}
		})
	}
}

// backoffClock is a ManualClock that reports the timers armed for less
// than the default step timeout: the backoff waits.
type backoffClock struct {
	*core.ManualClock
	armed chan time.Duration
}

func (c *backoffClock) AfterFunc(d time.Duration, f func()) core.Timer {
	t := c.ManualClock.AfterFunc(d, f)
	if d < DefaultStepTimeoutMs*time.Millisecond {
		c.armed <- d
	}
	return t
}

func TestRunRetriesWithBackoff(t *testing.T) {
	clock := &backoffClock{ManualClock: core.NewManualClock(time.Unix(0, 0)), armed: make(chan time.Duration, 10)}
	var mu sync.Mutex
	var at []time.Time
	inv := &fakeInvoker{tools: map[string]fakeTool{"flaky": func(context.Context, map[string]any) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		at = append(at, clock.Now())
		if len(at) < 3 {
			return nil, core.NewError(core.CodeTimeout, "not yet")
		}
		return map[string]any{"ok": true}, nil
	}}}
	d, err := Parse([]byte(def(`[{"id":"a","tool":"flaky","retries":3,"backoffMs":100}]`)), "test")
	if err != nil {
		t.Fatal(err)
	}
	tr := &recTracer{}
	e := NewEngine([]*Definition{d}, Options{Clock: clock, Tracer: tr})
	e.SetInvoker(inv)
	var res *RunResult
	done := make(chan error, 1)
	go func() {
		var err error
		res, err = e.Run(context.Background(), RunRequest{WorkflowID: "w", CorrelationID: "R"})
		done <- err
	}()
	var waits []time.Duration
	for range 2 {
		w := <-clock.armed
		waits = append(waits, w)
		clock.Advance(w)
	}
	if err := <-done; err != nil || res.Steps[0].Attempts != 3 || res.Steps[0].Status != StepSucceeded || res.Steps[0].DurationMs != 300 {
		t.Fatalf("%v %+v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if g1, g2 := at[1].Sub(at[0]), at[2].Sub(at[1]); waits[0] != 100*time.Millisecond || waits[1] != 200*time.Millisecond ||
		g1 != waits[0] || g2 != waits[1] {
		t.Fatalf("backoff waits %v, gaps between attempts %v and %v; want 100 ms then 200 ms (doubling)", waits, g1, g2)
	}
	if len(tr.evs) != 3 || tr.evs[0].Err == nil || tr.evs[2].Err != nil || tr.evs[2].CorrelationID != "R/a" {
		t.Fatalf("traced %d attempts: %+v", len(tr.evs), tr.evs)
	}
}

func TestRunStepTimeoutAbandonsAStubbornStep(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	inv := &fakeInvoker{tools: map[string]fakeTool{"stubborn": func(context.Context, map[string]any) (any, error) {
		<-release // ignores its context
		return "late", nil
	}, "echo": echoTool}}
	e, clock, _ := engineWith(t, inv, def(`[{"id":"slow","tool":"stubborn","timeoutMs":500},{"id":"b","tool":"echo"}]`))
	done := make(chan error, 1)
	var res *RunResult
	go func() {
		var err error
		res, err = e.Run(context.Background(), RunRequest{WorkflowID: "w"})
		done <- err
	}()
	if err := clock.WaitForTimers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(499 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the run ended before the step's timeout: %v", err)
	default:
	}
	clock.Advance(time.Millisecond)
	err := <-done
	ce := core.AsError(err)
	if ce.Code != CodeStepFailed || ce.Details["stepCode"] != "TIMEOUT" || res.Steps[0].Error.Code != "TIMEOUT" ||
		res.Steps[1].Status != StepSkipped || res.Steps[0].DurationMs != 500 {
		t.Fatalf("err %v, result %+v", err, res)
	}
}

func TestRunTimeoutAndCancellation(t *testing.T) {
	started := make(chan struct{}, 1)
	inv := &fakeInvoker{tools: map[string]fakeTool{"block": func(ctx context.Context, _ map[string]any) (any, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}, "echo": echoTool}}
	e, clock, _ := engineWith(t, inv, `{"id":"w","name":"W","timeoutMs":1000,"steps":[{"id":"a","tool":"block"},{"id":"b","tool":"echo"}]}`,
		`{"id":"c","name":"C","steps":[{"id":"a","tool":"echo"},{"id":"b","tool":"block","retries":5},{"id":"z","tool":"echo"}]}`)

	// The workflow's own timeout.
	done := make(chan error, 1)
	var res *RunResult
	go func() {
		var err error
		res, err = e.Run(context.Background(), RunRequest{WorkflowID: "w"})
		done <- err
	}()
	<-started
	if err := clock.WaitForTimers(context.Background(), 2); err != nil { // the run's and the attempt's
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := <-done; core.AsError(err).Code != CodeWorkflowTimeout || res.Status != RunTimedOut || !core.AsError(err).Retryable {
		t.Fatalf("timeout: %v %+v", err, res)
	}

	// Cancellation mid-run: no retry, later steps skipped.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		var err error
		res, err = e.Run(ctx, RunRequest{WorkflowID: "c"})
		done <- err
	}()
	<-started
	cancel()
	if err := <-done; core.AsError(err).Code != CodeWorkflowCancelled || res.Status != RunCancelled ||
		strings.Join(res.StepsCompleted, ",") != "a" || res.Steps[1].Attempts != 1 || res.Steps[2].Status != StepSkipped {
		t.Fatalf("cancel: %v %+v", err, res)
	}

	// A call deadline already passed.
	dctx, dcancel := context.WithDeadline(context.Background(), clock.Now().Add(-time.Second))
	defer dcancel()
	if _, err := e.Run(dctx, RunRequest{WorkflowID: "c"}); core.AsError(err).Code != CodeWorkflowTimeout {
		t.Fatalf("past deadline: %v", err)
	}
}

type agentFunc func(ctx context.Context, id string, in map[string]any) (any, error)

func (f agentFunc) RunAgent(ctx context.Context, id string, in map[string]any) (any, error) {
	return f(ctx, id, in)
}

func TestAgentSteps(t *testing.T) {
	e, _, tr := engineWith(t, &fakeInvoker{}, def(`[{"id":"ask","agent":"reviewer","input":{"q":"{{input.q}}"}}]`))
	_, err := e.Run(context.Background(), RunRequest{WorkflowID: "w", Input: map[string]any{"q": "why"}})
	if ce := core.AsError(err); ce.Code != CodeStepFailed || ce.Details["stepCode"] != string(CodeAgentsUnavailable) ||
		!strings.Contains(ce.Message, "agents are not available") {
		t.Fatalf("without a runner: %v", err)
	}
	e.SetAgentRunner(agentFunc(func(_ context.Context, id string, in map[string]any) (any, error) {
		return map[string]any{"agent": id, "answer": in["q"]}, nil
	}))
	out, err := e.RunWorkflow(context.Background(), "w", map[string]any{"q": "why"})
	res, _ := out.(*RunResult)
	if err != nil || res == nil {
		t.Fatalf("%v %v", out, err)
	}
	if b, _ := json.Marshal(res.Output); string(b) != `{"agent":"reviewer","answer":"why"}` {
		t.Fatalf("output %s", b)
	}
	last := tr.evs[len(tr.evs)-1]
	if last.Step != "" || last.Name != "workflow:w" || tr.evs[len(tr.evs)-2].Name != "agent:reviewer" {
		t.Fatalf("RunWorkflow traces the run after its steps: %+v", tr.evs)
	}
}

func TestNestingIsBounded(t *testing.T) {
	var e *Engine
	inv := &fakeInvoker{tools: map[string]fakeTool{"self": func(ctx context.Context, _ map[string]any) (any, error) {
		_, err := e.RunWorkflow(ctx, "w", nil)
		return nil, err
	}}}
	e, _, _ = engineWith(t, inv, def(`[{"id":"again","tool":"self"}]`))
	_, err := e.RunWorkflow(context.Background(), "w", nil)
	var ce *core.Error
	for errors.As(err, &ce) && ce.Code == CodeStepFailed {
		err = errors.New(ce.Message)
	}
	if !strings.Contains(err.Error(), string(CodeNestingTooDeep)) || len(inv.callList()) != MaxNesting {
		t.Fatalf("%d calls, err %v", len(inv.callList()), err)
	}
}

// A step whose tool panics fails with INTERNAL saying so; the engine and
// the run go on (onFailure continue runs the next step).
func TestStepPanicIsInternal(t *testing.T) {
	inv := &fakeInvoker{tools: map[string]fakeTool{"echo": echoTool,
		"panics": func(context.Context, map[string]any) (any, error) { panic("kaboom") }}}
	e, _, _ := engineWith(t, inv, `{"id":"w","name":"W","steps":[{"id":"a","tool":"panics","onFailure":"continue"},{"id":"b","tool":"echo"}]}`)
	res, err := e.Run(context.Background(), RunRequest{WorkflowID: "w"})
	if err != nil || res == nil || res.Status != RunPartial || len(res.Steps) != 2 {
		t.Fatalf("run %+v, %v", res, err)
	}
	got := res.Steps[0].Error
	if got == nil || got.Code != "INTERNAL" || !strings.Contains(got.Message, `step "a" failed unexpectedly (it panicked: kaboom)`) {
		t.Fatalf("step error %+v", got)
	}
	if res.Steps[1].Status != "succeeded" {
		t.Fatalf("the next step: %+v", res.Steps[1])
	}
}
