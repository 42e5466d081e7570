package trace

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/mcprt/mcprt/domain/internal/check"
	"strings"
	"time"

	"github.com/mcprt/mcprt/domain/toolspec"
)

// TimeFormat is how times are written in tool results (RFC 3339, UTC, with
// nanoseconds).
const TimeFormat = time.RFC3339Nano

func stamp(t time.Time) string { return check.Stamp(t) }

// Tools holds the typed handlers of the trace_* MCP tools, each a
// func(ctx, In) (Out, error) ready for mcp.AddTypedTool.
type Tools struct{ svc *Service }

// NewTools returns the tool handlers over svc.
func NewTools(svc *Service) *Tools { return &Tools{svc: svc} }

// ToolSpecs returns the names, descriptions and annotations of the trace
// tools. All of them only read.
func ToolSpecs() []toolspec.Spec {
	return []toolspec.Spec{
		{Name: "trace_list", Title: "List traces", Description: "List recent traces, newest first (a trace: the calls whose correlationId shares its first '/' segment).",
			ReadOnly: true, Idempotent: true},
		{Name: "trace_get", Title: "Get a trace", Description: "Show every step (tools/call) of a trace: tool, status, duration, error, ids.",
			ReadOnly: true, Idempotent: true},
		{Name: "trace_analyze", Title: "Analyze a trace", Description: "Analyze a trace: slowest step, failures, issues, recommendations, metrics.",
			ReadOnly: true, Idempotent: true},
		{Name: "trace_tree", Title: "Trace delegation tree", Description: "Show a trace as a delegation tree (\"T/a/b\" was delegated from \"T/a\").",
			ReadOnly: true, Idempotent: true},
		{Name: "trace_by_session", Title: "Traces of a session", Description: "List the traced steps of a collaboration session (calls naming its sessionId, and its creation).",
			ReadOnly: true, Idempotent: true},
	}
}

// ListInput is the input of trace_list.
type ListInput struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"1-200, default 10"`
	Status string `json:"status,omitempty" jsonschema:"success or failure"`
	Tool   string `json:"tool,omitempty"`
}

// ListItem is one trace of trace_list.
type ListItem struct {
	TraceID    string  `json:"traceId" jsonschema:"The trace's id"`
	RootTool   string  `json:"rootTool" jsonschema:"The tool of its first step"`
	StartTime  string  `json:"startTime" jsonschema:"When its first step started (RFC 3339, UTC)"`
	EndTime    string  `json:"endTime" jsonschema:"When its last step ended (RFC 3339, UTC)"`
	Status     string  `json:"status" jsonschema:"success or failure (a step failed)"`
	EventCount int     `json:"eventCount" jsonschema:"Number of steps"`
	ErrorCount int     `json:"errorCount" jsonschema:"Number of failed steps"`
	DurationMs float64 `json:"durationMs" jsonschema:"From the first start to the last end, in milliseconds"`
}

// ListOutput is the result of trace_list.
type ListOutput struct {
	Traces []ListItem `json:"traces" jsonschema:"Traces, most recent first"`
	Total  int        `json:"total" jsonschema:"Number of matching traces, listed or not"`
}

// List is the trace_list handler.
func (t *Tools) List(ctx context.Context, in ListInput) (ListOutput, error) {
	sums, total, err := t.svc.List(ctx, ListQuery{Status: in.Status, Tool: in.Tool, Limit: in.Limit})
	if err != nil {
		return ListOutput{}, err
	}
	out := ListOutput{Traces: make([]ListItem, len(sums)), Total: total}
	for i, s := range sums {
		out.Traces[i] = ListItem{TraceID: s.TraceID, RootTool: s.RootTool, StartTime: stamp(s.Start), EndTime: stamp(s.End),
			Status: s.Status(), EventCount: s.Events, ErrorCount: s.Failures, DurationMs: ms(s.End.Sub(s.Start))}
	}
	return out, nil
}

// IDInput is the input of trace_get, trace_analyze and trace_tree.
type IDInput struct {
	TraceID string `json:"traceId"`
}

// EventOutput is one step of a trace.
type EventOutput struct {
	EventID       string          `json:"eventId" jsonschema:"The call's runId"`
	Type          string          `json:"type" jsonschema:"Always tool.invoke"`
	Sequence      int             `json:"sequence" jsonschema:"Position in start order, from 1"`
	Timestamp     string          `json:"timestamp" jsonschema:"When the call started (RFC 3339, UTC)"`
	Tool          string          `json:"tool" jsonschema:"The tool called"`
	Status        string          `json:"status" jsonschema:"success or failure"`
	Outcome       string          `json:"outcome" jsonschema:"success, tool_error, late_completed, aborted or disconnected_completed"`
	DurationMs    float64         `json:"durationMs" jsonschema:"How long the handler ran, in milliseconds"`
	CorrelationID string          `json:"correlationId" jsonschema:"The call's correlation id (its path in the delegation tree)"`
	ParentID      string          `json:"parentId,omitempty" jsonschema:"The correlation path it was delegated from"`
	ErrorCode     string          `json:"errorCode,omitempty" jsonschema:"The error code, when it failed"`
	ErrorMessage  string          `json:"errorMessage,omitempty" jsonschema:"The error message (shortened), when it failed"`
	SessionID     string          `json:"sessionId,omitempty" jsonschema:"The collaboration session it is linked to"`
	ServerID      string          `json:"serverId" jsonschema:"The mcprt process that recorded it"`
	Arguments     json.RawMessage `json:"arguments,omitempty" jsonschema:"The redacted arguments, when trace.captureArguments is on"`
	Result        json.RawMessage `json:"result,omitempty" jsonschema:"The redacted result, when trace.captureArguments is on"`
}

// EventOf returns the EventOutput form of ev at position seq (from 1).
func EventOf(ev Event, seq int) EventOutput {
	return EventOutput{EventID: ev.RunID, Type: "tool.invoke", Sequence: seq, Timestamp: stamp(ev.Start), Tool: ev.Tool,
		Status: ev.Status(), Outcome: ev.Outcome, DurationMs: ms(ev.Duration), CorrelationID: ev.CorrelationID,
		ParentID: ev.ParentID, ErrorCode: ev.ErrorCode, ErrorMessage: ev.ErrorMessage, SessionID: ev.SessionID,
		ServerID: ev.ServerID, Arguments: ev.Args, Result: ev.Result}
}

// GetOutput is the result of trace_get.
type GetOutput struct {
	TraceID    string        `json:"traceId" jsonschema:"The trace's id"`
	StartTime  string        `json:"startTime" jsonschema:"When its first step started"`
	EndTime    string        `json:"endTime" jsonschema:"When its last step ended"`
	Status     string        `json:"status" jsonschema:"success or failure"`
	DurationMs float64       `json:"durationMs" jsonschema:"From the first start to the last end"`
	Events     []EventOutput `json:"events" jsonschema:"The steps in start order (at most 1000)"`
	Truncated  bool          `json:"truncated" jsonschema:"Whether the trace has more steps than listed"`
}

// Get is the trace_get handler.
func (t *Tools) Get(ctx context.Context, in IDInput) (GetOutput, error) {
	evs, truncated, err := t.svc.Get(ctx, in.TraceID)
	if err != nil {
		return GetOutput{}, err
	}
	root := Tree(in.TraceID, evs)
	out := GetOutput{TraceID: in.TraceID, StartTime: stamp(root.Start), EndTime: stamp(root.End), DurationMs: ms(root.End.Sub(root.Start)),
		Status: StatusSuccess, Events: make([]EventOutput, len(evs)), Truncated: truncated}
	if root.Failures > 0 {
		out.Status = StatusFailure
	}
	for i, ev := range evs {
		out.Events[i] = EventOf(ev, i+1)
	}
	return out, nil
}

// StepOutput names a step in trace_analyze.
type StepOutput struct {
	StepID     string  `json:"stepId" jsonschema:"The call's runId"`
	StepName   string  `json:"stepName" jsonschema:"The tool"`
	DurationMs float64 `json:"durationMs" jsonschema:"Its duration in milliseconds"`
}

// PerformanceOutput is the timing part of trace_analyze.
type PerformanceOutput struct {
	TotalDuration       float64    `json:"totalDuration" jsonschema:"From the first start to the last end, in milliseconds"`
	AverageStepDuration float64    `json:"averageStepDuration" jsonschema:"Mean step duration in milliseconds"`
	SlowestStep         StepOutput `json:"slowestStep" jsonschema:"The slowest step"`
}

// IssueOutput is one issue in trace_analyze.
type IssueOutput struct {
	Type     string `json:"type" jsonschema:"error, retry or slow_step"`
	Message  string `json:"message" jsonschema:"What was found"`
	Severity string `json:"severity" jsonschema:"low, medium, high or critical"`
	StepID   string `json:"stepId,omitempty" jsonschema:"The step concerned"`
}

// RecommendationOutput is one recommendation in trace_analyze.
type RecommendationOutput struct {
	Type     string `json:"type" jsonschema:"What it is about: error:<CODE>, performance or coverage"`
	Message  string `json:"message" jsonschema:"What to do"`
	Severity string `json:"severity" jsonschema:"low, medium, high or critical"`
}

// MetricsOutput is the counting part of trace_analyze.
type MetricsOutput struct {
	StepCount    int            `json:"stepCount" jsonschema:"Number of steps analysed"`
	SuccessRate  float64        `json:"successRate" jsonschema:"Share of steps that succeeded, 0 to 1"`
	ErrorCount   int            `json:"errorCount" jsonschema:"Number of failed steps"`
	ErrorsByCode map[string]int `json:"errorsByCode" jsonschema:"Failed steps per error code"`
}

// AnalyzeOutput is the result of trace_analyze.
type AnalyzeOutput struct {
	TraceID         string                 `json:"traceId" jsonschema:"The trace's id"`
	Summary         string                 `json:"summary" jsonschema:"One sentence for people"`
	Performance     PerformanceOutput      `json:"performance" jsonschema:"Timing"`
	Issues          []IssueOutput          `json:"issues" jsonschema:"Failures, retries and slow steps (at most 50)"`
	Recommendations []RecommendationOutput `json:"recommendations" jsonschema:"What to do about them"`
	Metrics         MetricsOutput          `json:"metrics" jsonschema:"Counts"`
	Truncated       bool                   `json:"truncated" jsonschema:"Whether only the first 1000 steps were analysed"`
}

// Analyze is the trace_analyze handler.
func (t *Tools) Analyze(ctx context.Context, in IDInput) (AnalyzeOutput, error) {
	evs, truncated, err := t.svc.Get(ctx, in.TraceID)
	if err != nil {
		return AnalyzeOutput{}, err
	}
	a := Analyze(in.TraceID, evs, truncated)
	out := AnalyzeOutput{TraceID: a.TraceID, Summary: a.Summary, Truncated: a.Truncated,
		Performance: PerformanceOutput{TotalDuration: a.TotalDurationMs, AverageStepDuration: a.AverageStepDuration,
			SlowestStep: StepOutput(a.SlowestStep)},
		Issues: make([]IssueOutput, len(a.Issues)), Recommendations: make([]RecommendationOutput, len(a.Recommendations)),
		Metrics: MetricsOutput{StepCount: a.StepCount, SuccessRate: a.SuccessRate, ErrorCount: a.ErrorCount, ErrorsByCode: a.ErrorsByCode}}
	for i, is := range a.Issues {
		out.Issues[i] = IssueOutput(is)
	}
	for i, r := range a.Recommendations {
		out.Recommendations[i] = RecommendationOutput(r)
	}
	return out, nil
}

// TreeStep is one call in a tree node.
type TreeStep struct {
	RunID      string  `json:"runId" jsonschema:"The call's runId"`
	Tool       string  `json:"tool" jsonschema:"The tool"`
	Status     string  `json:"status" jsonschema:"success or failure"`
	ErrorCode  string  `json:"errorCode,omitempty" jsonschema:"The error code, when it failed"`
	StartTime  string  `json:"startTime" jsonschema:"When it started"`
	DurationMs float64 `json:"durationMs" jsonschema:"How long it ran, in milliseconds"`
}

// TreeNode is one correlation path of trace_tree, listed depth first.
type TreeNode struct {
	ID         string     `json:"id" jsonschema:"The correlation path"`
	ParentID   string     `json:"parentId,omitempty" jsonschema:"The parent path (absent for the root)"`
	Depth      int        `json:"depth" jsonschema:"0 for the root"`
	StartTime  string     `json:"startTime,omitempty" jsonschema:"First start in the subtree"`
	DurationMs float64    `json:"durationMs" jsonschema:"From the subtree's first start to its last end"`
	Failures   int        `json:"failures" jsonschema:"Failed steps in the subtree"`
	Steps      []TreeStep `json:"steps" jsonschema:"Calls made under this path, in start order"`
}

// TreeOutput is the result of trace_tree.
type TreeOutput struct {
	TraceID   string     `json:"traceId" jsonschema:"The trace's id"`
	Nodes     []TreeNode `json:"nodes" jsonschema:"The tree, depth first (a node's children follow it)"`
	Text      string     `json:"text" jsonschema:"The tree drawn as text, one step per line"`
	Truncated bool       `json:"truncated" jsonschema:"Whether the trace has more than 1000 steps"`
}

// TreeOf returns the TreeOutput form of a trace's events.
func TreeOf(traceID string, evs []Event, truncated bool) TreeOutput {
	root := Tree(traceID, evs)
	out := TreeOutput{TraceID: traceID, Nodes: []TreeNode{}, Text: Render(root), Truncated: truncated}
	var walk func(n *Node, depth int)
	walk = func(n *Node, depth int) {
		tn := TreeNode{ID: n.ID, ParentID: n.ParentID, Depth: depth, StartTime: stamp(n.Start), DurationMs: ms(n.End.Sub(n.Start)),
			Failures: n.Failures, Steps: make([]TreeStep, len(n.Steps))}
		for i, st := range n.Steps {
			tn.Steps[i] = TreeStep{RunID: st.RunID, Tool: st.Tool, Status: st.Status(), ErrorCode: st.ErrorCode,
				StartTime: stamp(st.Start), DurationMs: ms(st.Duration)}
		}
		out.Nodes = append(out.Nodes, tn)
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	walk(root, 0)
	return out
}

// Tree is the trace_tree handler.
func (t *Tools) Tree(ctx context.Context, in IDInput) (TreeOutput, error) {
	evs, truncated, err := t.svc.Get(ctx, in.TraceID)
	if err != nil {
		return TreeOutput{}, err
	}
	return TreeOf(in.TraceID, evs, truncated), nil
}

// Render draws a tree as text: a line per node with its span, and a line
// per step with its tool, duration and status.
func Render(root *Node) string {
	var b strings.Builder
	var walk func(n *Node, prefix string)
	line := func(prefix, text string) { b.WriteString(prefix + text + "\n") }
	walk = func(n *Node, prefix string) {
		items := len(n.Steps) + len(n.Children)
		k := 0
		branch := func() (string, string) {
			k++
			if k == items {
				return prefix + "└─ ", prefix + "   "
			}
			return prefix + "├─ ", prefix + "│  "
		}
		// Steps and child paths, merged in start order.
		si, ci := 0, 0
		for si < len(n.Steps) || ci < len(n.Children) {
			if ci >= len(n.Children) || si < len(n.Steps) && !n.Steps[si].Start.After(n.Children[ci].Start) {
				st := n.Steps[si]
				si++
				head, _ := branch()
				status := "ok"
				if !st.Success {
					status = "FAILED " + orUnknown(st.ErrorCode)
				}
				line(head, fmt.Sprintf("%s  %.1f ms  %s  [%s]", st.Tool, ms(st.Duration), status, st.RunID))
				continue
			}
			c := n.Children[ci]
			ci++
			head, next := branch()
			line(head, fmt.Sprintf("%s  %.1f ms%s", c.ID, ms(c.End.Sub(c.Start)), failures(c.Failures)))
			walk(c, next)
		}
	}
	line("", fmt.Sprintf("trace %s  %.1f ms%s", root.ID, ms(root.End.Sub(root.Start)), failures(root.Failures)))
	walk(root, "")
	return b.String()
}

func failures(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("  (%d failed)", n)
}

// SessionInput is the input of trace_by_session.
type SessionInput struct {
	SessionID string `json:"sessionId"`
	Limit     int    `json:"limit,omitempty" jsonschema:"1-1000, default 100"`
}

// SessionOutput is the result of trace_by_session.
type SessionOutput struct {
	SessionID string        `json:"sessionId" jsonschema:"The session"`
	TraceIDs  []string      `json:"traceIds" jsonschema:"The traces these steps belong to, in order of appearance"`
	Events    []EventOutput `json:"events" jsonschema:"The steps linked to the session, in start order"`
	Truncated bool          `json:"truncated" jsonschema:"Whether more steps exist than listed"`
}

// BySession is the trace_by_session handler.
func (t *Tools) BySession(ctx context.Context, in SessionInput) (SessionOutput, error) {
	evs, truncated, err := t.svc.BySession(ctx, in.SessionID, in.Limit)
	if err != nil {
		return SessionOutput{}, err
	}
	out := SessionOutput{SessionID: in.SessionID, TraceIDs: []string{}, Events: make([]EventOutput, len(evs)), Truncated: truncated}
	seen := map[string]bool{}
	for i, ev := range evs {
		out.Events[i] = EventOf(ev, i+1)
		if !seen[ev.TraceID] {
			seen[ev.TraceID] = true
			out.TraceIDs = append(out.TraceIDs, ev.TraceID)
		}
	}
	return out, nil
}
