package builtin

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// ok calls a tool that must succeed and returns its structuredContent.
func (c *client) ok(name, args string) map[string]any {
	c.t.Helper()
	res := c.call(name, args)
	if res["isError"] != false {
		c.t.Fatalf("tools/call %s %s: want success, got %v", name, args, res)
	}
	sc, _ := res["structuredContent"].(map[string]any)
	if sc == nil {
		c.t.Fatalf("tools/call %s: no structuredContent: %v", name, res)
	}
	var text map[string]any
	if err := json.Unmarshal([]byte(firstText(c.t, res)), &text); err != nil {
		c.t.Fatalf("tools/call %s: the text block is not the JSON of an object: %v", name, err)
	}
	return sc
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
// tool error carries (message, retryable, correlationId, runId), and
// returns it.
func toolError(t *testing.T, res map[string]any, code core.Code) map[string]any {
	t.Helper()
	return toolErrorRetryable(t, res, code, code.Retryable())
}

// toolErrorRetryable is toolError with the retryable flag the error must
// carry.
func toolErrorRetryable(t *testing.T, res map[string]any, code core.Code, retryable bool) map[string]any {
	t.Helper()
	if res["isError"] != true {
		t.Fatalf("want a %s tool error, got %v", code, res)
	}
	var e map[string]any
	if err := json.Unmarshal([]byte(firstText(t, res)), &e); err != nil {
		t.Fatalf("tool error text is not JSON: %v", err)
	}
	if e["code"] != string(code) {
		t.Fatalf("code = %v, want %s; error %v", e["code"], code, e)
	}
	for _, k := range []string{"message", "retryable", "correlationId", "runId"} {
		if _, ok := e[k]; !ok {
			t.Errorf("tool error lacks %q: %v", k, e)
		}
	}
	if e["retryable"] != retryable {
		t.Errorf("retryable = %v, want %v", e["retryable"], retryable)
	}
	return e
}

func firstText(t *testing.T, res map[string]any) string {
	t.Helper()
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("result has no content: %v", res)
	}
	block, _ := content[0].(map[string]any)
	if block["type"] != "text" {
		t.Fatalf("content[0] is not text: %v", block)
	}
	text, _ := block["text"].(string)
	return text
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
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
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
