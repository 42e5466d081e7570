package mcp

// Property 5: every tools/call gets exactly one final completion record.

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/jsontext"
)

// ---------------------------------------------------------------------------
// 5. Exactly one final completion record per call.

const (
	tpRecSeed  = 7005
	tpRecCases = 300
	tpRecLimit = 1024
)

// tpRecCall is one call of a records case.
type tpRecCall struct {
	kind   string // ok, fail, boom, typed, typed_bad, nope, huge, slow, block, shape
	args   string
	cancel int // -1: not cancelled; else how many later calls are sent before the cancellation
}

// tpRecCase is one session's calls; with disconnect, blocking calls that
// are not cancelled are still running when the session closes.
type tpRecCase struct {
	calls      []tpRecCall
	disconnect bool
}

func tpRecGen(rc *tpRecCase, c *propRand) {
	*rc = tpRecCase{disconnect: c.Intn(3) == 0}
	kinds := []string{"ok", "ok", "fail", "boom", "typed", "typed_bad", "nope", "huge", "slow", "slow", "slow", "block", "shape"}
	for range 1 + c.Intn(20) {
		call := tpRecCall{kind: kinds[c.Intn(len(kinds))], cancel: -1}
		switch call.kind {
		case "typed":
			call.args = `{"n":` + strconv.Itoa(c.Intn(100)) + `}`
		case "typed_bad":
			call.args = []string{`{}`, `{"n":"x"}`, `{"n":1,"m":2}`}[c.Intn(3)]
		case "huge":
			call.args = `{"s":"` + strings.Repeat("h", tpRecLimit) + `"}`
		case "slow":
			call.args = `{"ms":` + strconv.Itoa(c.Intn(8)) + `,"ignoreCancel":` + strconv.FormatBool(c.RandBool()) + `}`
		case "shape":
			call.args = tpNonObject(c)
		default:
			if c.RandBool() {
				call.args = tpJSONObject(c, 2)
			}
		}
		if call.kind == "block" && !rc.disconnect || c.Intn(4) == 0 {
			call.cancel = c.Intn(3)
		}
		rc.calls = append(rc.calls, call)
	}
}

// tpRecFinals are the outcomes of final records.
var tpRecFinals = map[string]bool{OutcomeSuccess: true, OutcomeToolError: true, OutcomeLateCompleted: true,
	OutcomeAborted: true, OutcomeDisconnectedCompleted: true, OutcomeProtocolError: true}

func TestPropertyCompletionRecords(t *testing.T) {
	forEachTransport(t, testPropertyCompletionRecords)
}

func testPropertyCompletionRecords(t *testing.T, tr transportKind) {
	r := newPropRand(propSeed(tpRecSeed, tr))
	var started sync.Map                  // correlation ids of running block handlers
	startedWake := make(chan struct{}, 1) // a token after every Store
	slow := func(ctx context.Context, req *CallToolRequest) (any, error) {
		args := req.Arguments
		var in struct {
			Ms           int  `json:"ms"`
			IgnoreCancel bool `json:"ignoreCancel"`
		}
		_ = json.Unmarshal(args, &in)
		if in.IgnoreCancel {
			time.Sleep(time.Duration(in.Ms) * time.Millisecond)
			return map[string]any{"slept": in.Ms}, nil
		}
		select {
		case <-time.After(time.Duration(in.Ms) * time.Millisecond):
			return map[string]any{"slept": in.Ms}, nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	setup := func(s *Server) {
		for _, tl := range []Tool{
			{Name: "ok", Handler: tpNoop},
			{Name: "fail", Handler: func(context.Context, *CallToolRequest) (any, error) { return nil, errors.New("no luck") }},
			{Name: "boom", Handler: func(context.Context, *CallToolRequest) (any, error) { panic("boom") }},
			{Name: "typed", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`),
				Handler: tpNoop},
			{Name: "slow", Timeout: 3 * time.Millisecond, Handler: slow},
			{Name: "block", Handler: func(ctx context.Context, _ *CallToolRequest) (any, error) {
				started.Store(CorrelationID(ctx), true)
				select {
				case startedWake <- struct{}{}:
				default: // a token is already there
				}
				select {
				case <-ctx.Done():
					return nil, context.Cause(ctx)
				case <-time.After(5 * time.Second): // never reached by a passing test
					return nil, errors.New("block was neither cancelled nor disconnected")
				}
			}},
		} {
			if err := s.AddTool(tl); err != nil {
				t.Fatal(err)
			}
		}
	}
	outcomes := map[string]int{}
	total := 0
	for i := range propShare(tpRecCases) {
		var rc tpRecCase
		tpRecGen(&rc, r)
		cfg := testConfig()
		cfg.Limits.MaxPayloadBytes = tpRecLimit
		cfg.Limits.MaxConcurrentExecutions = 64
		p := newTPConn(t, tr, cfg, Options{}, setup, Version20251125)
		cid := func(k int) string { return "c" + strconv.Itoa(i) + "-" + strconv.Itoa(k) }
		pending := make([]tpPending, len(rc.calls))
		cancelAt := map[int][]int{} // after sending call k, cancel these
		for k, call := range rc.calls {
			name := call.kind
			switch call.kind {
			case "typed_bad":
				name = "typed"
			case "huge", "shape":
				name = "ok"
			}
			pending[k] = p.request(MethodToolsCall, tpParams(name, call.args, cid(k)))
			if call.cancel >= 0 {
				at := min(k+call.cancel, len(rc.calls)-1)
				cancelAt[at] = append(cancelAt[at], k)
			}
			for _, j := range cancelAt[k] {
				p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + pending[j].id +
					`,"reason":"property test"}}`)
			}
		}
		responses := make([]map[string]json.RawMessage, len(rc.calls))
		for k, call := range rc.calls {
			if call.cancel < 0 && call.kind != "block" {
				responses[k] = p.await(pending[k])
			}
		}
		if rc.disconnect {
			for k, call := range rc.calls {
				if call.kind == "block" && call.cancel < 0 {
					for _, ok := started.Load(cid(k)); !ok; _, ok = started.Load(cid(k)) {
						recv(t, startedWake, "block handler "+cid(k)+" to start")
					}
				}
			}
		}
		p.finish() // closes the session; every handler has returned and written its record
		for k := range rc.calls {
			select {
			case line := <-pending[k].ch: // a cancelled call that was answered anyway
				_ = json.Unmarshal(line, &responses[k])
			default:
			}
		}
		// Group the records by correlation id, in log order.
		byCID := map[string][]map[string]any{}
		for _, r := range p.logs.records() {
			c, _ := r["correlationId"].(string)
			byCID[c] = append(byCID[c], r)
		}
		for k, call := range rc.calls {
			total++
			what := "case " + strconv.Itoa(i) + " call " + strconv.Itoa(k) + " (" + call.kind + " " + clip(call.args, 80) +
				", cancel " + strconv.Itoa(call.cancel) + ", disconnect " + strconv.FormatBool(rc.disconnect) + ")"
			recs := byCID[cid(k)]
			var final map[string]any
			finalAt, timeoutAt, timeouts := -1, -1, 0
			for n, r := range recs {
				switch outcome, _ := r["outcome"].(string); {
				case outcome == OutcomeTimeout:
					timeouts, timeoutAt = timeouts+1, n
				case tpRecFinals[outcome]:
					if final != nil {
						t.Fatalf("%s: two final records: %v and %v", what, final, r)
					}
					final, finalAt = r, n
				default:
					t.Fatalf("%s: record with outcome %q: %v", what, outcome, r)
				}
				if _, has := r["arguments"]; has {
					t.Fatalf("%s: the record holds the arguments: %v", what, r)
				}
			}
			if final == nil {
				t.Fatalf("%s: no final completion record; records %v", what, recs)
			}
			outcome, _ := final["outcome"].(string)
			code, _ := final["errorCode"].(string)
			outcomes[outcome]++
			if timeouts > 1 || (timeouts == 1) != (outcome == OutcomeLateCompleted) || timeoutAt > finalAt {
				t.Fatalf("%s: records %v: a timeout record must come once, before late_completed, and only then", what, recs)
			}
			runID, _ := recs[0]["runId"].(string)
			for _, r := range recs {
				if r["runId"] != recs[0]["runId"] {
					t.Fatalf("%s: records of one call with different runIds: %v", what, recs)
				}
			}
			if (runID == "") != (outcome == OutcomeProtocolError) {
				t.Fatalf("%s: runId %q with outcome %s", what, runID, outcome)
			}
			if outcome != OutcomeProtocolError {
				want := jsontext.CompactLen([]byte(call.args))
				if call.args == "" {
					want = 2
				}
				if pb, _ := final["payloadBytes"].(float64); int(pb) != want {
					t.Fatalf("%s: payloadBytes %v, want %d", what, final["payloadBytes"], want)
				}
			}
			// The outcomes each kind may end with.
			allowed := map[string]string{ // outcome -> errorCode
				"ok":        OutcomeSuccess,
				"typed":     OutcomeSuccess,
				"fail":      OutcomeToolError + " " + string(core.CodeInternal),
				"boom":      OutcomeToolError + " " + string(core.CodeInternal),
				"typed_bad": OutcomeToolError + " " + string(core.CodeInvalidArgument),
				"nope":      OutcomeToolError + " " + string(core.CodeNotFound),
				"huge":      OutcomeToolError + " " + string(core.CodeResourceExhausted),
				"shape":     OutcomeProtocolError,
				"slow":      OutcomeSuccess + "|" + OutcomeLateCompleted,
				"block":     OutcomeDisconnectedCompleted,
			}[call.kind]
			if call.kind == "block" && call.cancel >= 0 {
				allowed = OutcomeAborted
			} else if call.cancel >= 0 && allowed != OutcomeProtocolError {
				// Cancelled before its answer was written (while running,
				// or before: every tools/call answer goes through
				// jsonrpc.Respond, which sends nothing once the client
				// cancelled).
				// The test closes the session without waiting for the
				// answers of cancelled calls: one the server answered just
				// before the cancellation arrived may still be on its way
				// to the transport when the session closes.
				allowed += "|" + OutcomeAborted + "|" + OutcomeDisconnectedCompleted
			}
			got := strings.TrimSpace(outcome + " " + code)
			if outcome == OutcomeLateCompleted || outcome == OutcomeAborted || outcome == OutcomeDisconnectedCompleted {
				got = outcome // the code is the handler's, if any
			}
			if !slices.Contains(strings.Split(allowed, "|"), got) {
				t.Fatalf("%s: final record %q, want one of %q; records %v", what, got, allowed, recs)
			}
			// The response, if any, agrees with the records.
			resp := responses[k]
			switch {
			case resp == nil && call.cancel < 0 && call.kind != "block":
				t.Fatalf("%s: no response", what)
			case resp != nil && (call.kind == "block" || outcome == OutcomeAborted || outcome == OutcomeDisconnectedCompleted):
				t.Fatalf("%s: a cancelled or disconnected call (%s) was answered: %s", what, outcome, tpString(resp))
			case resp == nil:
			case outcome == OutcomeProtocolError:
				if o := tpDecode(t, what, resp); o.rpcCode != -32602 {
					t.Fatalf("%s: protocol_error record for response %s", what, tpString(resp))
				}
			default:
				o := tpDecode(t, what, resp)
				wantResp := map[string]string{OutcomeSuccess: "", OutcomeToolError: code,
					OutcomeLateCompleted: string(core.CodeTimeout)}[outcome]
				if o.rpcCode != 0 || o.code != wantResp || o.isError && o.run != runID {
					t.Fatalf("%s: response %s disagrees with the final record %v", what, tpString(resp), final)
				}
			}
		}
	}
	t.Logf("%d cases, %d calls; final outcomes %v", propShare(tpRecCases), total, outcomes)
}
