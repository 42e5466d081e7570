package mcp

// requestState of stateless input_required exchanges under hostile
// clients: whatever comes back is verified (signature, method, target,
// expiry, format) before a handler sees any of it.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/core"
)

// statelessMeta is the _meta of a stateless request declaring caps.
func statelessMeta(caps string) string {
	return `"_meta":{"` + MetaProtocolVersion + `":"` + Version20260728 + `","` + MetaClientCapabilities + `":` + caps + `}`
}

// rsElicit asks for one string property.
func rsElicit(msg string) InputRequest {
	return ElicitInput(ElicitParams{Message: msg,
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"v":{"type":"string"}},"required":["v"]}`)})
}

// rsSetup registers the tools and prompt of these tests: ask_a and ask_b
// ask for "k"; a prompt also named ask_a asks for "k"; rounds asks for
// "a", then (a second round) for "b", keeping "r1" in its state.
func rsSetup(srv *Server) {
	ask := func(name string) Tool {
		return Tool{Name: name, Handler: func(ctx context.Context, req *CallToolRequest) (any, error) {
			got, err := RequestInput(ctx, req.Session, map[string]InputRequest{"k": rsElicit("k?")})
			if err != nil {
				return nil, err
			}
			return &CallToolResult{Content: []Content{TextContent(name + " got " + string(got["k"]))}}, nil
		}}
	}
	for _, name := range []string{"ask_a", "ask_b"} {
		if err := srv.AddTool(ask(name)); err != nil {
			panic(err)
		}
	}
	if err := srv.AddPrompt(Prompt{Name: "ask_a"}, func(ctx context.Context, req *GetPromptRequest) (*GetPromptResult, error) {
		got, err := RequestInput(ctx, req.Session, map[string]InputRequest{"k": rsElicit("k?")})
		if err != nil {
			return nil, err
		}
		return &GetPromptResult{Messages: []PromptMessage{{Role: RoleUser, Content: TextContent("prompt got " + string(got["k"]))}}}, nil
	}); err != nil {
		panic(err)
	}
	if err := srv.AddTool(Tool{Name: "rounds", Handler: func(ctx context.Context, req *CallToolRequest) (any, error) {
		prev := string(RequestState(ctx))
		SetRequestState(ctx, []byte("r1"))
		a, err := RequestInput(ctx, req.Session, map[string]InputRequest{"a": rsElicit("a?")})
		if err != nil {
			return nil, err
		}
		if prev != "r1" {
			return nil, core.Errorf(core.CodeInternal, "round 2 began with state %q, want r1", prev)
		}
		b, err := RequestInput(ctx, req.Session, map[string]InputRequest{"b": rsElicit("b?")})
		if err != nil {
			return nil, err
		}
		return &CallToolResult{Content: []Content{TextContent("a=" + string(a["a"]) + " b=" + string(b["b"]))}}, nil
	}}); err != nil {
		panic(err)
	}
}

// rsKey is a fixed signing key.
var rsKey = []byte("0123456789abcdef0123456789abcdef")

// rsClient starts a connection (no handshake) to a server of rsSetup.
func rsClient(t *testing.T, opts Options, ttlMs int) *testClient {
	t.Helper()
	cfg := testConfig()
	if ttlMs > 0 {
		cfg.Stateless.RequestStateTTL = time.Duration(ttlMs) * time.Millisecond
	}
	return newTestClient(t, transportMemory, cfg, opts, rsSetup, "")
}

// sreq sends a stateless request of method with the params members
// (without _meta, may be empty) and the capabilities caps, and returns its
// answer.
func (c *testClient) sreq(id, method, members, caps string) map[string]any {
	c.t.Helper()
	params := "{" + members
	if members != "" {
		params += ","
	}
	return c.request(id, method, params+statelessMeta(caps)+"}")
}

// stateCall sends tools/call of name with extra params members (requestState,
// inputResponses) under the elicitation capability.
func (c *testClient) stateCall(id, name, extra string) map[string]any {
	c.t.Helper()
	members := `"name":` + quoteString(name) + `,"arguments":{}`
	if extra != "" {
		members += "," + extra
	}
	return c.sreq(id, MethodToolsCall, members, `{"elicitation":{}}`)
}

// inputRequired checks that m is an input_required result asking for
// exactly keys and returns its requestState.
func inputRequired(t *testing.T, m map[string]any, keys ...string) string {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok || res["resultType"] != ResultInputRequired {
		t.Fatalf("want an input_required result, got %v", m)
	}
	reqs, _ := res["inputRequests"].(map[string]any)
	if len(reqs) != len(keys) {
		t.Fatalf("inputRequests %v, want the keys %v", reqs, keys)
	}
	for _, k := range keys {
		r, _ := reqs[k].(map[string]any)
		if r["method"] != MethodElicitationCreate {
			t.Fatalf("inputRequests[%q] = %v, want an elicitation/create", k, reqs[k])
		}
	}
	state, _ := res["requestState"].(string)
	if state == "" {
		t.Fatalf("input_required without requestState: %v", res)
	}
	return state
}

// completeText checks that m is a complete tools/call result and returns
// its first text.
func completeText(t *testing.T, m map[string]any) string {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok || res["resultType"] != ResultComplete || res["isError"] == true {
		t.Fatalf("want a complete result, got %v", m)
	}
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("no content: %v", res)
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	return text
}

// stateRefused checks that m is -32602 about the requestState, its message
// containing why.
func stateRefused(t *testing.T, m map[string]any, why string) {
	t.Helper()
	e := rpcError(t, m)
	msg, _ := e["message"].(string)
	if e["code"] != float64(-32602) || !strings.Contains(msg, why) {
		t.Fatalf("want -32602 saying %q, got %v", why, e)
	}
}

const answerK = `"inputResponses":{"k":{"action":"accept","content":{"v":"x"}}}`

// firstState runs the first round of ask_a and returns its requestState.
func firstState(c *testClient, id string) string {
	c.t.Helper()
	return inputRequired(c.t, c.stateCall(id, "ask_a", ""), "k")
}

func TestRequestStateRoundTrip(t *testing.T) {
	c := rsClient(t, Options{}, 0)
	state := firstState(c, `"1"`)
	got := completeText(t, c.stateCall(`"2"`, "ask_a", answerK+`,"requestState":`+quoteString(state)))
	if want := `ask_a got {"action":"accept","content":{"v":"x"}}`; got != want {
		t.Fatalf("text %q, want %q", got, want)
	}
	// The answer alone, without the state, is enough for a single round.
	if got := completeText(t, c.stateCall(`"3"`, "ask_a", answerK)); !strings.HasPrefix(got, "ask_a got ") {
		t.Fatalf("text %q", got)
	}
}

func TestRequestStateTampered(t *testing.T) {
	c := rsClient(t, Options{}, 0)
	state := firstState(c, `"first"`)
	body, sig, ok := strings.Cut(state, ".")
	if !ok {
		t.Fatalf("requestState %q has no '.'", state)
	}
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	cases := []struct {
		name, state, why string
	}{
		{"payload byte flipped", flip(body, len(body)/2) + "." + sig, "integrity"},
		{"first payload byte flipped", flip(body, 0) + "." + sig, "integrity"},
		{"signature byte flipped", body + "." + flip(sig, len(sig)/2), "integrity"},
		{"truncated", state[:len(state)-3], "integrity"},
		{"signature dropped", body + ".", "integrity"},
		{"no separator", body + sig, "integrity"},
		{"payload only", body, "integrity"},
		{"not base64", "!!!!." + sig, "integrity"},
		{"not base64 signature", body + ".$$$$", "integrity"},
		{"padded base64", body + "." + sig + "==", "integrity"},
		{"empty", "", "integrity"},
		{"two states joined", state + "." + sig, "integrity"},
		{"longer than any", strings.Repeat("A", maxRequestStateBytes+1), "longer than any"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			m := c.stateCall(quoteString(tc.name), "ask_a", answerK+`,"requestState":`+quoteString(tc.state))
			stateRefused(t, m, tc.why)
		})
	}
	c.t = t
	for _, bad := range []string{`42`, `null`, `{}`, `["x"]`, `true`} {
		m := c.stateCall(`"typed"`, "ask_a", answerK+`,"requestState":`+bad)
		stateRefused(t, m, "requestState must be the string")
	}
	// The server still answers the untouched state.
	completeText(t, c.stateCall(`"intact"`, "ask_a", answerK+`,"requestState":`+quoteString(state)))
}

func TestRequestStateOtherTarget(t *testing.T) {
	c := rsClient(t, Options{}, 0)
	state := firstState(c, `"a"`)
	// Another tool.
	stateRefused(t, c.stateCall(`"b"`, "ask_b", answerK+`,"requestState":`+quoteString(state)), `was made for tools/call of "ask_a"`)
	// The same name under another method: prompts/get of the prompt ask_a.
	m := c.sreq(`"p"`, MethodPromptsGet, `"name":"ask_a",`+answerK+`,"requestState":`+quoteString(state), `{"elicitation":{}}`)
	stateRefused(t, m, `was made for tools/call of "ask_a"`)
	// And a prompt's state onto the tool of the same name.
	pm := c.sreq(`"p1"`, MethodPromptsGet, `"name":"ask_a"`, `{"elicitation":{}}`)
	pstate := inputRequired(t, pm, "k")
	stateRefused(t, c.stateCall(`"t1"`, "ask_a", answerK+`,"requestState":`+quoteString(pstate)), `was made for prompts/get of "ask_a"`)
	// The prompt's own state is accepted by the prompt.
	m = c.sreq(`"p2"`, MethodPromptsGet, `"name":"ask_a",`+answerK+`,"requestState":`+quoteString(pstate), `{"elicitation":{}}`)
	if res, _ := m["result"].(map[string]any); res == nil || res["resultType"] != ResultComplete {
		t.Fatalf("prompts/get with its own state: %v", m)
	}
}

func TestRequestStateExpiry(t *testing.T) {
	const ttl = 5000
	clock := core.NewManualClock(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC))
	c := rsClient(t, Options{Clock: clock}, ttl)
	state := firstState(c, `"1"`)
	clock.Advance(ttl * time.Millisecond) // the last valid instant
	completeText(t, c.stateCall(`"2"`, "ask_a", answerK+`,"requestState":`+quoteString(state)))
	clock.Advance(time.Millisecond)
	stateRefused(t, c.stateCall(`"3"`, "ask_a", answerK+`,"requestState":`+quoteString(state)), "has expired")
	// A fresh round is valid again.
	fresh := firstState(c, `"4"`)
	completeText(t, c.stateCall(`"5"`, "ask_a", answerK+`,"requestState":`+quoteString(fresh)))
}

func TestRequestStateKeys(t *testing.T) {
	otherKey := []byte("fedcba9876543210fedcba9876543210")
	cases := []struct {
		name         string
		keyA, keyB   []byte
		wantAccepted bool
	}{
		{"random keys", nil, nil, false},
		{"different keys", rsKey, otherKey, false},
		{"shared key", rsKey, rsKey, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := rsClient(t, Options{RequestStateKey: tc.keyA}, 0)
			b := rsClient(t, Options{RequestStateKey: tc.keyB}, 0)
			state := firstState(a, `"a1"`)
			m := b.stateCall(`"b1"`, "ask_a", answerK+`,"requestState":`+quoteString(state))
			if tc.wantAccepted {
				completeText(t, m)
				// And back the other way.
				completeText(t, a.stateCall(`"a2"`, "ask_a", answerK+`,"requestState":`+quoteString(firstState(b, `"b2"`))))
			} else {
				stateRefused(t, m, "integrity")
			}
		})
	}
	if _, err := NewServer(Options{RequestStateKey: []byte("short")}); err == nil {
		t.Errorf("NewServer accepted a 5-byte requestState key")
	}
}

// TestRequestStateForged signs payloads with the shared key: a signature
// that verifies is still not enough when the content is wrong.
func TestRequestStateForged(t *testing.T) {
	clock := core.NewManualClock(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC))
	c := rsClient(t, Options{RequestStateKey: rsKey, Clock: clock}, 0)
	sign := func(payload string) string {
		m := hmac.New(sha256.New, rsKey)
		m.Write([]byte(payload))
		enc := base64.RawURLEncoding
		return enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(m.Sum(nil))
	}
	future := clock.Now().Add(time.Hour).UnixMilli()
	exp := func(ms int64) string { return strconv.FormatInt(ms, 10) }
	cases := []struct{ name, payload, why string }{
		{"version 2", `{"v":2,"m":"tools/call","t":"ask_a","exp":` + exp(future) + `}`, "not in a format"},
		{"not JSON", `not json`, "not in a format"},
		{"JSON array", `[1,2]`, "not in a format"},
		{"other method", `{"v":1,"m":"prompts/get","t":"ask_a","exp":` + exp(future) + `}`, "was made for"},
		{"other target", `{"v":1,"m":"tools/call","t":"ask_b","exp":` + exp(future) + `}`, "was made for"},
		{"expired", `{"v":1,"m":"tools/call","t":"ask_a","exp":` + exp(clock.Now().UnixMilli()-1) + `}`, "has expired"},
		{"answers not objects", `{"v":1,"m":"tools/call","t":"ask_a","exp":` + exp(future) + `,"a":"x"}`, "not in a format"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			stateRefused(t, c.stateCall(quoteString(tc.name), "ask_a", answerK+`,"requestState":`+quoteString(sign(tc.payload))), tc.why)
		})
	}
	c.t = t
	// A well-formed forged state carrying an answer is honoured: the key is
	// the trust boundary.
	good := sign(`{"v":1,"m":"tools/call","t":"ask_a","exp":` + exp(future) + `,"a":{"k":{"action":"decline"}}}`)
	if got := completeText(t, c.stateCall(`"good"`, "ask_a", `"requestState":`+quoteString(good))); got != `ask_a got {"action":"decline"}` {
		t.Fatalf("text %q", got)
	}
}

func TestRequestStateInputResponsesShape(t *testing.T) {
	c := rsClient(t, Options{}, 0)
	for _, tc := range []struct{ name, responses, why string }{
		{"array", `[{"action":"accept"}]`, "inputResponses must be an object"},
		{"string", `"k"`, "inputResponses must be an object"},
		{"number", `7`, "inputResponses must be an object"},
		{"null", `null`, "inputResponses must be an object"},
		{"member string", `{"k":"accept"}`, `inputResponses["k"] must be an object`},
		{"member null", `{"k":null}`, `inputResponses["k"] must be an object`},
		{"member array", `{"k":[]}`, `inputResponses["k"] must be an object`},
		{"second member bad", `{"k":{"action":"accept"},"j":1}`, `inputResponses["j"] must be an object`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			stateRefused(t, c.stateCall(quoteString(tc.name), "ask_a", `"inputResponses":`+tc.responses), tc.why)
		})
	}
	c.t = t
	// An empty object and answers under unknown keys ask again.
	inputRequired(t, c.stateCall(`"empty"`, "ask_a", `"inputResponses":{}`), "k")
	inputRequired(t, c.stateCall(`"other"`, "ask_a", `"inputResponses":{"zz":{"action":"accept"}}`), "k")
}

func TestRequestStateMultiRound(t *testing.T) {
	c := rsClient(t, Options{}, 0)
	s1 := inputRequired(t, c.stateCall(`1`, "rounds", ""), "a")
	ansA := `{"action":"accept","content":{"v":"A"}}`
	ansB := `{"action":"accept","content":{"v":"B"}}`
	s2 := inputRequired(t, c.stateCall(`2`, "rounds", `"inputResponses":{"a":`+ansA+`},"requestState":`+quoteString(s1)), "b")
	// The answer of round 1 travels in s2: round 3 sends only b.
	got := completeText(t, c.stateCall(`3`, "rounds", `"inputResponses":{"b":`+ansB+`},"requestState":`+quoteString(s2)))
	if want := "a=" + ansA + " b=" + ansB; got != want {
		t.Fatalf("text %q, want %q", got, want)
	}
	// Round 1's state with b alone: a is asked for again.
	inputRequired(t, c.stateCall(`4`, "rounds", `"inputResponses":{"b":`+ansB+`},"requestState":`+quoteString(s1)), "a")
	// A later answer overrides the one carried in the state.
	ansA2 := `{"action":"accept","content":{"v":"A2"}}`
	got = completeText(t, c.stateCall(`5`, "rounds", `"inputResponses":{"a":`+ansA2+`,"b":`+ansB+`},"requestState":`+quoteString(s2)))
	if want := "a=" + ansA2 + " b=" + ansB; got != want {
		t.Fatalf("text %q, want %q", got, want)
	}
	// Round 2's state replayed onto ask_a is refused.
	stateRefused(t, c.stateCall(`6`, "ask_a", answerK+`,"requestState":`+quoteString(s2)), `was made for tools/call of "rounds"`)
}

// TestRequestStateNeedsCapability: a retry cannot smuggle in an answer for
// a capability the request does not declare.
func TestRequestStateNeedsCapability(t *testing.T) {
	c := rsClient(t, Options{}, 0)
	state := firstState(c, `"1"`)
	m := c.sreq(`"2"`, MethodToolsCall, `"name":"ask_a","arguments":{},`+answerK+`,"requestState":`+quoteString(state), `{}`)
	e := rpcError(t, m)
	if e["code"] != float64(CodeMissingClientCapability) {
		t.Fatalf("want -32021, got %v", e)
	}
}
