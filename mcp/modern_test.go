package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The stateless revision on a session's connection: requests with the
// modern _meta are answered without initialize, beside the session.

// modernMeta is a stateless _meta with the given client capabilities and
// extra members.
func modernMeta(caps string, extra ...string) string {
	m := `"_meta":{"` + MetaProtocolVersion + `":"` + Version20260728 + `","` + MetaClientCapabilities + `":` + caps
	for _, e := range extra {
		m += "," + e
	}
	return m + "}"
}

// withAskTool asks the client for a name (key who) and greets it.
func withAskTool(s *Server) {
	err := s.AddTool(Tool{Name: "ask", Handler: func(ctx context.Context, req *CallToolRequest) (any, error) {
		got, err := RequestInput(ctx, req.Session, map[string]InputRequest{"who": ElicitInput(ElicitParams{
			Message: "Who are you?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})})
		if err != nil {
			return nil, err
		}
		res, err := got.Elicit("who")
		if err != nil {
			return nil, err
		}
		_ = req.Log(ctx, LogInfo, "greeted")
		return fmt.Sprintf("hello %v", res.Content["name"]), nil
	}})
	if err != nil {
		panic(err)
	}
	if err := s.AddTool(Tool{Name: "noop", Handler: nopHandler}); err != nil {
		panic(err)
	}
	if err := s.AddResource(Resource{URI: "mem:/a", Name: "a"}, func(context.Context, *ReadResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []ResourceContents{{URI: "mem:/a", Text: "a"}}}, nil
	}); err != nil {
		panic(err)
	}
}

func TestStatelessRouting(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		c := newTestClient(t, tr, testConfig(), Options{}, withAskTool, "") // no initialize
		for _, tc := range []struct {
			name, method, params string
			code                 float64 // 0: a result
			inMessage            string
		}{
			{"discover", MethodServerDiscover, `{` + modernMeta(`{}`) + `}`, 0, ""},
			{"tools/list", MethodToolsList, `{` + modernMeta(`{}`) + `}`, 0, ""},
			{"no _meta", MethodServerDiscover, `{}`, -32602, "params._meta is missing"},
			{"_meta not an object", MethodServerDiscover, `{"_meta":[]}`, -32602, "must be an object"},
			{"no version", MethodServerDiscover, `{"_meta":{"` + MetaClientCapabilities + `":{}}}`, -32602, MetaProtocolVersion},
			{"no capabilities", MethodToolsList, `{"_meta":{"` + MetaProtocolVersion + `":"2026-07-28"}}`, -32602, MetaClientCapabilities},
			{"capabilities not an object", MethodToolsList, `{"_meta":{"` + MetaProtocolVersion + `":"2026-07-28","` + MetaClientCapabilities + `":1}}`, -32602, "must be an object"},
			{"bad log level", MethodToolsList, `{` + modernMeta(`{}`, `"`+MetaLogLevel+`":"loud"`) + `}`, -32602, "debug, info"},
			{"unknown version", MethodToolsList, `{"_meta":{"` + MetaProtocolVersion + `":"v9","` + MetaClientCapabilities + `":{}}}`, -32022, `"v9"`},
			{"session version", MethodToolsList, `{"_meta":{"` + MetaProtocolVersion + `":"2025-11-25","` + MetaClientCapabilities + `":{}}}`, -32022, "send initialize first"},
			{"removed initialize", MethodInitialize, `{` + modernMeta(`{}`) + `}`, -32601, "not part of the stateless revision"},
			{"removed ping", MethodPing, `{` + modernMeta(`{}`) + `}`, -32601, "not part of the stateless revision"},
			{"removed setLevel", MethodLoggingSetLevel, `{` + modernMeta(`{}`) + `}`, -32601, MetaLogLevel},
			{"removed subscribe", MethodResourcesSubscribe, `{` + modernMeta(`{}`) + `}`, -32601, "subscriptions/listen"},
			{"unknown method", "no/such", `{` + modernMeta(`{}`) + `}`, -32601, ""},
			{"missing capability", MethodToolsCall, `{"name":"ask",` + modernMeta(`{}`) + `}`, -32021, "elicitation"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				m := c.request("7", tc.method, tc.params)
				if m["id"] != float64(7) {
					t.Fatalf("id %v, want 7: %v", m["id"], m)
				}
				if tc.code == 0 {
					res, ok := m["result"].(map[string]any)
					if !ok || res["resultType"] != ResultComplete {
						t.Fatalf("want a complete result, got %v", m)
					}
					info := res["_meta"].(map[string]any)[MetaServerInfo].(map[string]any)
					if info["name"] == "" || info["version"] == "" {
						t.Errorf("serverInfo %v", info)
					}
					if _, ok := res["ttlMs"]; !ok || res["cacheScope"] != "private" {
						t.Errorf("caching hints missing: %v", res)
					}
					return
				}
				e := rpcError(t, m)
				if e["code"] != tc.code || !strings.Contains(e["message"].(string), tc.inMessage) {
					t.Fatalf("error %v, want code %v with %q", e, tc.code, tc.inMessage)
				}
			})
		}
		// The session itself was never initialized.
		if e := rpcError(t, c.request("8", MethodToolsList, `{}`)); e["code"] != float64(CodeNotInitialized) {
			t.Errorf("session tools/list: %v, want -32002", e)
		}
	})
}

func TestStatelessErrorData(t *testing.T) {
	c := newTestClient(t, transportMemory, testConfig(), Options{}, withAskTool, "")
	e := rpcError(t, c.request("1", MethodToolsList, `{"_meta":{"`+MetaProtocolVersion+`":"v9","`+MetaClientCapabilities+`":{}}}`))
	data := e["data"].(map[string]any)
	if data["requested"] != "v9" || fmt.Sprint(data["supported"]) != fmt.Sprint(AllVersions()) {
		t.Errorf("-32022 data %v", data)
	}
	e = rpcError(t, c.request("2", MethodToolsCall, `{"name":"ask",`+modernMeta(`{"sampling":{}}`)+`}`))
	if caps := e["data"].(map[string]any)["requiredCapabilities"]; fmt.Sprint(caps) != "map[elicitation:map[]]" {
		t.Errorf("-32021 requiredCapabilities %v", caps)
	}
	e = rpcError(t, c.request("3", MethodResourcesRead, `{"uri":"nope:/x",`+modernMeta(`{}`)+`}`))
	if e["code"] != float64(-32602) || e["data"].(map[string]any)["uri"] != "nope:/x" {
		t.Errorf("unknown resource: %v, want -32602 with data.uri", e)
	}
}

// A session and stateless requests share one connection; each keeps its
// own protocol.
func TestStatelessBesideSession(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		c := newTestClient(t, tr, testConfig(), Options{}, withAskTool, Version20251125)
		res := c.request("1", MethodToolsList, `{}`)["result"].(map[string]any)
		if _, has := res["resultType"]; has {
			t.Errorf("session tools/list has resultType: %v", res)
		}
		res = c.request("2", MethodToolsList, `{`+modernMeta(`{}`)+`}`)["result"].(map[string]any)
		if res["resultType"] != ResultComplete {
			t.Errorf("stateless tools/list: %v", res)
		}
		res = c.request("3", MethodToolsCall, `{"name":"noop",`+modernMeta(`{}`)+`}`)["result"].(map[string]any)
		if res["resultType"] != ResultComplete || res["isError"] != false {
			t.Errorf("stateless tools/call: %v", res)
		}
		if c.sess.ProtocolVersion() != Version20251125 || c.sess.State() != StateRunning {
			t.Errorf("the session changed: %s %v", c.sess.ProtocolVersion(), c.sess.State())
		}
	})
}

// An input_required round trip: the first call asks, the retry with the
// answer and the requestState completes; without logLevel no log message
// is sent, with it one is.
func TestStatelessInputRequired(t *testing.T) {
	c := newTestClient(t, transportMemory, testConfig(), Options{}, withAskTool, "")
	first := c.request("1", MethodToolsCall, `{"name":"ask",`+modernMeta(`{"elicitation":{}}`)+`}`)["result"].(map[string]any)
	if first["resultType"] != ResultInputRequired {
		t.Fatalf("first round: %v", first)
	}
	reqs := first["inputRequests"].(map[string]any)
	if who := reqs["who"].(map[string]any); who["method"] != MethodElicitationCreate {
		t.Fatalf("inputRequests %v", reqs)
	}
	state, _ := first["requestState"].(string)
	if state == "" {
		t.Fatal("no requestState")
	}
	retry := `{"name":"ask","inputResponses":{"who":{"action":"accept","content":{"name":"Ada"}}},"requestState":` +
		quoteString(state) + `,` + modernMeta(`{"elicitation":{}}`, `"`+MetaLogLevel+`":"info"`) + `}`
	c.send(`{"jsonrpc":"2.0","id":"2","method":"tools/call","params":` + retry + `}`)
	var sawLog bool
	for {
		m := c.expect()
		if m["method"] == NotifyMessage {
			sawLog = true
			continue
		}
		res := m["result"].(map[string]any)
		if res["resultType"] != ResultComplete || !strings.Contains(fmt.Sprint(res["content"]), "hello Ada") {
			t.Fatalf("second round: %v", res)
		}
		break
	}
	if !sawLog {
		t.Error("no notifications/message although logLevel was info")
	}
	// A changed state is refused.
	bad := strings.Replace(retry, state, state[:len(state)-2]+"AA", 1)
	if bad == retry {
		bad = strings.Replace(retry, state, "x"+state, 1)
	}
	if e := rpcError(t, c.request("3", MethodToolsCall, bad)); e["code"] != float64(-32602) ||
		!strings.Contains(e["message"].(string), "requestState") {
		t.Errorf("tampered state: %v", e)
	}
}

// subscriptions/listen: acknowledged first, then only what was asked for,
// tagged with the listen request's id; cancelling it ends it without an
// answer.
func TestStatelessListen(t *testing.T) {
	srv, logBuf := newTestServer(t, testConfig(), Options{}, withAskTool)
	c := connectTestClient(t, transportMemory, srv, logBuf, "")
	c.send(`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"promptsListChanged":true},` +
		modernMeta(`{}`) + `}}`)
	ack := c.expect()
	p := ack["params"].(map[string]any)
	if ack["method"] != NotifySubscriptionsAcknowledged || p["_meta"].(map[string]any)[MetaSubscriptionID] != "L" {
		t.Fatalf("first message %v", ack)
	}
	if n := p["notifications"].(map[string]any); n["toolsListChanged"] != true || n["promptsListChanged"] != nil {
		t.Errorf("acknowledged %v: prompts are not served, so not promised", n)
	}
	if err := srv.AddTool(Tool{Name: "later", Handler: nopHandler}); err != nil {
		t.Fatal(err)
	}
	m := c.expect()
	if m["method"] != NotifyToolsListChanged || m["params"].(map[string]any)["_meta"].(map[string]any)[MetaSubscriptionID] != "L" {
		t.Fatalf("list_changed %v", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L"}}`)
	// The stream ended: nothing more comes for it, and the next answer is
	// the next request's.
	if got := c.request("9", MethodServerDiscover, `{`+modernMeta(`{}`)+`}`); fmt.Sprint(got["id"]) != "9" {
		t.Fatalf("after cancel: %v", got)
	}
	if err := srv.RemoveTool("later"); err != nil {
		t.Fatal(err)
	}
	if got := c.request("10", MethodServerDiscover, `{`+modernMeta(`{}`)+`}`); fmt.Sprint(got["id"]) != "10" {
		t.Fatalf("a cancelled listen stream got a notification: %v", got)
	}
}
