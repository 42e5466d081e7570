package main

// Bounded inputs and honest errors (the hostile round three, item 7):
// a ttlSeconds too large to represent is refused, not born expired; a
// write that waited out the store's busy timeout is STORE_BUSY,
// retryable, naming the lock.

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

func TestTTLSecondsBounded(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "aacp")
	snd := startAgent(t, dir, "snd", "Manager")
	snd.ok(t, "aacp_register_agent", `{"agentId":"rcv","type":"Implementation"}`)
	for _, ttl := range []string{"10000000000", "9223372036", "315360001"} {
		e := snd.fails(t, "aacp_send", sendArgsTo("rcv", "CUSTOM_PING", `{"n":1}`, `"ttlSeconds":`+ttl), "E_VALIDATION_004")
		if !strings.Contains(e.Message, "315360000") {
			t.Errorf("ttlSeconds %s: the error does not give the limit: %s", ttl, e.Message)
		}
	}
	out := snd.ok(t, "aacp_send", sendArgsTo("rcv", "CUSTOM_PING", `{"n":1}`, `"ttlSeconds":315360000`))
	st := snd.ok(t, "aacp_status", `{"requestId":`+jsonString(astr(out, "requestId"))+`}`)
	if b, _ := json.Marshal(st); strings.Contains(string(b), "EXPIRED") {
		t.Fatalf("a 10-year message is expired: %v", st)
	}
}

func TestStoreBusyIsRetryable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, _ := newDomainClient(t, dir, "MCPRT_STORE_BUSY_TIMEOUT_MS=200", "MCPRT_TRACE_ENABLED=false")
	c.ok("memory_store", `{"key":"a","value":1}`)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "mcprt.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	e := c.toolError(c.send("memory_store", `{"key":"b","value":2}`), "STORE_BUSY")
	if !strings.Contains(e.Message, "write lock") || !strings.Contains(e.Message, "mcprt.db") {
		t.Errorf("STORE_BUSY does not name the lock: %s", e.Message)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	c.ok("memory_store", `{"key":"b","value":2}`)
}
