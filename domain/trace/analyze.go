package trace

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Thresholds of Analyze.
const (
	// SlowStep is the duration from which a step is reported as slow.
	SlowStep = 5 * time.Second
	// SlowFactor flags a step that took this many times the trace's
	// median step (and at least SlowFactorFloor).
	SlowFactor      = 10
	SlowFactorFloor = 100 * time.Millisecond
	// maxIssues bounds the issues Analyze reports.
	maxIssues = 50
)

// Severity of an issue.
const (
	SeverityLow      = "low"
	SeverityMedium   = "medium"
	SeverityHigh     = "high"
	SeverityCritical = "critical"
)

// Step names the slowest step.
type Step struct {
	StepID     string // the call's runId
	StepName   string // the tool
	DurationMs float64
}

// Issue is something wrong or suspicious in a trace.
type Issue struct {
	Type     string
	Message  string
	Severity string
	StepID   string
}

// Recommendation is something to do about the issues.
type Recommendation struct {
	Type     string
	Message  string
	Severity string
}

// Analysis is the result of Analyze.
type Analysis struct {
	TraceID string
	Summary string
	// TotalDurationMs spans the first start to the last end.
	TotalDurationMs     float64
	AverageStepDuration float64 // ms
	SlowestStep         Step
	Issues              []Issue
	Recommendations     []Recommendation
	StepCount           int
	SuccessRate         float64 // 0..1
	ErrorCount          int
	ErrorsByCode        map[string]int
	Truncated           bool
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Analyze looks at a trace's events (in start order): timing, failures by
// code, slow steps, retries, and what to do about them.
func Analyze(traceID string, events []Event, truncated bool) Analysis {
	a := Analysis{TraceID: traceID, StepCount: len(events), ErrorsByCode: map[string]int{}, Truncated: truncated,
		Issues: []Issue{}, Recommendations: []Recommendation{}}
	if len(events) == 0 {
		a.Summary = "the trace has no steps"
		return a
	}
	start, end := events[0].Start, events[0].End()
	var total time.Duration
	durs := make([]time.Duration, len(events))
	slowest := events[0]
	for i, ev := range events {
		if ev.Start.Before(start) {
			start = ev.Start
		}
		if ev.End().After(end) {
			end = ev.End()
		}
		total += ev.Duration
		durs[i] = ev.Duration
		if ev.Duration > slowest.Duration {
			slowest = ev
		}
		if !ev.Success {
			a.ErrorCount++
			code := ev.ErrorCode
			if code == "" {
				code = "UNKNOWN"
			}
			a.ErrorsByCode[code]++
		}
	}
	a.TotalDurationMs = ms(end.Sub(start))
	a.AverageStepDuration = ms(total / time.Duration(len(events)))
	a.SlowestStep = Step{StepID: slowest.RunID, StepName: slowest.Tool, DurationMs: ms(slowest.Duration)}
	a.SuccessRate = float64(len(events)-a.ErrorCount) / float64(len(events))

	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	median := durs[len(durs)/2]
	add := func(is Issue) {
		if len(a.Issues) < maxIssues {
			a.Issues = append(a.Issues, is)
		}
	}
	failedBefore := map[string]bool{} // tool -> a call of it failed earlier
	retried := map[string]bool{}
	for _, ev := range events {
		switch {
		case !ev.Success:
			add(Issue{Type: "error", Severity: errorSeverity(ev.ErrorCode), StepID: ev.RunID,
				Message: fmt.Sprintf("%s failed with %s (%s)%s", ev.Tool, orUnknown(ev.ErrorCode), ev.Outcome, messageTail(ev.ErrorMessage))})
			failedBefore[ev.Tool] = true
		case failedBefore[ev.Tool] && !retried[ev.Tool]:
			retried[ev.Tool] = true
			add(Issue{Type: "retry", Severity: SeverityLow, StepID: ev.RunID,
				Message: fmt.Sprintf("%s succeeded after an earlier failure in this trace", ev.Tool)})
		}
		if ev.Duration >= SlowStep || len(events) > 2 && ev.Duration >= SlowFactorFloor && ev.Duration > SlowFactor*median {
			add(Issue{Type: "slow_step", Severity: SeverityMedium, StepID: ev.RunID,
				Message: fmt.Sprintf("%s took %.1f ms (median step %.1f ms)", ev.Tool, ms(ev.Duration), ms(median))})
		}
	}
	a.Recommendations = recommend(a)
	a.Summary = fmt.Sprintf("%d step(s) in %.1f ms, %d failed (%.0f%% success); slowest: %s at %.1f ms",
		a.StepCount, a.TotalDurationMs, a.ErrorCount, a.SuccessRate*100, slowest.Tool, ms(slowest.Duration))
	return a
}

func orUnknown(code string) string {
	if code == "" {
		return "an unknown error"
	}
	return code
}

func messageTail(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}

// errorSeverity ranks a failure: internal failures are high, refusals
// the caller can fix are medium, transient ones low.
func errorSeverity(code string) string {
	switch code {
	case "INTERNAL", "AUDIT_ENTER_FAILED":
		return SeverityHigh
	case "TIMEOUT", "RESOURCE_EXHAUSTED":
		return SeverityMedium
	case "":
		return SeverityHigh
	default:
		return SeverityMedium
	}
}

// recommend turns the error codes and issues into advice.
func recommend(a Analysis) []Recommendation {
	out := []Recommendation{}
	codes := make([]string, 0, len(a.ErrorsByCode))
	for c := range a.ErrorsByCode {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		n := a.ErrorsByCode[c]
		var msg string
		switch {
		case c == "TIMEOUT":
			msg = "calls hit their deadline: give the tool less work per call, or raise tools.defaultTimeoutMs"
		case c == "RESOURCE_EXHAUSTED":
			msg = "calls were refused for lack of capacity: retry with exponential backoff and jitter, send smaller payloads, or raise resources.maxConcurrentExecutions"
		case c == "INVALID_ARGUMENT":
			msg = "arguments were refused: read the tool's inputSchema (tools/list) and the error's details before retrying"
		case c == "INTERNAL":
			msg = "a tool failed internally: this is not the caller's fault; report it with the step's runId"
		case strings.HasSuffix(c, "NOT_FOUND"):
			msg = "something named in the arguments does not exist: list what exists before using it"
		default:
			msg = "see the failing steps' error messages"
		}
		out = append(out, Recommendation{Type: "error:" + c, Severity: errorSeverity(c),
			Message: fmt.Sprintf("%d call(s) failed with %s: %s", n, c, msg)})
	}
	for _, is := range a.Issues {
		if is.Type == "slow_step" {
			out = append(out, Recommendation{Type: "performance", Severity: SeverityLow,
				Message: "some steps are much slower than the rest: check them for large inputs or contention (several processes writing one store)"})
			break
		}
	}
	if a.Truncated {
		out = append(out, Recommendation{Type: "coverage", Severity: SeverityLow,
			Message: fmt.Sprintf("only the first %d steps were analysed: use distinct correlation ids per task to keep traces small", MaxTraceEvents)})
	}
	return out
}
