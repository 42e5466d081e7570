package builtin

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/tooltest"
)

// ok calls a tool that must succeed and returns its structuredContent.
func (c *client) ok(name, args string) map[string]any {
	c.t.Helper()
	return tooltest.OK(c.t, "tools/call "+name+" "+args, c.call(name, args))
}

// fails calls a tool that must fail with code (retryable as the code's
// default says) and returns the StructuredError.
func (c *client) fails(name, args string, code core.Code) map[string]any {
	c.t.Helper()
	return toolError(c.t, c.call(name, args), code)
}

// failsRetryable is fails for the failures whose retryable flag differs
// from their code's default (a panic, a payload over the limit).
func (c *client) failsRetryable(name, args string, code core.Code, retryable bool) map[string]any {
	c.t.Helper()
	return toolErrorRetryable(c.t, c.call(name, args), code, retryable)
}

// toolError checks that res is a tool error with code and the fields every
// tool error carries, retryable as the code's default says.
func toolError(t *testing.T, res map[string]any, code core.Code) map[string]any {
	t.Helper()
	return tooltest.Error(t, res, code, code.Retryable())
}

// toolErrorRetryable is toolError with the retryable flag the error must
// carry.
func toolErrorRetryable(t *testing.T, res map[string]any, code core.Code, retryable bool) map[string]any {
	t.Helper()
	return tooltest.Error(t, res, code, retryable)
}

func firstText(t *testing.T, res map[string]any) string {
	t.Helper()
	return tooltest.FirstText(t, res)
}

// toolNames returns the names tools/list lists (all pages).
func (c *client) toolNames() []string {
	c.t.Helper()
	var names []string
	for _, tool := range c.tools() {
		names = append(names, tool["name"].(string))
	}
	return names
}

// tools returns the tools/list entries (all pages).
func (c *client) tools() []map[string]any {
	c.t.Helper()
	var out []map[string]any
	params := `{}`
	for {
		res := c.request("tools/list", params)
		for _, tool := range res["tools"].([]any) {
			out = append(out, tool.(map[string]any))
		}
		next, ok := res["nextCursor"].(string)
		if !ok {
			return out
		}
		params = `{"cursor":` + strconv.Quote(next) + `}`
	}
}

// listChanged waits for notifications/tools/list_changed.
func (c *client) listChanged() {
	c.t.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case n := <-c.notes:
			if n["method"] == "notifications/tools/list_changed" {
				return
			}
		case <-deadline:
			c.t.Fatal("no notifications/tools/list_changed within the wait limit")
		}
	}
}

// eventually waits until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tooltest.Eventually(t, waitLimit, what, cond)
}

// keys returns m's keys, sorted.
func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// sameKeys fails unless m has exactly the keys want.
func sameKeys(t *testing.T, what string, m map[string]any, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := keys(m); !slices.Equal(got, want) {
		t.Errorf("%s keys = %v, want %v", what, got, want)
	}
}
