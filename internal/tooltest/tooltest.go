package tooltest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// OK checks that res (the result of a call described by what) succeeded and
// returns its structuredContent.
func OK(t testing.TB, what string, res map[string]any) map[string]any {
	t.Helper()
	if res["isError"] != false {
		t.Fatalf("%s: want success, got %v", what, res)
	}
	sc, _ := res["structuredContent"].(map[string]any)
	if sc == nil {
		t.Fatalf("%s: no structuredContent: %v", what, res)
	}
	var text map[string]any
	if err := json.Unmarshal([]byte(FirstText(t, res)), &text); err != nil {
		t.Fatalf("%s: the text block is not the JSON of an object: %v", what, err)
	}
	return sc
}

// Error checks that res is a tool error with code, the retryable flag
// given and the fields every tool error carries, and returns the error.
func Error(t testing.TB, res map[string]any, code core.Code, retryable bool) map[string]any {
	t.Helper()
	if res["isError"] != true {
		t.Fatalf("want a %s tool error, got %v", code, res)
	}
	var e map[string]any
	if err := json.Unmarshal([]byte(FirstText(t, res)), &e); err != nil {
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

// FirstText returns the text of a result's first content block, which
// must be text.
func FirstText(t testing.TB, res map[string]any) string {
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

// Eventually polls cond until it holds, failing t after limit: for state
// that changes in the background with nothing to wait on.
func Eventually(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
