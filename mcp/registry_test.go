package mcp

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/jsonrpc"
)

// The generic registry: sorted order, pages and cursors, change
// announcements.

func newStringRegistry(changed *int) *registry[string] {
	return newRegistry("things", func(s string) string { return s }, func() { *changed++ })
}

func TestRegistrySortedAndChanges(t *testing.T) {
	changed := 0
	r := newStringRegistry(&changed)
	for _, n := range []string{"b", "a", "B", "a-", "_", "a.b", "0"} {
		if !r.add(n) {
			t.Fatalf("add(%q) refused", n)
		}
	}
	if r.add("a") {
		t.Fatal("a duplicate was added")
	}
	want := []string{"0", "B", "_", "a", "a-", "a.b", "b"} // byte order
	if got := r.all(); !slices.Equal(got, want) {
		t.Fatalf("all() = %q, want %q", got, want)
	}
	snapshot := r.all()
	if !r.remove("a-") || r.remove("a-") {
		t.Fatal("remove reported wrongly")
	}
	if !slices.Equal(snapshot, want) {
		t.Fatalf("a snapshot changed under its reader: %q", snapshot)
	}
	if v, ok := r.get("a.b"); !ok || v != "a.b" {
		t.Fatalf("get(a.b) = %q %v", v, ok)
	}
	if _, ok := r.get("a-"); ok {
		t.Fatal("get found a removed item")
	}
	// Seven adds and one removal changed it; the refused add and removal
	// did not.
	if changed != 8 {
		t.Fatalf("changed called %d times, want 8", changed)
	}
}

func TestRegistryPageEdges(t *testing.T) {
	changed := 0
	r := newStringRegistry(&changed)
	page := func(cursor *string, size int) ([]string, string) {
		t.Helper()
		items, next, err := r.page(cursor, size)
		if err != nil {
			t.Fatalf("page(%v, %d): %v", cursor, size, err)
		}
		return items, next
	}
	// Empty: one empty page, no cursor.
	if items, next := page(nil, 3); len(items) != 0 || next != "" {
		t.Fatalf("empty registry: %q, next %q", items, next)
	}
	for _, n := range []string{"c", "a", "b"} {
		r.add(n)
	}
	// Exactly one page: no cursor.
	if items, next := page(nil, 3); !slices.Equal(items, []string{"a", "b", "c"}) || next != "" {
		t.Fatalf("exactly one page: %q, next %q", items, next)
	}
	// One more than a page: a cursor to a last page of one.
	r.add("d")
	items, next := page(nil, 3)
	if !slices.Equal(items, []string{"a", "b", "c"}) || next == "" {
		t.Fatalf("first of two pages: %q, next %q", items, next)
	}
	if items, next2 := page(&next, 3); !slices.Equal(items, []string{"d"}) || next2 != "" {
		t.Fatalf("second page: %q, next %q", items, next2)
	}
	// The cursor names a position, not an item: removing "c" does not
	// invalidate it, and an item added after it is on the next page.
	r.remove("c")
	r.add("ca")
	if items, _ := page(&next, 3); !slices.Equal(items, []string{"ca", "d"}) {
		t.Fatalf("after changes: %q", items)
	}
	// A cursor past the end: an empty last page.
	past := r.encodeCursor("zzz")
	if items, next := page(&past, 3); len(items) != 0 || next != "" {
		t.Fatalf("cursor past the end: %q, next %q", items, next)
	}
	// Forged cursors are -32602.
	other := newRegistry("prompts", func(s string) string { return s }, func() {}).encodeCursor("a")
	for _, forged := range []string{"", "garbage!", "YQ", other, base64.RawURLEncoding.EncodeToString([]byte("things:a")),
		base64.StdEncoding.EncodeToString([]byte("mcprt-things:a?>")), strings.Repeat("A", 300)} {
		_, _, err := r.page(&forged, 3)
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, "things/list") {
			t.Errorf("forged cursor %q: %v, want -32602 naming things/list", clip(forged, 40), err)
		}
		if je != nil && len(je.Message) > 400 {
			t.Errorf("forged cursor %q echoed at length: %d bytes", clip(forged, 40), len(je.Message))
		}
	}
}

// TestToolsListPageEdges: the same edges over the wire.
func TestToolsListPageEdges(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		cfg := testConfig()
		cfg.Limits.PageSize = 2
		c := newTestClient(t, tr, cfg, Options{}, nil, Version20251125)
		list := func(id, params string) (names []string, next any) {
			t.Helper()
			m := c.request(id, MethodToolsList, params)
			res, ok := m["result"].(map[string]any)
			if !ok {
				t.Fatalf("tools/list %s: %v", params, m)
			}
			for _, tl := range res["tools"].([]any) {
				names = append(names, tl.(map[string]any)["name"].(string))
			}
			if res["tools"] == nil {
				t.Fatalf("tools/list without a tools array: %v", res)
			}
			return names, res["nextCursor"]
		}
		// Empty.
		if names, next := list("1", ""); len(names) != 0 || next != nil {
			t.Fatalf("empty: %v %v", names, next)
		}
		c.expectListChanged(func() { c.addNop("b") })
		c.expectListChanged(func() { c.addNop("a") })
		// Exactly one page.
		if names, next := list("2", `{}`); !slices.Equal(names, []string{"a", "b"}) || next != nil {
			t.Fatalf("exactly one page: %v %v", names, next)
		}
		c.expectListChanged(func() { c.addNop("c") })
		names, next := list("3", `{}`)
		if !slices.Equal(names, []string{"a", "b"}) || next == nil {
			t.Fatalf("first page: %v %v", names, next)
		}
		if names, next := list("4", `{"cursor":`+quoteString(next.(string))+`}`); !slices.Equal(names, []string{"c"}) || next != nil {
			t.Fatalf("last page: %v %v", names, next)
		}
		// Past the end.
		past := c.srv.tools.encodeCursor("zz")
		if names, next := list("5", `{"cursor":`+quoteString(past)+`}`); len(names) != 0 || next != nil {
			t.Fatalf("past the end: %v %v", names, next)
		}
		// A cursor after a name of the longest length is sent whole: a
		// clipped cursor would be refused.
		long := strings.Repeat("x", maxToolNameLen)
		c.expectListChanged(func() { c.addNop(long) })
		c.expectListChanged(func() { c.addNop(long[:maxToolNameLen-1] + "y") })
		_, next = list("6", `{"cursor":`+quoteString(c.srv.tools.encodeCursor("b"))+`}`) // c, then the long one
		cur, _ := next.(string)
		if names, _ := list("7", `{"cursor":`+quoteString(cur)+`}`); !slices.Equal(names, []string{long[:maxToolNameLen-1] + "y"}) {
			t.Fatalf("the page after a %d-byte cursor (%d bytes): %v", maxToolNameLen, len(cur), names)
		}
		// Forged, and of the wrong type.
		for i, params := range []string{`{"cursor":"bm90LWEtY3Vyc29y"}`, `{"cursor":7}`, `{"cursor":null}`} {
			m := c.request(itoa(10+i), MethodToolsList, params)
			if params == `{"cursor":null}` { // null is no cursor: the first page
				if m["result"] == nil {
					t.Errorf("%s: %v", params, m)
				}
				continue
			}
			e := rpcError(t, m)
			data, _ := e["data"].(map[string]any)
			if e["code"] != float64(jsonrpc.CodeInvalidParams) || data["correlationId"] != c.sess.CorrelationID() {
				t.Errorf("%s: %v, want -32602 with the connection's correlationId", params, e)
			}
		}
	})
}

func (c *testClient) addNop(name string) {
	c.t.Helper()
	if err := c.srv.AddTool(Tool{Name: name, Handler: nopHandler}); err != nil {
		c.t.Fatal(err)
	}
}

// expectListChanged runs change and expects one list_changed.
func (c *testClient) expectListChanged(change func()) {
	c.t.Helper()
	change()
	if m := c.expect(); m["method"] != NotifyToolsListChanged || m["id"] != nil {
		c.t.Fatalf("want notifications/tools/list_changed, got %v", m)
	}
}

// TestListChangedRunningSessionsOnly: a change is announced to every
// running session, and not to sessions still in the handshake.
func TestListChangedRunningSessionsOnly(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		srv, logs := newTestServer(t, testConfig(), Options{}, nil)
		running1 := connectTestClient(t, tr, srv, logs, Version20251125)
		running2 := connectTestClient(t, tr, srv, logs, Version20241105)
		starting := connectTestClient(t, tr, srv, logs, "")
		initializing := connectTestClient(t, tr, srv, logs, "")
		initializing.request(`"i"`, MethodInitialize, `{"protocolVersion":"2025-06-18"}`)
		starting.quiet()
		initializing.quiet() // ping is served while INITIALIZING
		if starting.sess.State() != StateStarting || initializing.sess.State() != StateInitializing {
			t.Fatalf("states %v %v", starting.sess.State(), initializing.sess.State())
		}
		if n := srv.Stats().Sessions; n != 4 {
			t.Fatalf("Stats().Sessions = %d, want 4", n)
		}
		running1.expectListChanged(func() { running1.addNop("x") })
		for _, c := range []*testClient{running2} {
			if m := c.expect(); m["method"] != NotifyToolsListChanged {
				t.Fatalf("second running session: %v", m)
			}
		}
		starting.quiet()
		initializing.quiet()
		// Once running, the late session hears of the next change.
		initializing.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		initializing.quiet()
		if err := srv.RemoveTool("x"); err != nil {
			t.Fatal(err)
		}
		for _, c := range []*testClient{running1, running2, initializing} {
			if m := c.expect(); m["method"] != NotifyToolsListChanged {
				t.Fatalf("after the change: %v", m)
			}
		}
		starting.quiet()
		// A closed session is told nothing.
		running2.sess.Close()
		<-running2.done
		running1.expectListChanged(func() { running1.addNop("y") })
		if n := srv.Stats().Sessions; n != 3 {
			t.Fatalf("Stats().Sessions = %d after a close, want 3", n)
		}
	})
}
