package bench

import (
	"context"
	"testing"
	"time"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/domain/trace"
	"github.com/mcprt/mcprt/fixtures"
	"github.com/mcprt/mcprt/mcp"
	"github.com/mcprt/mcprt/store"
	"github.com/mcprt/mcprt/tools/builtin"
	"github.com/mcprt/mcprt/tools/domain"
)

// BenchmarkDispatchNoopTraced is BenchmarkDispatchNoop with the trace
// sink installed: every call becomes an event queued for the SQLite store
// (written in batches by another goroutine; arguments not captured). The
// difference from BenchmarkDispatchNoop is what tracing costs a call.
func BenchmarkDispatchNoopTraced(b *testing.B) {
	db, err := store.New(store.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	benchTraced(b, db.Traces(), db.Close)
}

// BenchmarkDispatchNoopTracedDiscard is BenchmarkDispatchNoopTraced with a
// store that keeps nothing: the cost tracing adds to the call's own path
// (the sink's Enter and Exit and the queue), without the background
// writer's SQLite work, which BenchmarkTraceAppend256 in store measures.
func BenchmarkDispatchNoopTracedDiscard(b *testing.B) {
	benchTraced(b, discardTraces{}, func() error { return nil })
}

type discardTraces struct{ trace.Store }

func (discardTraces) Append(context.Context, []trace.Event) error { return nil }
func (discardTraces) Prune(context.Context, time.Time, int) (int, error) {
	return 0, nil
}

func benchTraced(b *testing.B, st trace.Store, closeStore func() error) {
	rec := trace.NewRecorder(trace.RecorderOptions{Store: st, QueueSize: 1 << 16})
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = rec.Close(ctx)
		_ = closeStore()
		if acc, dropped, failed := rec.Counts(); failed > 0 {
			b.Errorf("%d of %d trace events failed to be written", failed, acc)
		} else {
			b.ReportMetric(float64(dropped)/float64(max(1, acc+dropped)), "dropped/event")
		}
	})
	cfg := config.DefaultBase("bench")
	cfg.Server.Mode = mcp.ModeTest
	cfg.Resources.MaxConcurrentExecutions = 10
	srv, err := mcp.NewServer(serverOptions(cfg, mcp.Options{Logger: newLogger(), Transport: "stdio",
		Audit: domain.NewAuditSink(rec, nil, "bench")}))
	if err != nil {
		b.Fatal(err)
	}
	if err := builtin.Register(srv, builtin.Options{}); err != nil {
		b.Fatal(err)
	}
	if err := fixtures.Register(srv, fixtures.Options{}); err != nil {
		b.Fatal(err)
	}
	s := startSession(b, srv)
	s.warm(b, noopTail, noopAnswer)
	s.bench(b, noopTail, 1)
}
