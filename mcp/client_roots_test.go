package mcp

import (
	"context"
	"encoding/json"
	"testing"
)

// rootsTool lists the roots and returns them.
func rootsTool() Tool {
	return handlerTool("roots", func(ctx context.Context, req *CallToolRequest) (any, error) {
		return req.Session.ListRoots(ctx)
	})
}

// listRoots calls the roots tool; when the server asks the client, it
// answers with answer. It returns the roots the tool got and whether the
// client was asked.
func (p *peer) listRoots(answer string) (string, bool) {
	p.t.Helper()
	id := p.startCall("roots", "", "")
	m, raw := p.next()
	asked := false
	if m["method"] == MethodRootsList {
		asked = true
		rid, _ := json.Marshal(m["id"])
		p.reply(string(rid), answer)
		m, raw = p.next()
	}
	if got, _ := json.Marshal(m["id"]); string(got) != id {
		p.t.Fatalf("want the answer to %s, got %s", id, raw)
	}
	return resultText(p.t, m), asked
}

// TestRootsCacheAndHook: with roots.listChanged the list is cached until
// the client announces a change, which also runs the program's hook;
// without it every ListRoots asks the client.
func TestRootsCacheAndHook(t *testing.T) {
	t.Run("listChanged", func(t *testing.T) {
		p := newPeer(t, peerOptions{caps: `{"roots":{"listChanged":true}}`, tools: []Tool{rootsTool()}})
		hooked := make(chan []Root, 4)
		p.sess.OnRootsListChanged(func(s *Session) {
			roots, err := s.ListRoots(context.Background()) // asks the client: the cache was dropped
			if err != nil {
				t.Errorf("ListRoots in the hook: %v", err)
			}
			hooked <- roots
		})
		if got, asked := p.listRoots(`{"roots":[{"uri":"file:///a"}]}`); !asked || got != `[{"uri":"file:///a"}]` {
			t.Fatalf("first list %s (asked %v)", got, asked)
		}
		if got, asked := p.listRoots(`{}`); asked || got != `[{"uri":"file:///a"}]` {
			t.Fatalf("cached list %s (asked %v)", got, asked)
		}
		p.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
		_, rid := p.expectRequest(MethodRootsList) // the hook asks
		p.reply(rid, `{"roots":[{"uri":"file:///b","name":"b"}]}`)
		if got := recv(t, hooked, "the hook"); len(got) != 1 || got[0].URI != "file:///b" || got[0].Name != "b" {
			t.Errorf("the hook got %v", got)
		}
		if got, asked := p.listRoots(`{}`); asked || got != `[{"uri":"file:///b","name":"b"}]` {
			t.Errorf("list after the change %s (asked %v)", got, asked)
		}
		p.sess.OnRootsListChanged(nil)
		p.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
		if got, asked := p.listRoots(`{"roots":[]}`); !asked || got != `[]` {
			t.Errorf("list after a change without hook %s (asked %v)", got, asked)
		}
	})
	t.Run("no listChanged", func(t *testing.T) {
		p := newPeer(t, peerOptions{caps: `{"roots":{}}`, tools: []Tool{rootsTool()}})
		for range 2 {
			if got, asked := p.listRoots(`{"roots":[{"uri":"file:///a"}]}`); !asked || got != `[{"uri":"file:///a"}]` {
				t.Errorf("list %s (asked %v)", got, asked)
			}
		}
	})
	t.Run("bad answer", func(t *testing.T) {
		p := newPeer(t, peerOptions{caps: `{"roots":{}}`, tools: []Tool{rootsTool()}})
		id := p.startCall("roots", "", "")
		_, rid := p.expectRequest(MethodRootsList)
		p.reply(rid, `{"roots":"none"}`)
		resp, _ := p.untilResponse(id)
		if e := toolError(t, resp["result"].(map[string]any)); e["code"] != "INTERNAL" {
			t.Errorf("result %v", resp)
		}
	})
}

// TestRootsHookCoalesces: announcements that arrive while the hook runs
// make it run once more, never concurrently with itself.
func TestRootsHookCoalesces(t *testing.T) {
	p := newPeer(t, peerOptions{caps: `{"roots":{"listChanged":true}}`})
	entered := make(chan struct{}, 8)
	release := make(chan struct{})
	running := 0
	p.sess.OnRootsListChanged(func(*Session) {
		running++ // the race detector objects if runs overlap
		entered <- struct{}{}
		<-release
		running--
	})
	p.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	recv(t, entered, "the first run")
	for range 3 {
		p.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	}
	p.quiet() // the three were handled
	release <- struct{}{}
	recv(t, entered, "the second run")
	release <- struct{}{}
	p.quiet()
	select {
	case <-entered:
		t.Error("the hook ran a third time")
	default:
	}
	close(release)
}
