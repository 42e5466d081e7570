package mcp

// Property 4: no more handlers run at once than resources.maxConcurrentExecutions.

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// ---------------------------------------------------------------------------
// 4. The concurrency limit holds.

const (
	tpConcSeed  = 7004
	tpConcCases = 100
)

// tpConcCall is one call of a burst.
type tpConcCall struct {
	tool         string // work (1 s timeout), work_to (3 ms timeout), work_x (exclusive, 4 ms) or obs
	ms           int
	ignoreCancel bool
}

// tpConcCase is one server's limit and the bursts sent to it.
type tpConcCase struct {
	max    int
	bursts [][]tpConcCall
}

func tpConcGen(cc *tpConcCase, c *propRand) {
	*cc = tpConcCase{max: 1 + c.Intn(5)}
	for range 1 + c.Intn(5) {
		burst := make([]tpConcCall, 1+c.Intn(12))
		for i := range burst {
			burst[i] = tpConcCall{tool: []string{"work", "work", "work_to", "work_x", "obs"}[c.Intn(5)],
				ms: c.Intn(8), ignoreCancel: c.Intn(3) == 0}
		}
		cc.bursts = append(cc.bursts, burst)
	}
}

func TestPropertyConcurrencyLimit(t *testing.T) {
	forEachTransport(t, testPropertyConcurrencyLimit)
}

func testPropertyConcurrencyLimit(t *testing.T, tr transportKind) {
	r := newPropRand(propSeed(tpConcSeed, tr))
	outcomes := map[string]int{}
	maxSeenAll := 0
	for i := range propShare(tpConcCases) {
		var cc tpConcCase
		tpConcGen(&cc, r)
		var (
			running atomic.Int64 // handlers of slot-taking tools running now
			maxSeen atomic.Int64
			xRun    atomic.Int64 // handlers of the exclusive tool running now
			over    atomic.Value // a violation seen inside a handler
		)
		work := func(ctx context.Context, req *CallToolRequest) (any, error) {
			args := req.Arguments
			if bytes.Contains(args, []byte(`"exclusive":true`)) {
				if x := xRun.Add(1); x > 1 {
					over.Store("exclusive handlers running at once: " + strconv.FormatInt(x, 10))
				}
				defer xRun.Add(-1)
			}
			n := running.Add(1)
			defer running.Add(-1)
			for m := maxSeen.Load(); n > m && !maxSeen.CompareAndSwap(m, n); m = maxSeen.Load() {
			}
			if n > int64(cc.max) {
				over.Store("handlers running at once: " + strconv.FormatInt(n, 10))
			}
			var in struct {
				Ms           int  `json:"ms"`
				IgnoreCancel bool `json:"ignoreCancel"`
			}
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			d := time.Duration(in.Ms) * time.Millisecond
			if in.IgnoreCancel {
				time.Sleep(d)
				return map[string]any{"slept": in.Ms}, nil
			}
			select {
			case <-time.After(d):
				return map[string]any{"slept": in.Ms}, nil
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		var srv *Server
		obs := func(context.Context, *CallToolRequest) (any, error) {
			st := srv.Stats()
			if st.ConcurrentExecutions > cc.max {
				over.Store("slots in use: " + strconv.Itoa(st.ConcurrentExecutions))
			}
			return map[string]any{"inUse": st.ConcurrentExecutions}, nil
		}
		cfg := testConfig()
		cfg.Limits.MaxConcurrentExecutions = cc.max
		cfg.Limits.ToolTimeout = 1000 * time.Millisecond
		p := newTPConn(t, tr, cfg, Options{}, func(s *Server) {
			srv = s
			for _, tl := range []Tool{
				{Name: "work", Handler: work},
				{Name: "work_to", Timeout: 3 * time.Millisecond, Handler: work},
				{Name: "work_x", Exclusive: true, Timeout: 4 * time.Millisecond, Handler: work},
				{Name: "obs", Observer: true, Handler: obs},
			} {
				if err := s.AddTool(tl); err != nil {
					t.Fatal(err)
				}
			}
		}, Version20251125)
		for _, burst := range cc.bursts {
			pending := make([]tpPending, len(burst))
			for k, call := range burst {
				args := ""
				if call.tool != "obs" {
					args = `{"ms":` + strconv.Itoa(call.ms) + `,"ignoreCancel":` + strconv.FormatBool(call.ignoreCancel) +
						`,"exclusive":` + strconv.FormatBool(call.tool == "work_x") + `}`
				}
				pending[k] = p.request(MethodToolsCall, tpParams(call.tool, args, ""))
			}
			for k, call := range burst {
				o := tpDecode(t, pending[k].line, p.await(pending[k]))
				got := "success"
				switch {
				case o.rpcCode != 0:
					t.Fatalf("case %d: %s: JSON-RPC error %d", i, pending[k].line, o.rpcCode)
				case o.isError:
					got = o.code
				}
				outcomes[call.tool+" "+got]++
				switch {
				case call.tool == "obs" && got != "success":
					t.Fatalf("case %d: observer call answered %s: %s", i, got, o.text)
				case got != "success" && got != string(core.CodeTimeout) && got != string(core.CodeResourceExhausted):
					t.Fatalf("case %d: %s answered %s: %s", i, pending[k].line, got, o.text)
				}
			}
			if v := over.Load(); v != nil {
				t.Fatalf("case %d: max %d exceeded: %v", i, cc.max, v)
			}
		}
		p.finish() // every handler has returned
		if v := over.Load(); v != nil {
			t.Fatalf("case %d: max %d exceeded: %v", i, cc.max, v)
		}
		if n := p.srv.Stats().ConcurrentExecutions; n != 0 {
			t.Fatalf("case %d: %d slots still in use after every handler returned", i, n)
		}
		if running.Load() != 0 {
			t.Fatalf("case %d: handlers still running after the session's Wait", i)
		}
		maxSeenAll = max(maxSeenAll, int(maxSeen.Load()))
	}
	// The cases must have exercised the limit, not just stayed under it.
	if outcomes["work "+string(core.CodeResourceExhausted)] == 0 || outcomes["work_to "+string(core.CodeTimeout)] == 0 {
		t.Fatalf("the bursts never hit the limit or a timeout: %v", outcomes)
	}
	t.Logf("%d cases; most handlers at once %d; outcomes %v", propShare(tpConcCases), maxSeenAll, outcomes)
}
