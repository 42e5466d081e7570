package main

// notifications/resources/updated for the domain resources when another
// mcprt process sharing the store directory changes what they show.

import (
	"encoding/json"
	"strings"
	"testing"
)

// updateReader reads the notifications/resources/updated a client gets.
type updateReader struct {
	c    *toolClient
	from int // notes already looked at
}

// subscribeURI subscribes the client to uri.
func (c *toolClient) subscribeURI(uri string) {
	c.t.Helper()
	id := c.newID()
	c.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"resources/subscribe","params":{"uri":` + jsonString(uri) + `}}`)
	c.result(id)
}

// await reads stdout until an update of uri has come (each read is bounded
// by wiretest's deadline) and returns the URIs of the updates that came
// since the last await, in order.
func (u *updateReader) await(uri string) []string {
	u.c.t.Helper()
	var got []string
	for {
		for ; u.from < len(u.c.notes); u.from++ {
			var n struct {
				Method string
				Params struct{ URI string }
			}
			if err := json.Unmarshal([]byte(u.c.notes[u.from]), &n); err != nil {
				u.c.t.Fatal(err)
			}
			if n.Method != "notifications/resources/updated" {
				continue
			}
			got = append(got, n.Params.URI)
			if n.Params.URI == uri {
				u.from++
				return got
			}
		}
		u.c.readOne()
	}
}

func TestDomainUpdatesFromAnotherProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fast := "MCPRT_STORE_WATCH_INTERVAL_MS=20"
	a, _ := newDomainClient(t, dir, fast)
	b, _ := newDomainClient(t, dir, fast)
	ua := &updateReader{c: a}

	const entry = "memory://entries/ns/k"
	a.subscribeURI(entry)
	b.ok("memory_store", `{"namespace":"ns","key":"other","value":1}`)
	b.ok("memory_store", `{"namespace":"ns","key":"k","value":2}`)
	if got := ua.await(entry); len(got) != 1 {
		t.Fatalf("updates %v: want one, of %s (process A subscribes to nothing else, and ns/other is not ns/k)", got, entry)
	}

	s := a.ok("session_create", `{"initiator":"agent-a","task":"pair"}`)
	uri := "sessions://id/" + s["sessionId"].(string)
	a.subscribeURI(uri)
	b.ok("session_join", `{"sessionId":"`+s["sessionId"].(string)+`","agentId":"agent-b"}`)
	if got := ua.await(uri); len(got) != 1 {
		t.Fatalf("updates %v: want one, of %s", got, uri)
	}
	// The subscriber reads what changed.
	id := a.newID()
	a.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"resources/read","params":{"uri":` + jsonString(uri) + `}}`)
	if res := a.result(id); !strings.Contains(asJSON(t, res), "agent-b") {
		t.Fatalf("%s after the join: %v", uri, res)
	}
	finish(t, b.p)
	finish(t, a.p)
}
