package domain

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/memory"
	"github.com/mcprt/mcprt/domain/session"
	"github.com/mcprt/mcprt/mcp"
	"github.com/mcprt/mcprt/store"
)

// noteUpdate keeps the URI of a notifications/resources/updated message.
func (c *rpcClient) noteUpdate(data []byte) {
	var n struct {
		Method string `json:"method"`
		Params struct {
			URI string `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(data, &n) == nil && n.Method == "notifications/resources/updated" {
		c.updated = append(c.updated, n.Params.URI)
	}
}

// awaitUpdate reads until a notifications/resources/updated for uri has
// come (the test's deadline bounds the wait) and returns every updated
// URI read so far, then forgets them.
func (c *rpcClient) awaitUpdate(uri string) []string {
	c.t.Helper()
	for !slices.Contains(c.updated, uri) {
		data, err := c.stream.Read()
		if err != nil {
			c.t.Fatalf("waiting for an update of %s: %v (got %v)", uri, err, c.updated)
		}
		c.noteUpdate(data)
	}
	got := c.updated
	c.updated = nil
	return got
}

func (c *rpcClient) subscribe(uri string) {
	c.t.Helper()
	var out map[string]any
	c.result("resources/subscribe", map[string]any{"uri": uri}, &out)
}

// otherProcess is a second store over dir: its writes reach the Domain
// only through the change feed's polls.
func otherProcess(t *testing.T, dir string) (*memory.Service, *session.Service) {
	t.Helper()
	db, err := store.New(store.Options{Dir: config.DefaultDomain().StoreDir(dir)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return memory.NewService(db.Memory(), nil), session.NewService(db.Sessions(), nil, nil)
}

func TestUpdatesOfLocalWrites(t *testing.T) {
	t.Parallel()
	c, _, _ := setupClock(t, mcp.ModeFull, false, nil)
	c.subscribe("memory://entries/ns/k")
	c.subscribe(URIMemoryEntries)
	c.tool("memory_store", map[string]any{"namespace": "ns", "key": "other", "value": 1})
	if got := c.awaitUpdate(URIMemoryEntries); slices.Contains(got, "memory://entries/ns/k") {
		t.Fatalf("storing ns/other updated ns/k: %v", got)
	}
	c.tool("memory_store", map[string]any{"namespace": "ns", "key": "k", "value": 2})
	c.awaitUpdate("memory://entries/ns/k")
	s := c.tool("session_create", map[string]any{"initiator": "a", "task": "t"})
	id := s["sessionId"].(string)
	c.subscribe("sessions://id/" + id)
	c.subscribe(URISessionsActive)
	c.tool("session_join", map[string]any{"sessionId": id, "agentId": "b"})
	if got := c.awaitUpdate("sessions://id/" + id); !slices.Contains(got, URISessionsActive) {
		c.awaitUpdate(URISessionsActive)
	}
}

func TestUpdatesOfAnotherProcess(t *testing.T) {
	t.Parallel()
	clock := core.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	c, dir, _ := setupClock(t, mcp.ModeFull, false, clock)
	mem, sessions := otherProcess(t, dir)
	ctx := context.Background()
	c.subscribe("memory://entries/ns/k")
	if err := clock.WaitForTimers(ctx, 1); err != nil { // the first poll is armed
		t.Fatal(err)
	}
	if _, _, err := mem.Put(ctx, "ns", "not-k", json.RawMessage(`1`)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := clock.WaitForTimers(ctx, 1); err != nil { // that poll is done and the next armed
		t.Fatal(err)
	}
	if _, _, err := mem.Put(ctx, "ns", "k", json.RawMessage(`2`)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if got := c.awaitUpdate("memory://entries/ns/k"); len(got) != 1 {
		t.Fatalf("updates %v, want only memory://entries/ns/k", got)
	}

	sess, err := sessions.Create(ctx, session.CreateRequest{Initiator: "a", Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	c.subscribe("sessions://id/" + sess.ID)
	if err := clock.WaitForTimers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sessions.Join(ctx, sess.ID, "b", ""); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	c.awaitUpdate("sessions://id/" + sess.ID)
}

func TestMemoryEntriesNewestFirst(t *testing.T) {
	t.Parallel()
	c, _, _ := setupClock(t, mcp.ModeFull, false, nil)
	for _, k := range []string{"a", "b", "c", "a"} {
		c.tool("memory_store", map[string]any{"namespace": "ns", "key": k, "value": 1})
	}
	var keys []string
	for _, e := range c.read(URIMemoryEntries)["entries"].([]any) {
		keys = append(keys, e.(map[string]any)["key"].(string))
	}
	if !slices.Equal(keys, []string{"a", "c", "b"}) {
		t.Fatalf("memory://entries lists %v, want the newest first: [a c b]", keys)
	}
	// memory_list keeps its stable order for paging.
	var listed []string
	for _, e := range c.tool("memory_list", map[string]any{})["entries"].([]any) {
		listed = append(listed, e.(map[string]any)["key"].(string))
	}
	if !slices.Equal(listed, []string{"a", "b", "c"}) {
		t.Fatalf("memory_list lists %v, want [a b c]", listed)
	}
}
