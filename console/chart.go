package console

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/domain/trace"
)

// traceCache keeps the trace summaries until the store's change feed
// moves: listing decodes every stored batch, so pages reuse one listing
// while nothing was written.
type traceCache struct {
	mu   sync.Mutex
	seq  int64                               // guarded by mu: LastChange when read
	all  []trace.Summary                     // guarded by mu
	byQ  map[trace.ListQuery][]trace.Summary // guarded by mu
	tots map[trace.ListQuery]int             // guarded by mu
}

// traces lists like Traces.List, from the cache while the store has not
// changed.
func (c *Console) traces(ctx context.Context, q trace.ListQuery) ([]trace.Summary, int, error) {
	seq, err := c.db.LastChange(ctx)
	if err != nil {
		return nil, 0, err
	}
	tc := &c.traceCache
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.byQ == nil || tc.seq != seq {
		tc.seq, tc.byQ, tc.tots, tc.all = seq, map[trace.ListQuery][]trace.Summary{}, map[trace.ListQuery]int{}, nil
	}
	if out, ok := tc.byQ[q]; ok {
		return out, tc.tots[q], nil
	}
	out, total, err := c.db.Traces().List(ctx, q)
	if err != nil {
		return nil, 0, err
	}
	tc.byQ[q], tc.tots[q] = out, total
	return out, total, nil
}

// chart is the inline SVG chart of calls per second and the p95 trace
// duration per minute over the last hour.
type chart struct {
	Width, Height int
	Calls, P95    string // SVG polyline points
	MaxCalls      string
	MaxP95        string
	Total         int
}

// chartMinutes is the chart's span.
const chartMinutes = 60

// chart builds the chart from the traces that ended in the last hour.
func (c *Console) chart(ctx context.Context) *chart {
	const w, h = 600, 120
	now := c.clock.Now()
	list, _, err := c.traces(ctx, trace.ListQuery{Limit: 1 << 30})
	if err != nil {
		return nil
	}
	calls := make([]int, chartMinutes)
	durs := make([][]time.Duration, chartMinutes)
	total := 0
	for _, s := range list {
		age := now.Sub(s.Start)
		if age < 0 || age >= chartMinutes*time.Minute {
			continue
		}
		i := chartMinutes - 1 - int(age/time.Minute)
		calls[i] += s.Events
		durs[i] = append(durs[i], s.End.Sub(s.Start))
		total += s.Events
	}
	p95 := make([]float64, chartMinutes)
	maxCalls, maxP95 := 1, 1.0
	for i := range durs {
		maxCalls = max(maxCalls, calls[i])
		if len(durs[i]) > 0 {
			slices.Sort(durs[i])
			p95[i] = float64(durs[i][(len(durs[i])*95+99)/100-1]) / float64(time.Millisecond)
			maxP95 = max(maxP95, p95[i])
		}
	}
	var cp, pp strings.Builder
	for i := range chartMinutes {
		x := float64(i) * w / (chartMinutes - 1)
		fmt.Fprintf(&cp, "%.1f,%.1f ", x, h-float64(calls[i])*(h-4)/float64(maxCalls))
		fmt.Fprintf(&pp, "%.1f,%.1f ", x, h-p95[i]*(h-4)/maxP95)
	}
	return &chart{Width: w, Height: h, Calls: cp.String(), P95: pp.String(), Total: total,
		MaxCalls: fmt.Sprintf("%.2f", float64(maxCalls)/60), MaxP95: fmt.Sprintf("%.1f", maxP95)}
}
