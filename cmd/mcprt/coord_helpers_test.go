package main

// Helpers of the coordination tests (coord_*_test.go): several mcprt
// processes sharing one data directory, each acting as its own agent.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// coordAgents starts one mcprt process per agent name on one fresh data
// directory (mode TEST, so clock_advance exists) and returns them with
// the directory.
func coordAgents(t *testing.T, extra []string, names ...string) ([]*aproc, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shared")
	out := make([]*aproc, len(names))
	for i, n := range names {
		out[i] = startAgent(t, dir, n, "Implementation", append([]string{"MCPRT_SERVER_MODE=TEST"}, extra...)...)
		// One call first: it registers the agent, which concurrent first
		// calls of one process would race to do.
		out[i].ok(t, "check_reservations", `{"paths":["warm-up"]}`)
	}
	return out, dir
}

// oneWinnerEach awaits the two processes' answers of each round from
// start on (ids[i-start][k] is process k's call of round i) and fails t
// unless exactly one of them has won, by the answer's field; wins counts
// each process's wins.
func oneWinnerEach(t *testing.T, ps []*aproc, ids [][2]string, start int, field string, wins *[2]int) {
	t.Helper()
	for r, pair := range ids {
		n := 0
		for k := range 2 {
			v, e := ps[k].await(t, pair[k])
			if e != nil {
				t.Fatalf("round %d, %s: %s %s", start+r, ps[k].agent, e.Code, e.Message)
			}
			if v[field] == true {
				n++
				wins[k]++
			}
		}
		if n != 1 {
			t.Fatalf("round %d: %d winners (%s), want exactly 1", start+r, n, field)
		}
	}
}

// jsonList encodes strings as a JSON array.
func jsonList(items ...string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = jsonString(s)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// list returns v[key] as a slice of objects, failing t otherwise.
func list(t testing.TB, v map[string]any, key string) []map[string]any {
	t.Helper()
	raw, ok := v[key].([]any)
	if !ok && v[key] != nil {
		t.Fatalf("%s is not a list: %v", key, v)
	}
	out := make([]map[string]any, len(raw))
	for i, x := range raw {
		m, ok := x.(map[string]any)
		if !ok {
			t.Fatalf("%s[%d] is not an object: %v", key, i, x)
		}
		out[i] = m
	}
	return out
}

func str(v any) string { return fmt.Sprint(v) }
