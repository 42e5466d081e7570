package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/mcprt/mcprt/core"
)

// Bounds of the total work and memory of one run, nested runs included:
// a workflow whose steps run workflows shares its run's budget with them,
// so 100-step workflows nested 3 deep cannot make a million steps.
const (
	// MaxRunSteps bounds the steps of a run and every run nested in it. A
	// run reserves all its steps before the first one runs; a run that
	// cannot is refused up front, running nothing.
	MaxRunSteps = 1000
	// MaxRunOutputBytes bounds the bytes (as JSON) of the step outputs a
	// run and its nested runs hold; it is checked as each step's output
	// arrives.
	MaxRunOutputBytes = 16 << 20
)

// CodeRunLimit is RESOURCE_EXHAUSTED: a run would pass MaxRunSteps or
// MaxRunOutputBytes.
const CodeRunLimit = core.CodeResourceExhausted

// runBudget is what is left of a top-level run's bounds; nested runs find
// it in their context.
type runBudget struct {
	steps atomic.Int64
	bytes atomic.Int64
}

type budgetKey struct{}

// budgetFor returns the budget of the run ctx belongs to, or a fresh one
// for a top-level run, and ctx carrying it.
func budgetFor(ctx context.Context) (context.Context, *runBudget) {
	if b, ok := ctx.Value(budgetKey{}).(*runBudget); ok {
		return ctx, b
	}
	b := &runBudget{}
	b.steps.Store(MaxRunSteps)
	b.bytes.Store(MaxRunOutputBytes)
	return context.WithValue(ctx, budgetKey{}, b), b
}

// reserve takes n steps of the budget, or refuses naming the limit.
func (b *runBudget) reserve(d *Definition) error {
	n := int64(len(d.Steps))
	if left := b.steps.Add(-n); left < 0 {
		b.steps.Add(n)
		return core.NewError(CodeRunLimit, fmt.Sprintf("workflow %q has %d steps but only %d are left of the %d steps a run "+
			"may take with its nested runs (MaxRunSteps); nothing ran: run fewer or smaller nested workflows",
			d.ID, n, left+n, MaxRunSteps)).WithDetail("limit", MaxRunSteps).WithDetail("workflowId", d.ID)
	}
	return nil
}

// keep counts the output of step s, or fails when the run's outputs pass
// MaxRunOutputBytes.
func (b *runBudget) keep(d *Definition, s *Step, out any) error {
	raw, err := json.Marshal(out)
	if err != nil {
		return core.Errorf(core.CodeInternal, "step %q: its output cannot be encoded as JSON: %v", s.ID, err)
	}
	if b.bytes.Add(-int64(len(raw))) < 0 {
		return core.NewError(CodeRunLimit, fmt.Sprintf("workflow %q stopped at step %q: the outputs of the run and its nested "+
			"runs passed %d bytes (MaxRunOutputBytes; this step's output is %d bytes): make the steps return less",
			d.ID, s.ID, MaxRunOutputBytes, len(raw))).WithDetail("limit", MaxRunOutputBytes).WithDetail("step", s.ID)
	}
	return nil
}
