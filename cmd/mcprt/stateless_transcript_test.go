package main

// One stdio connection of the binary that interleaves a session client
// (2025-11-25) with stateless requests (2026-07-28): every line the server
// writes validates against the schema of the revision of the request it
// answers, and the session is unaffected by the stateless requests.

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/wiretest"
)

const statelessRevision = "2026-07-28"

// slMeta is the _meta of a stateless request declaring caps.
func slMeta(caps string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` +
		caps + `,"io.modelcontextprotocol/clientInfo":{"name":"sl-test","version":"1.0.0"}}`
}

// slLine is one line the server wrote and what it answered.
type slLine struct {
	line string
	rev  string // the revision of the request it answers; for notifications, of their addressee
	def  string // the response definition (2026-07-28) or result definition (session); "" for notifications
}

// slTranscript drives one connection and keeps every line for validation.
type slTranscript struct {
	t     *testing.T
	p     *wiretest.Proc
	lines []slLine
	notes []map[string]any // notifications seen, in order
}

// decodeLine decodes a line of the server (numbers as float64).
func decodeLine(t *testing.T, line string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("not a JSON object: %s", clip(line))
	}
	return m
}

// subscriptionOf returns the subscription id a notification is tagged with.
func subscriptionOf(m map[string]any) (any, bool) {
	params, _ := m["params"].(map[string]any)
	meta, _ := params["_meta"].(map[string]any)
	id, ok := meta["io.modelcontextprotocol/subscriptionId"]
	return id, ok
}

// note records a notification: tagged ones belong to a stateless listen
// stream, the others to the session.
func (s *slTranscript) note(line string, m map[string]any) {
	rev := latestRevision
	if _, ok := subscriptionOf(m); ok {
		rev = statelessRevision
	}
	s.lines = append(s.lines, slLine{line: line, rev: rev})
	s.notes = append(s.notes, m)
}

// until reads lines until the answer to id (JSON text), recording the
// notifications before it; it returns the answer.
func (s *slTranscript) until(id, rev, def string) map[string]any {
	s.t.Helper()
	for range 50 {
		line := s.p.Expect(s.t)
		m := decodeLine(s.t, line)
		if _, isNote := m["method"]; isNote {
			s.note(line, m)
			continue
		}
		got, _ := json.Marshal(m["id"])
		if string(got) != id {
			s.t.Fatalf("answer to %s while waiting for %s: %s", got, id, clip(line))
		}
		s.lines = append(s.lines, slLine{line: line, rev: rev, def: def})
		return m
	}
	s.t.Fatalf("no answer to %s within 50 lines", id)
	return nil
}

// session sends a request of the session and returns its answer; def is
// its result's definition in 2025-11-25.
func (s *slTranscript) session(id, method, params, def string) map[string]any {
	s.t.Helper()
	line := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"`
	if params != "" {
		line += `,"params":` + params
	}
	s.p.Send(line + "}")
	return s.until(id, latestRevision, def)
}

// stateless sends a stateless request whose params are members plus the
// _meta declaring caps; def is its response's definition in 2026-07-28.
func (s *slTranscript) stateless(id, method, members, caps, def string) map[string]any {
	s.t.Helper()
	if members != "" {
		members += ","
	}
	s.p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + members + slMeta(caps) + `}}`)
	return s.until(id, statelessRevision, def)
}

// raw sends a line and returns the answer to id, a 2026-07-28 def.
func (s *slTranscript) raw(id, line, def string) map[string]any {
	s.t.Helper()
	s.p.Send(line)
	return s.until(id, statelessRevision, def)
}

func slResult(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("want a result, got %v", m)
	}
	return res
}

func slError(t *testing.T, m map[string]any, code float64) map[string]any {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok || e["code"] != code {
		t.Fatalf("want error %v, got %v", code, m)
	}
	return e
}

// checkStatelessResult checks the members every stateless result has.
func checkStatelessResult(t *testing.T, what string, res map[string]any, resultType string, cached bool) {
	t.Helper()
	if res["resultType"] != resultType {
		t.Errorf("%s: resultType %v, want %q", what, res["resultType"], resultType)
	}
	meta, _ := res["_meta"].(map[string]any)
	if info, _ := meta["io.modelcontextprotocol/serverInfo"].(map[string]any); info["name"] != "mcprt" {
		t.Errorf("%s: _meta serverInfo %v", what, meta)
	}
	_, hasTTL := res["ttlMs"]
	_, hasScope := res["cacheScope"]
	if hasTTL != cached || hasScope != cached {
		t.Errorf("%s: ttlMs %v, cacheScope %v; want them present: %v", what, res["ttlMs"], res["cacheScope"], cached)
	}
}

// checkSessionResult checks that a session result has none of the
// stateless revision's members.
func checkSessionResult(t *testing.T, what string, res map[string]any) {
	t.Helper()
	for _, k := range []string{"resultType", "ttlMs", "cacheScope"} {
		if _, ok := res[k]; ok {
			t.Errorf("%s (session): has %s: %v", what, k, res[k])
		}
	}
	if meta, ok := res["_meta"].(map[string]any); ok {
		if _, has := meta["io.modelcontextprotocol/serverInfo"]; has {
			t.Errorf("%s (session): _meta has the stateless serverInfo", what)
		}
	}
}

func TestStatelessTranscriptStdio(t *testing.T) {
	dir := schemaDir(t)
	t.Parallel()
	session := loadSchema(t, dir, latestRevision)
	modern := loadSchema(t, dir, statelessRevision)
	p := start(t, "MCPRT_SERVER_MODE=TEST", "MCPRT_SERVER_FIXTURES=conformance")
	s := &slTranscript{t: t, p: p}

	// A stateless request before any initialize.
	disc := slResult(t, s.stateless(`"d0"`, "server/discover", "", `{}`, "DiscoverResultResponse"))
	checkStatelessResult(t, "server/discover", disc, "complete", true)
	if v, _ := disc["supportedVersions"].([]any); len(v) != 5 || v[4] != statelessRevision {
		t.Errorf("supportedVersions %v, want the four session revisions and %s", v, statelessRevision)
	}

	init := slResult(t, s.session(`1`, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sess","version":"1"}}`, "InitializeResult"))
	if init["protocolVersion"] != latestRevision {
		t.Fatalf("initialize: %v", init)
	}
	p.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	sessTools := slResult(t, s.session(`2`, "tools/list", "", "ListToolsResult"))
	checkSessionResult(t, "tools/list", sessTools)

	slTools := slResult(t, s.stateless(`"tl"`, "tools/list", "", `{}`, "ListToolsResultResponse"))
	checkStatelessResult(t, "tools/list", slTools, "complete", true)
	if a, b := len(slTools["tools"].([]any)), len(sessTools["tools"].([]any)); a != b {
		t.Errorf("stateless tools/list lists %d tools, the session's %d", a, b)
	}

	res := slResult(t, s.stateless(`"ts"`, "tools/call", `"name":"test_simple_text","arguments":{}`, `{}`, "CallToolResultResponse"))
	checkStatelessResult(t, "tools/call", res, "complete", false)
	res = slResult(t, s.session(`3`, "tools/call", `{"name":"test_simple_text","arguments":{}}`, "CallToolResult"))
	checkSessionResult(t, "tools/call", res)

	// input_required round trip.
	const elicitTool = `"name":"test_input_required_result_elicitation","arguments":{}`
	ir := slResult(t, s.stateless(`"e1"`, "tools/call", elicitTool, `{"elicitation":{}}`, "CallToolResultResponse"))
	checkStatelessResult(t, "input_required", ir, "input_required", false)
	reqs, _ := ir["inputRequests"].(map[string]any)
	if r, _ := reqs["user_name"].(map[string]any); r["method"] != "elicitation/create" {
		t.Fatalf("inputRequests %v", ir["inputRequests"])
	}
	state, _ := ir["requestState"].(string)
	done := slResult(t, s.stateless(`"e2"`, "tools/call", elicitTool+`,"inputResponses":{"user_name":{"action":"accept","content":{"name":"Ada"}}},"requestState":`+jsonString(state),
		`{"elicitation":{}}`, "CallToolResultResponse"))
	checkStatelessResult(t, "input_required retry", done, "complete", false)
	if text := done["content"].([]any)[0].(map[string]any)["text"]; text != "Hello, Ada!" {
		t.Errorf("retry text %v", text)
	}

	const promptName = `"name":"test_input_required_result_prompt"`
	pr := slResult(t, s.stateless(`"pg1"`, "prompts/get", promptName, `{"elicitation":{}}`, "GetPromptResultResponse"))
	checkStatelessResult(t, "prompts/get input_required", pr, "input_required", false)
	pstate, _ := pr["requestState"].(string)
	pr = slResult(t, s.stateless(`"pg2"`, "prompts/get", promptName+`,"inputResponses":{"user_context":{"action":"accept","content":{"context":"tests"}}},"requestState":`+jsonString(pstate),
		`{"elicitation":{}}`, "GetPromptResultResponse"))
	checkStatelessResult(t, "prompts/get retry", pr, "complete", false)
	if !strings.Contains(string(mustMarshal(t, pr["messages"])), "Use this context: tests") {
		t.Errorf("prompt messages %v", pr["messages"])
	}

	// Unknown resource: -32602 stateless, -32002 in the session, both with data.uri.
	const unknownURI = "test://no/such/resource"
	e := slError(t, s.stateless(`"rr"`, "resources/read", `"uri":"`+unknownURI+`"`, `{}`, "InvalidParamsError"), -32602)
	if d, _ := e["data"].(map[string]any); d["uri"] != unknownURI {
		t.Errorf("stateless resources/read data %v", e["data"])
	}
	e = slError(t, s.session(`4`, "resources/read", `{"uri":"`+unknownURI+`"}`, ""), -32002)
	if d, _ := e["data"].(map[string]any); d["uri"] != unknownURI {
		t.Errorf("session resources/read data %v", e["data"])
	}

	// Removed methods are -32601 under the stateless revision, and work in the session.
	for _, m := range []string{"ping", "initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"} {
		slError(t, s.stateless(jsonString("rm-"+m), m, "", `{}`, "MethodNotFoundError"), -32601)
	}
	if r := slResult(t, s.session(`5`, "ping", "", "EmptyResult")); len(r) != 0 {
		t.Errorf("session ping %v", r)
	}

	// Bad _meta.
	for i, meta := range []string{
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}`,
		`{"io.modelcontextprotocol/protocolVersion":2026,"io.modelcontextprotocol/clientCapabilities":{}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"me"}`,
	} {
		id := jsonString("bm-" + string(rune('a'+i)))
		slError(t, s.raw(id, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list","params":{"_meta":`+meta+`}}`, "InvalidParamsError"), -32602)
	}
	// server/discover without _meta.
	slError(t, s.raw(`"bm-none"`, `{"jsonrpc":"2.0","id":"bm-none","method":"server/discover"}`, "InvalidParamsError"), -32602)

	// Unsupported versions.
	for _, v := range []string{"2099-01-01", "2025-11-25"} {
		id := jsonString("uv-" + v)
		e := slError(t, s.raw(id, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"`+v+
			`","io.modelcontextprotocol/clientCapabilities":{}}}}`, "UnsupportedProtocolVersionError"), -32022)
		d, _ := e["data"].(map[string]any)
		sup, _ := d["supported"].([]any)
		if d["requested"] != v || !slices.Contains(sup, any(statelessRevision)) {
			t.Errorf("-32022 data %v", d)
		}
	}

	// A capability the request did not declare.
	e = slError(t, s.stateless(`"mc"`, "tools/call", `"name":"test_missing_capability","arguments":{}`, `{"elicitation":{}}`,
		"MissingRequiredClientCapabilityError"), -32021)
	if d, _ := e["data"].(map[string]any); d["requiredCapabilities"] == nil || d["requiredCapabilities"].(map[string]any)["sampling"] == nil {
		t.Errorf("-32021 data %v", e["data"])
	}

	// subscriptions/listen: the acknowledgement first, then tagged notifications.
	p.Send(`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"promptsListChanged":true},` + slMeta(`{}`) + `}}`)
	ackLine := p.Expect(t)
	ack := decodeLine(t, ackLine)
	if ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first line after subscriptions/listen: %s", clip(ackLine))
	}
	if id, _ := subscriptionOf(ack); id != "L" {
		t.Errorf("acknowledgement tagged %v, want L", id)
	}
	s.note(ackLine, ack)
	before := len(s.notes)
	tr := slResult(t, s.stateless(`"tr"`, "tools/call", `"name":"test_trigger_tool_change","arguments":{}`, `{}`, "CallToolResultResponse"))
	checkStatelessResult(t, "trigger", tr, "complete", false)
	var tagged, untagged int
	for _, n := range s.notes[before:] {
		if n["method"] != "notifications/tools/list_changed" {
			t.Errorf("unexpected notification %v", n)
			continue
		}
		if id, ok := subscriptionOf(n); ok {
			tagged++
			if id != "L" {
				t.Errorf("list_changed tagged %v", id)
			}
		} else {
			untagged++
		}
	}
	if tagged != 1 || untagged != 1 {
		t.Errorf("after the tool change: %d tagged and %d session list_changed notifications, want 1 and 1", tagged, untagged)
	}
	p.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L"}}`)
	// The listen request gets no answer; the session goes on, and its tool
	// list shows the dynamic tool without any stateless member.
	sessTools = slResult(t, s.session(`6`, "tools/list", "", "ListToolsResult"))
	checkSessionResult(t, "tools/list after the change", sessTools)
	if !strings.Contains(string(mustMarshal(t, sessTools)), `"test_dynamic_tool"`) {
		t.Errorf("the session's tools/list lacks test_dynamic_tool")
	}
	if r := slResult(t, s.session(`7`, "ping", "", "EmptyResult")); len(r) != 0 {
		t.Errorf("session ping %v", r)
	}
	finish(t, p)

	// Validate every line against its revision.
	sessionDefs := map[string]string{}
	for _, l := range s.lines {
		if l.rev == latestRevision && l.def != "" {
			m := decodeLine(t, l.line)
			id, _ := json.Marshal(m["id"])
			sessionDefs[string(id)] = l.def
		}
	}
	for _, l := range s.lines {
		switch {
		case l.rev == latestRevision && l.def == "" && strings.Contains(l.line, `"method"`):
			if err := session.validate(t, "ServerNotification", []byte(l.line)); err != nil {
				t.Errorf("%v\n%s", err, l.line)
			}
		case l.rev == latestRevision:
			session.checkLine(t, l.line, sessionDefs)
		case l.def == "": // a notification of a listen stream
			m := decodeLine(t, l.line)
			def := map[string]string{
				"notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
				"notifications/tools/list_changed":         "ToolListChangedNotification",
				"notifications/prompts/list_changed":       "PromptListChangedNotification",
			}[m["method"].(string)]
			if def == "" {
				t.Errorf("unexpected stateless notification %s", l.line)
				continue
			}
			for _, d := range []string{def, "ServerNotification", "JSONRPCMessage"} {
				if err := modern.validate(t, d, []byte(l.line)); err != nil {
					t.Errorf("%v\n%s", err, l.line)
				}
			}
		default:
			m := decodeLine(t, l.line)
			defs := []string{l.def, "JSONRPCMessage"}
			if m["error"] != nil {
				defs = append(defs, "JSONRPCErrorResponse")
			} else {
				defs = append(defs, "JSONRPCResultResponse")
				if err := modern.validate(t, "ServerResult", mustMarshal(t, m["result"])); err != nil {
					t.Errorf("%v\n%s", err, l.line)
				}
			}
			if strings.HasSuffix(l.def, "Error") && m["error"] != nil {
				// The *Error definitions of 2026-07-28 describe either the
				// whole response or its error member.
				if _, ok := modern.defs[l.def]; ok && !strings.Contains(string(modern.defs[l.def]), `"jsonrpc"`) {
					defs[0] = ""
					if err := modern.validate(t, l.def, mustMarshal(t, m["error"])); err != nil {
						t.Errorf("%v\n%s", err, l.line)
					}
				}
			}
			for _, d := range defs {
				if d == "" {
					continue
				}
				if err := modern.validate(t, d, []byte(l.line)); err != nil {
					t.Errorf("%v\n%s", err, l.line)
				}
			}
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
