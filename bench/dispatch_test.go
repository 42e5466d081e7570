package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/fixtures"
	"github.com/mcprt/mcprt/mcp"
	"github.com/mcprt/mcprt/tools/builtin"
)

// testServer returns a server in mode TEST with the built-in tools, the
// noop fixture among them, registered as cmd/mcprt registers them (without
// the agent coordinator), with that many concurrency slots.
func testServer(tb testing.TB, slots int) *mcp.Server {
	cfg := config.DefaultBase("bench")
	cfg.Server.Mode = mcp.ModeTest
	cfg.Resources.MaxConcurrentExecutions = slots
	return newServer(tb, cfg, func(srv *mcp.Server) error {
		if err := builtin.Register(srv, builtin.Options{}); err != nil {
			return err
		}
		return fixtures.Register(srv, fixtures.Options{})
	})
}

const noopAnswer = `"result":{"content":[`

// BenchmarkDispatchNoop is the in-process hot path: one tools/call of the
// noop fixture at a time, bytes in to bytes out, through the real framer,
// decoder, router, tools/call pipeline (ids, payload size, slot, schema
// validation, deadline, handler goroutine), completion record (logged at
// info into io.Discard) and writer. allocs/op is the number issue 4 tracks.
func BenchmarkDispatchNoop(b *testing.B) {
	s := startSession(b, testServer(b, 10))
	s.warm(b, noopTail, noopAnswer)
	s.bench(b, noopTail, 1)
}

// BenchmarkDispatchNoopPipelined is BenchmarkDispatchNoop with 32 requests
// in flight, and 32 concurrency slots so that none is refused: the
// session's throughput without a client in the way.
func BenchmarkDispatchNoopPipelined(b *testing.B) {
	s := startSession(b, testServer(b, 32))
	s.warm(b, noopTail, noopAnswer)
	s.bench(b, noopTail, 32)
}

// BenchmarkInitialize is a whole connection's handshake: a new session,
// initialize and its answer, notifications/initialized, the end of the
// input and the session's end. Serve runs on the benchmark's goroutine.
func BenchmarkInitialize(b *testing.B) {
	srv := testServer(b, 10)
	p := newPipe()
	ph := &phase{n: 2, window: 1, line: fixedLines([]string{initializeLine, initializedLine}, 1), eof: true}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		before := p.answers.Load()
		p.queue(ph)
		if err := srv.Connect(srv.Lines(p, p), nil).Serve(ctx); err != nil {
			b.Fatal(err)
		}
		if p.answers.Load() != before+1 {
			b.Fatalf("initialize got %d answers", p.answers.Load()-before)
		}
	}
	b.StopTimer()
	p.check(b)
}

// BenchmarkToolsList100 lists 100 registered tools (one page), each with a
// title, a description, a three-property input schema and annotations.
func BenchmarkToolsList100(b *testing.B) {
	srv := newServer(b, config.DefaultBase("bench"), func(srv *mcp.Server) error {
		for i := range 100 {
			err := srv.AddTool(mcp.Tool{
				Name:        fmt.Sprintf("tool_%03d", i),
				Title:       fmt.Sprintf("Tool %d", i),
				Description: fmt.Sprintf("Benchmark tool %d: looks something up by query and returns at most limit matches.", i),
				InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","minLength":1},` +
					`"limit":{"type":"integer","minimum":1,"maximum":100},"exact":{"type":"boolean"}},"required":["query"]}`),
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false)},
				Handler:     emptyHandler,
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	s := startSession(b, srv)
	s.warm(b, listTail, `"name":"tool_099"`)
	s.bench(b, listTail, 1)
	b.ReportMetric(float64(s.pipe.lastLen.Load()), "B/answer")
}

// BenchmarkToolsCall20Props calls a tool whose input schema has 20
// properties of every kind (all required, no others allowed) with valid
// arguments: the cost of validating realistic arguments.
func BenchmarkToolsCall20Props(b *testing.B) {
	srv := newServer(b, config.DefaultBase("bench"), func(srv *mcp.Server) error {
		return srv.AddTool(mcp.Tool{Name: "wide", InputSchema: json.RawMessage(wideSchema), Handler: emptyHandler})
	})
	tail := `,"method":"tools/call","params":{"name":"wide","arguments":` + wideArguments + "}}\n"
	s := startSession(b, srv)
	s.warm(b, tail, noopAnswer)
	s.bench(b, tail, 1)
}

func emptyHandler(context.Context, *mcp.CallToolRequest) (any, error) { return struct{}{}, nil }

// wideSchema has 20 properties: strings with bounds, a pattern and an
// enum, integers and numbers with ranges, booleans, arrays and objects.
var wideSchema = `{"type":"object","additionalProperties":false,"properties":{` + strings.Join([]string{
	`"name":{"type":"string","minLength":1,"maxLength":64}`,
	`"slug":{"type":"string","pattern":"^[a-z0-9-]+$"}`,
	`"kind":{"type":"string","enum":["alpha","beta","gamma"]}`,
	`"note":{"type":"string","maxLength":1000}`,
	`"lang":{"type":"string","minLength":2,"maxLength":5}`,
	`"count":{"type":"integer","minimum":0,"maximum":1000}`,
	`"page":{"type":"integer","minimum":1}`,
	`"size":{"type":"integer","minimum":1,"maximum":100}`,
	`"offset":{"type":"integer","minimum":0}`,
	`"ratio":{"type":"number","minimum":0,"maximum":1}`,
	`"score":{"type":"number"}`,
	`"weight":{"type":"number","exclusiveMinimum":0}`,
	`"strict":{"type":"boolean"}`,
	`"dryRun":{"type":"boolean"}`,
	`"verbose":{"type":"boolean"}`,
	`"tags":{"type":"array","items":{"type":"string"},"maxItems":10}`,
	`"ids":{"type":"array","items":{"type":"integer"},"uniqueItems":true}`,
	`"range":{"type":"object","properties":{"from":{"type":"integer"},"to":{"type":"integer"}},"required":["from","to"]}`,
	`"labels":{"type":"object","additionalProperties":{"type":"string"}}`,
	`"mode":{"type":["string","null"]}`,
}, ",") + `},"required":["name","slug","kind","note","lang","count","page","size","offset","ratio","score",` +
	`"weight","strict","dryRun","verbose","tags","ids","range","labels","mode"]}`

const wideArguments = `{"name":"report","slug":"q3-report","kind":"beta","note":"quarterly numbers","lang":"en",` +
	`"count":12,"page":1,"size":20,"offset":0,"ratio":0.25,"score":-3.5,"weight":1.5,"strict":true,` +
	`"dryRun":false,"verbose":false,"tags":["a","b","c"],"ids":[1,2,3],"range":{"from":1,"to":9},` +
	`"labels":{"team":"core","env":"prod"},"mode":null}`

// lookup20Arguments are valid arguments of the lookup20 fixture with every
// property set, as bench/compare sends them.
const lookup20Arguments = `{"id":"u-1","name":"Ada Lovelace","email":"ada@example.org","age":36,"role":"dev","active":true,` +
	`"score":99.5,"tags":["math","engines"],"address":{"street":"1 Main St","city":"London","zip":"10115"},` +
	`"phone":"+44 20 1234","team":"core","manager":"babbage","level":7,"locale":"en","timezone":"Europe/London",` +
	`"created":"2026-01-01T00:00:00Z","notes":"first programmer","quota":10,"flags":[true,false],"project":"engine"}`

// BenchmarkDispatchLookup20 is the realistic call: the lookup20 fixture
// (20 properties, patterns, enums, ranges, a nested object, arrays) with
// valid arguments, through the same path as BenchmarkDispatchNoop. Its
// goal is at most 2.5x BenchmarkDispatchNoop's CPU and 150 allocations.
func BenchmarkDispatchLookup20(b *testing.B) {
	s := startSession(b, testServer(b, 10))
	tail := `,"method":"tools/call","params":{"name":"lookup20","arguments":` + lookup20Arguments + "}}\n"
	s.warm(b, tail, `"result":{"content":[`)
	s.bench(b, tail, 1)
}
