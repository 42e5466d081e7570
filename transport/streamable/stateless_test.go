package streamable

// The stateless revision (2026-07-28) over HTTP, beside sessions on the
// same handler.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/mcp"
)

const slVersion = "2026-07-28"

// slBody is a stateless request of method with params members (may be
// empty) and the _meta of version slVersion.
func slBody(id, method, members string) string {
	if members != "" {
		members += ","
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + members +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"` + slVersion + `","io.modelcontextprotocol/clientCapabilities":{}}}}`
}

// slPost sends a stateless request with the headers a conforming client
// sends (MCP-Protocol-Version, Mcp-Method and, where the method names a
// target, Mcp-Name, all taken from the body), then hdr, which may change or
// delete ("") them.
func (f *fixture) slPost(body string, hdr ...string) *http.Response {
	f.t.Helper()
	std := []string{"MCP-Protocol-Version", slVersion}
	var m struct {
		Method string
		Params map[string]any
	}
	if json.Unmarshal([]byte(body), &m) == nil && m.Method != "" {
		std = append(std, "Mcp-Method", m.Method)
		for _, key := range []string{"name", "uri", "taskId"} {
			if v, ok := m.Params[key].(string); ok {
				std = append(std, "Mcp-Name", v)
				break
			}
		}
	}
	return f.do(http.MethodPost, body, append(std, hdr...)...)
}

func resultMap(t *testing.T, m wire) map[string]any {
	t.Helper()
	if m.Error != nil || m.Result == nil {
		t.Fatalf("want a result, got %+v (error %+v)", m, m.Error)
	}
	var res map[string]any
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestStatelessPostAnswersJSON(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	for _, tc := range []struct {
		name, body string
		cached     bool
	}{
		{"tools/list", slBody(`1`, "tools/list", ""), true},
		{"server/discover", slBody(`"d"`, "server/discover", ""), true},
		{"tools/call", slBody(`2`, "tools/call", `"name":"noop","arguments":{}`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.t = t
			resp := f.slPost(tc.body)
			if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
				t.Errorf("a stateless answer carries Mcp-Session-Id %q", sid)
			}
			res := resultMap(t, jsonAnswer(t, resp, http.StatusOK))
			if res["resultType"] != "complete" {
				t.Errorf("resultType %v", res["resultType"])
			}
			meta, _ := res["_meta"].(map[string]any)
			if meta["io.modelcontextprotocol/serverInfo"] == nil {
				t.Errorf("no serverInfo in _meta: %v", res)
			}
			if _, ok := res["ttlMs"]; ok != tc.cached {
				t.Errorf("ttlMs present %v, want %v", ok, tc.cached)
			}
		})
	}
	if n := f.h.Sessions(); n != 0 {
		t.Errorf("%d sessions after stateless requests, want 0", n)
	}
}

func TestStatelessHeaderChecks(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	call := slBody(`"c"`, "tools/call", `"name":"noop","arguments":{}`)
	for _, tc := range []struct {
		name   string
		body   string
		hdr    []string
		status int
		code   int64
	}{
		{"no protocol header", call, []string{"MCP-Protocol-Version", ""}, 400, mcp.CodeHeaderMismatch},
		{"header says a session revision", call, []string{"MCP-Protocol-Version", "2025-11-25"}, 400, mcp.CodeHeaderMismatch},
		{"header says another version", call, []string{"MCP-Protocol-Version", "2026-01-01"}, 400, mcp.CodeHeaderMismatch},
		{"Mcp-Method mismatch", call, []string{"Mcp-Method", "tools/list"}, 400, mcp.CodeHeaderMismatch},
		{"Mcp-Name mismatch", call, []string{"Mcp-Name", "other"}, 400, mcp.CodeHeaderMismatch},
		{"Mcp-Name on a method without a name", slBody(`"c"`, "tools/list", ""), []string{"Mcp-Name", "noop"}, 400, mcp.CodeHeaderMismatch},
		{"no Mcp-Method", call, []string{"Mcp-Method", ""}, 400, mcp.CodeHeaderMismatch},
		{"no Mcp-Method on tools/list", slBody(`"c"`, "tools/list", ""), []string{"Mcp-Method", ""}, 400, mcp.CodeHeaderMismatch},
		{"no Mcp-Name on tools/call", call, []string{"Mcp-Name", ""}, 400, mcp.CodeHeaderMismatch},
		{"Mcp-Method value in another case", slBody(`"c"`, "tools/list", ""), []string{"Mcp-Method", "TOOLS/LIST"}, 400, mcp.CodeHeaderMismatch},
		{"lower-case header name", slBody(`"c"`, "tools/list", ""), []string{"Mcp-Method", "", "mcp-method", "tools/list"}, 200, 0},
		{"upper-case header name", slBody(`"c"`, "tools/list", ""), []string{"Mcp-Method", "", "MCP-METHOD", "tools/list"}, 200, 0},
		{"Mcp-Method with whitespace", call, []string{"Mcp-Method", "  tools/call "}, 200, 0},
		{"Mcp-Method matches", call, []string{"Mcp-Method", "tools/call"}, 200, 0},
		{"Mcp-Name matches", call, []string{"Mcp-Method", "tools/call", "Mcp-Name", "noop"}, 200, 0},
		{"Mcp-Name with whitespace", call, []string{"Mcp-Name", " \tnoop\t "}, 200, 0},
		{"unknown method", slBody(`"c"`, "no/such", ""), nil, 404, -32601},
		{"removed method", slBody(`"c"`, "ping", ""), nil, 404, -32601},
		{"initialize under the 2026 header", slBody(`"c"`, "initialize", ""), nil, 404, -32601},
		{"invalid params", slBody(`"c"`, "tools/call", `"name":5`), nil, 400, -32602},
		{"bad _meta", `{"jsonrpc":"2.0","id":"c","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, nil, 400, -32602},
		{"no _meta", `{"jsonrpc":"2.0","id":"c","method":"tools/list"}`, nil, 400, -32602},
		{"unsupported version in both", strings.ReplaceAll(call, slVersion, "2099-01-01"), []string{"MCP-Protocol-Version", "2099-01-01"}, 400, mcp.CodeUnsupportedProtocolVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.t = t
			m := jsonAnswer(t, f.slPost(tc.body, tc.hdr...), tc.status)
			if tc.code == 0 {
				resultMap(t, m)
				return
			}
			if m.Error == nil || m.Error.Code != tc.code {
				t.Fatalf("want error %d, got %+v", tc.code, m)
			}
			if string(m.ID) != `"c"` {
				t.Errorf("error answer id %s, want \"c\"", m.ID)
			}
		})
	}
}

func TestStatelessGetDeleteNotAllowed(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		resp := f.do(method, "", "MCP-Protocol-Version", slVersion)
		readAll(t, resp)
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s with the 2026 header: status %d, want 405", method, resp.StatusCode)
		}
	}
}

func TestStatelessBesideSession(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	sid := f.open()
	res := resultMap(t, jsonAnswer(t, f.slPost(slBody(`1`, "tools/list", "")), http.StatusOK))
	if res["resultType"] != "complete" {
		t.Errorf("stateless tools/list: %v", res)
	}
	res = resultMap(t, jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), http.StatusOK))
	if _, ok := res["resultType"]; ok {
		t.Errorf("the session's tools/list has resultType: %v", res)
	}
	res = resultMap(t, jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`), http.StatusOK))
	if len(res) != 0 {
		t.Errorf("session ping %v", res)
	}
	if n := f.h.Sessions(); n != 1 {
		t.Errorf("%d sessions, want 1", n)
	}
}

func TestStatelessListenOverSSE(t *testing.T) {
	f := newFixture(t, fixtureOpts{http: func(c *Config) { c.MaxSessions = 1; c.MaxListens = 1 }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := f.send(f.request(ctx, http.MethodPost, slBody(`"L"`, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`),
		"MCP-Protocol-Version", slVersion, "Mcp-Method", "subscriptions/listen"))
	sse := newSSE(t, resp)
	ack := decodeWire(t, sse.must(t).data)
	if ack.Method != "notifications/subscriptions/acknowledged" || !strings.Contains(string(ack.Params), `"io.modelcontextprotocol/subscriptionId":"L"`) {
		t.Fatalf("first event %+v (%s), want the tagged acknowledgement", ack, ack.Params)
	}
	if err := f.srv.AddTool(mcp.Tool{Name: "added", Handler: func(context.Context, *mcp.CallToolRequest) (any, error) { return nil, nil }}); err != nil {
		t.Fatal(err)
	}
	ev := decodeWire(t, sse.must(t).data)
	if ev.Method != "notifications/tools/list_changed" || !strings.Contains(string(ev.Params), `"io.modelcontextprotocol/subscriptionId":"L"`) {
		t.Fatalf("event after AddTool: %+v (%s)", ev, ev.Params)
	}
	// While it is open it holds no stateless request slot: other requests
	// run; a second listen is over transport.http.maxListens.
	resultMap(t, jsonAnswer(t, f.slPost(slBody(`2`, "tools/list", "")), http.StatusOK))
	m := jsonAnswer(t, f.slPost(slBody(`"L2"`, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`)), http.StatusServiceUnavailable)
	if m.Error == nil || m.Error.Code != codeUnavailable || !strings.Contains(m.Error.Message, "maxListens") {
		t.Fatalf("503 body %+v", m.Error)
	}
	cancel()
	// The stream ends on the server too: its listen bound comes free.
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for f.h.listens.count() != 0 || f.h.statelessSlots.InUse() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the listen request is still counted 10s after the client cancelled it")
		}
		<-tick.C
	}
	resultMap(t, jsonAnswer(t, f.slPost(slBody(`3`, "tools/list", "")), http.StatusOK))
}

func TestStatelessConcurrencyBound(t *testing.T) {
	f := newFixture(t, fixtureOpts{http: func(c *Config) { c.MaxSessions = 1 }})
	type answer struct {
		status int
		body   string
		err    error
	}
	first := make(chan answer, 1)
	req := f.request(context.Background(), http.MethodPost, slBody(`1`, "tools/call", `"name":"steps","arguments":{"before":0,"after":0}`),
		"MCP-Protocol-Version", slVersion, "Mcp-Method", "tools/call", "Mcp-Name", "steps")
	go func() {
		resp, err := f.ts.Client().Do(req)
		if err != nil {
			first <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, err = io.Copy(&b, resp.Body)
		first <- answer{status: resp.StatusCode, body: b.String(), err: err}
	}()
	select {
	case <-f.started:
	case a := <-first:
		t.Fatalf("the steps call ended before it started: %d %v %s", a.status, a.err, a.body)
	case <-time.After(10 * time.Second):
		t.Fatal("the steps tool did not start")
	}
	m := jsonAnswer(t, f.slPost(slBody(`2`, "tools/call", `"name":"noop","arguments":{}`)), http.StatusServiceUnavailable)
	if m.Error == nil || m.Error.Code != codeUnavailable || string(m.ID) != `2` {
		t.Fatalf("503 answer %+v", m)
	}
	// A session is not bounded by the stateless slots' use.
	sid := f.open()
	resultMap(t, jsonAnswer(t, f.post(sid, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`), http.StatusOK))
	close(f.release)
	var a answer
	select {
	case a = <-first:
	case <-time.After(10 * time.Second):
		t.Fatal("the first call did not finish")
	}
	if a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, `"resultType":"complete"`) {
		t.Fatalf("first call: %d %v %s", a.status, a.err, a.body)
	}
	resultMap(t, jsonAnswer(t, f.slPost(slBody(`4`, "tools/call", `"name":"noop","arguments":{}`)), http.StatusOK))
}
