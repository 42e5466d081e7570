package main

// The memory_* tools through the binary: every tool's success, each
// documented error, and hostile inputs that must fail clearly and change
// nothing.

import (
	"slices"
	"strings"
	"testing"
)

func TestDomainMemoryTools(t *testing.T) {
	t.Parallel()
	c, _ := newDomainClient(t, "")

	r := c.ok("memory_store", `{"key":"design/auth","value":{"decision":"use OAuth device flow","by":"alice"},"namespace":"proj"}`)
	if r["success"] != true || r["replaced"] != false || r["namespace"] != "proj" || r["key"] != "design/auth" {
		t.Fatalf("memory_store: %v", r)
	}
	if r = c.ok("memory_store", `{"key":"design/auth","value":{"decision":"use OAuth device flow","by":"bob"},"namespace":"proj"}`); r["replaced"] != true {
		t.Fatalf("second memory_store did not replace: %v", r)
	}
	c.ok("memory_store", `{"key":"todo","value":["write tests","ship"]}`)

	r = c.ok("memory_retrieve", `{"key":"design/auth","namespace":"proj"}`)
	if r["found"] != true || asJSON(t, r["value"]) != `{"by":"bob","decision":"use OAuth device flow"}` {
		t.Fatalf("memory_retrieve: %v", r)
	}
	if r = c.ok("memory_retrieve", `{"key":"nothing-here"}`); r["found"] != false || !strings.Contains(r["message"].(string), "memory_search") {
		t.Fatalf("memory_retrieve of a missing key: %v", r)
	}

	r = c.ok("memory_search", `{"query":"oauth device","fullText":true}`)
	if domNum(r["count"]) != 1 || !strings.Contains(asJSON(t, r["results"]), "design/auth") {
		t.Fatalf("full-text memory_search: %v", r)
	}
	if r = c.ok("memory_search", `{"query":"design/","namespace":"proj"}`); domNum(r["count"]) != 1 {
		t.Fatalf("key memory_search: %v", r)
	}
	if r = c.ok("memory_search", `{"query":"Design/"}`); domNum(r["count"]) != 0 {
		t.Fatalf("key search is case-sensitive, got %v", r)
	}

	r = c.ok("memory_list", `{}`)
	if domNum(r["total"]) != 2 || r["hasMore"] != false {
		t.Fatalf("memory_list: %v", r)
	}
	if r = c.ok("memory_list", `{"limit":1}`); r["hasMore"] != true {
		t.Fatalf("memory_list limit 1: %v", r)
	}
	r = c.ok("memory_stats", `{}`)
	if domNum(r["entries"]) != 2 || len(r["namespaces"].([]any)) != 2 {
		t.Fatalf("memory_stats: %v", r)
	}

	exp := c.ok("memory_export", `{"namespace":"proj"}`)
	if domNum(exp["count"]) != 1 || !strings.Contains(exp["data"].(string), `"key":"design/auth"`) {
		t.Fatalf("memory_export: %v", exp)
	}
	r = c.ok("memory_delete", `{"key":"design/auth","namespace":"proj"}`)
	if r["deleted"] != true {
		t.Fatalf("memory_delete: %v", r)
	}
	if r = c.ok("memory_delete", `{"key":"design/auth","namespace":"proj"}`); r["deleted"] != false {
		t.Fatalf("second memory_delete: %v", r)
	}
	r = c.ok("memory_import", `{"data":`+jsonString(exp["data"].(string))+`}`)
	if domNum(r["created"]) != 1 {
		t.Fatalf("memory_import: %v", r)
	}
	if r = c.ok("memory_import", `{"data":`+jsonString(exp["data"].(string))+`,"skipExisting":true}`); domNum(r["skipped"]) != 1 {
		t.Fatalf("memory_import skipExisting: %v", r)
	}

	// Documented errors.
	for _, tc := range []struct{ tool, args, field string }{
		{"memory_store", `{"key":"k","value":null}`, "value"},
		{"memory_store", `{"key":"","value":1}`, "key"},
		{"memory_store", `{"key":"k","value":1,"namespace":"has:colon"}`, "namespace"},
		{"memory_retrieve", `{"key":"k\u0007"}`, "key"},
		{"memory_search", `{"query":"!!!","fullText":true}`, "query"},
		{"memory_search", `{"query":"x","limit":51}`, "limit"},
		{"memory_list", `{"offset":-1}`, "offset"},
	} {
		e := c.failsQuick(tc.tool, tc.args, "INVALID_ARGUMENT")
		if e.Details["field"] != tc.field || !strings.Contains(e.Message, tc.field) {
			t.Errorf("%s %s: details.field %v, message %q; want field %s named", tc.tool, tc.args, e.Details["field"], e.Message, tc.field)
		}
	}
	e := c.failsQuick("memory_import", `{"data":"{\"key\":\"a\",\"value\":1}\nnot json\n{\"value\":2}\n"}`, "INVALID_ARGUMENT")
	if !strings.Contains(asJSON(t, e.Details), "2") || !strings.Contains(asJSON(t, e.Details), "3") {
		t.Errorf("memory_import error names lines 2 and 3? details %v", e.Details)
	}
	c.failsQuick("memory_store", `{"value":1}`, "INVALID_ARGUMENT") // schema: key required
	c.failsQuick("memory_store", `{"key":"k","value":1,"extra":true}`, "INVALID_ARGUMENT")
	if r := c.ok("memory_stats", `{}`); domNum(r["entries"]) != 2 {
		t.Fatalf("failed calls changed the store: %v", r)
	}
	finish(t, c.p)
}

// TestDomainMemoryHostileInputs: huge values, deep JSON, path-like keys and
// namespaces, SQL and FTS metacharacters. Each is either stored verbatim
// (and only in the store) or refused with an error that names the limit,
// and a refused call changes nothing.
func TestDomainMemoryHostileInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, _ := newDomainClient(t, dir+"/store")

	stats := func() string { return asJSON(t, c.ok("memory_stats", `{}`)) }
	before := stats()

	big := strings.Repeat("x", 100*1024)
	se := c.rawToolError("memory_store", `{"key":"big","value":"`+big+`"}`)
	if d, _ := se["details"].(map[string]any); se["code"] != "RESOURCE_EXHAUSTED" || se["retryable"] != false ||
		d["reason"] != "value_too_large" || !strings.Contains(se["message"].(string), "102400") {
		t.Errorf("oversized value: want RESOURCE_EXHAUSTED value_too_large naming the 100 KiB limit, not retryable: %v", se)
	}
	huge := strings.Repeat("y", 1<<20)
	c.failsQuick("memory_store", `{"key":"huge","value":"`+huge+`"}`, "RESOURCE_EXHAUSTED")
	deep := strings.Repeat("[", 65) + strings.Repeat("]", 65)
	if e := c.failsQuick("memory_store", `{"key":"deep","value":`+deep+`}`, "INVALID_ARGUMENT"); !strings.Contains(e.Message, "64") {
		t.Errorf("deep value: the error does not name the depth limit: %q", e.Message)
	}
	deeper := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	c.failsQuick("memory_store", `{"key":"deeper","value":`+deeper+`}`, "INVALID_ARGUMENT")
	c.failsQuick("memory_store", `{"key":"`+strings.Repeat("k", 513)+`","value":1}`, "INVALID_ARGUMENT")
	c.failsQuick("memory_store", `{"key":"k","value":1,"namespace":"../../etc"}`, "INVALID_ARGUMENT")
	if after := stats(); after != before {
		t.Fatalf("refused calls changed the store:\n before %s\n after  %s", before, after)
	}

	// Path-like and SQL-like keys are opaque text: stored verbatim, in the
	// database only.
	keys := []string{"../../etc/passwd", `C:\Windows\system32`, "'; DROP TABLE memory_entries; --", `" OR 1=1 --`, "a/./b/../c", "%_*"}
	for _, k := range keys {
		c.ok("memory_store", `{"key":`+jsonString(k)+`,"value":{"k":`+jsonString(k)+`}}`)
	}
	for _, k := range keys {
		r := c.ok("memory_retrieve", `{"key":`+jsonString(k)+`}`)
		if r["found"] != true || r["key"] != k {
			t.Errorf("key %q did not come back verbatim: %v", k, r)
		}
	}
	if r := c.ok("memory_search", `{"query":"%_"}`); domNum(r["count"]) != 1 {
		t.Errorf("%%_ is a literal substring, not a wildcard: %v", r)
	}
	for _, q := range []string{`DROP OR NOT "x*"`, `NEAR(a b)`, `passwd*`, `col:value`} {
		c.ok("memory_search", `{"query":`+jsonString(q)+`,"fullText":true}`) // operators have no effect, never an error
	}
	if r := c.ok("memory_list", `{}`); domNum(r["total"]) != len(keys) {
		t.Fatalf("memory_list total %v, want %d (the table survived)", r["total"], len(keys))
	}
	if got := filesUnder(t, dir); !slices.Equal(got, []string{"store/mcprt.db", "store/mcprt.db-shm", "store/mcprt.db-wal"}) {
		t.Errorf("files under the data directory: %v, want only the store's", got)
	}
	finish(t, c.p)
}
