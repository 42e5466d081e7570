package mcp

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
)

// TestWrapCacheAnswersEachResult calls a tool whose small results vary
// (the first is the one its wrap keeps) and one that always returns the
// same value, from two sessions of different revisions at once (one sends
// structuredContent, one does not), many calls in flight: every answer
// carries its own call's result, as text and (where sent) as
// structuredContent, and -race checks the kept answer's sharing.
func TestWrapCacheAnswersEachResult(t *testing.T) {
	setup := func(s *Server) {
		for _, tl := range []Tool{
			{Name: "small", Handler: func(_ context.Context, req *CallToolRequest) (any, error) {
				var in struct{ N int }
				if err := json.Unmarshal(req.Arguments, &in); err != nil {
					return nil, err
				}
				return map[string]any{"n": in.N}, nil
			}},
			{Name: "same", Handler: func(context.Context, *CallToolRequest) (any, error) {
				return map[string]any{"ok": true}, nil
			}},
		} {
			if err := s.AddTool(tl); err != nil {
				t.Fatal(err)
			}
		}
	}
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		modern := newTestClient(t, tr, testConfig(), Options{}, setup, Version20251125)
		old := connectTestClient(t, tr, modern.srv, modern.logBuf, Version20250326)
		const calls = 60
		var wg sync.WaitGroup
		for _, c := range []*testClient{modern, old} {
			wg.Go(func() {
				for i := range calls {
					tool, args := "small", `{"N":`+strconv.Itoa(i%4)+`}`
					if i%3 == 2 {
						tool, args = "same", `{}`
					}
					c.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":` +
						callParamsJSON(tool, args) + `}`)
				}
			})
		}
		wg.Wait()
		for _, c := range []*testClient{modern, old} {
			for range calls {
				m := c.expect()
				id, _ := m["id"].(float64)
				i := int(id)
				want := `{"n":` + strconv.Itoa(i%4) + `}`
				if i%3 == 2 {
					want = `{"ok":true}`
				}
				res, _ := m["result"].(map[string]any)
				content, _ := res["content"].([]any)
				if len(content) != 1 || res["isError"] != false {
					t.Fatalf("call %d: %v", i, m)
				}
				if text := content[0].(map[string]any)["text"]; text != want {
					t.Fatalf("call %d: text %v, want %s", i, text, want)
				}
				sc, sent := res["structuredContent"]
				if sent != (c == modern) {
					t.Fatalf("call %d: structuredContent sent %v on revision %s", i, sent, c.sess.ProtocolVersion())
				}
				if sent {
					if js, _ := json.Marshal(sc); string(js) != want {
						t.Fatalf("call %d: structuredContent %s, want %s", i, js, want)
					}
				}
			}
		}
	})
}
