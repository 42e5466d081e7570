package main

// memory_export of a namespace larger than one answer (4 MiB a page): it comes
// in pages, each with the cursor of the next, and nothing is missed or
// repeated.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestMemoryExportPages(t *testing.T) {
	t.Parallel()
	c, _ := newDomainClient(t, "", "MCPRT_TRACE_ENABLED=false")
	const entries, valueBytes = 90, 95 << 10 // 8.4 MiB in one namespace
	value := strings.Repeat("v", valueBytes)
	for batch := range 10 {
		var b strings.Builder
		for i := range entries / 10 {
			fmt.Fprintf(&b, `{"namespace":"big","key":"k%03d","value":%q}`+"\n", batch*entries/10+i, value)
		}
		data, _ := json.Marshal(b.String())
		c.ok("memory_import", `{"data":`+string(data)+`}`)
	}
	seen := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		args := `{"namespace":"big"}`
		if cursor != "" {
			args = `{"namespace":"big","cursor":` + jsonString(cursor) + `}`
		}
		r := c.ok("memory_export", args)
		if domNum(r["bytes"]) > 4<<20 {
			t.Fatalf("page %d: %v bytes, over the 4 MiB page", page, r["bytes"])
		}
		for _, line := range strings.Split(strings.TrimSpace(r["data"].(string)), "\n") {
			var rec struct{ Key string }
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("page %d: bad line: %v", page, err)
			}
			if seen[rec.Key] {
				t.Fatalf("page %d repeats %s", page, rec.Key)
			}
			seen[rec.Key] = true
		}
		if r["hasMore"] != true {
			if page < 2 {
				t.Fatalf("8.4 MiB came in one page: %v", r["count"])
			}
			break
		}
		cursor, _ = r["nextCursor"].(string)
		if cursor == "" || page > 5 {
			t.Fatalf("page %d: hasMore without a usable nextCursor: %q", page, cursor)
		}
	}
	if len(seen) != entries {
		t.Fatalf("exported %d distinct entries, want %d", len(seen), entries)
	}
	e := c.toolError(c.send("memory_export", `{"cursor":"not-a-cursor"}`), "INVALID_ARGUMENT")
	if !strings.Contains(e.Message, "nextCursor") {
		t.Errorf("a bad cursor: %s", e.Message)
	}
}
