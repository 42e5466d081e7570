package fuzz

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
)

// FuzzPromptsGet turns arbitrary bytes into the params of a prompts/get
// sent to an in-process Session of a TEST-mode server with the demo
// prompts: demo_greeting (arguments name, required, and style, one of
// casual, formal and pirate) and demo_review (no arguments; text, image,
// embedded resource and resource link messages).
//
// The input is data and split; split's low 14 bits choose how data
// becomes params: 0 — data is the params when it is valid JSON, else
// params is {"name": <data as a JSON string>}; k > 0 — data is cut at byte
// k-1 into the name (a JSON string) and the arguments (embedded as is
// when valid JSON, else as a JSON string; omitted when empty). The top 2
// bits choose the revision, as in FuzzToolCall.
//
// Properties: nothing panics or hangs; the request gets exactly one
// compact response and nothing else is written, and it is what an
// independent reference expects: -32602 for params that are not an object
// {name: string, arguments?: object of strings, _meta?: object} (members
// matched exactly, each at most once, null meaning absent), an unknown
// prompt, a missing required argument or a style demo_greeting does not
// have; else the prompt's messages, exactly, with the content types of
// the revision (a resource_link becomes text before 2025-06-18). Every
// error carries data.correlationId: the client's when readable, else the
// connection's.
func FuzzPromptsGet(f *testing.F) {
	for _, s := range promptsGetSeeds() {
		f.Add(s.data, s.split)
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		version := toolCallVersions[split>>14]
		line := oneRequestLine(mcp.MethodPromptsGet, "name", "arguments", data, int(split&0x3fff))
		if len(line) > toolCallMaxLine {
			t.Skip("the line is over transport.maxMessageBytes")
		}
		resp, connCID := runOneRequest(t, line, version)
		req, ok := checkOneResponse(t, line, resp, connCID)
		if !ok {
			return
		}
		checkPromptResponse(t, line, resp, refPrompt(req.Params, version))
	})
}

// refMessage is one prompt message as the reference expects it: its role,
// content type and, for text, the text ("" for any).
type refPromptMessage struct{ role, typ, text string }

// refPrompt returns the messages the reference expects for prompts/get
// params under version, or nil for -32602.
func refPrompt(params json.RawMessage, version string) []refPromptMessage {
	members, ok := objectMembers(params)
	if !ok || len(members["name"]) > 1 || len(members["arguments"]) > 1 || len(members["_meta"]) > 1 {
		return nil
	}
	name, ok := jsonString(firstRaw(members["name"]))
	if !ok {
		return nil
	}
	args := map[string]string{}
	if raw := firstRaw(members["arguments"]); raw != nil && string(raw) != "null" {
		am, ok := objectMembers(raw)
		if !ok {
			return nil
		}
		for k, vs := range am {
			v, ok := jsonString(vs[0])
			if len(vs) > 1 || !ok {
				return nil
			}
			args[k] = v
		}
	}
	if meta := firstRaw(members["_meta"]); meta != nil && string(meta) != "null" && meta[0] != '{' {
		return nil
	}
	switch name {
	case "demo_greeting":
		who, ok := args["name"]
		if !ok {
			return nil
		}
		greeting := map[string]string{"": "Hi " + who + "!", "casual": "Hi " + who + "!",
			"formal": "Good day, " + who + ".", "pirate": "Ahoy, " + who + "!"}[args["style"]]
		if greeting == "" {
			return nil
		}
		return []refPromptMessage{{"user", "text", "Greet me as you would: " + greeting}, {"assistant", "text", greeting}}
	case "demo_review":
		link := "text"
		if version >= mcp.Version20250618 {
			link = "resource_link"
		}
		return []refPromptMessage{{"user", "text", "Review the readme below."}, {"user", "image", ""},
			{"user", "resource", ""}, {"user", link, ""}}
	}
	return nil
}

// checkPromptResponse compares the response with the reference's
// messages (nil: -32602).
func checkPromptResponse(t *testing.T, line, resp []byte, want []refPromptMessage) {
	t.Helper()
	var m struct {
		Result *struct {
			Messages []struct {
				Role    string `json:"role"`
				Content struct {
					Type string  `json:"type"`
					Text *string `json:"text"`
				} `json:"content"`
			} `json:"messages"`
		} `json:"result"`
		Error *struct {
			Code int64 `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp, &m); err != nil {
		t.Fatalf("response %q: %v", resp, err)
	}
	if want == nil {
		if m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("prompts/get %q: want -32602, got %q", line, resp)
		}
		return
	}
	if m.Result == nil || len(m.Result.Messages) != len(want) {
		t.Fatalf("prompts/get %q: want %d messages, got %q", line, len(want), resp)
	}
	for i, w := range want {
		g := m.Result.Messages[i]
		textOK := g.Content.Type != "text" || g.Content.Text != nil && (w.text == "" || *g.Content.Text == w.text)
		if g.Role != w.role || g.Content.Type != w.typ || !textOK {
			t.Fatalf("prompts/get %q: message %d is %q; want %+v", line, i, resp, w)
		}
	}
	if strings.Contains(string(resp), `"isError"`) {
		t.Fatalf("prompts/get %q: a tool result in a prompt: %q", line, resp)
	}
}

// promptsGetSeeds: both prompts with good and bad arguments, unknown
// prompts, bad shapes, _meta, every revision.
func promptsGetSeeds() []fuzzSeed {
	s := []fuzzSeed{
		wholeSeed("greeting", `{"name":"demo_greeting","arguments":{"name":"Ada"}}`),
		wholeSeed("greeting-formal", `{"name":"demo_greeting","arguments":{"name":"Ada","style":"formal"}}`),
		wholeSeed("greeting-pirate", `{"name":"demo_greeting","arguments":{"name":"","style":"pirate"}}`),
		wholeSeed("greeting-casual", `{"name":"demo_greeting","arguments":{"name":"A","style":"casual","extra":"x"}}`),
		wholeSeed("greeting-bad-style", `{"name":"demo_greeting","arguments":{"name":"Ada","style":"loud"}}`),
		wholeSeed("greeting-empty-style", `{"name":"demo_greeting","arguments":{"name":"Ada","style":""}}`),
		wholeSeed("greeting-missing", `{"name":"demo_greeting","arguments":{}}`),
		wholeSeed("greeting-no-arguments", `{"name":"demo_greeting"}`),
		wholeSeed("greeting-arguments-null", `{"name":"demo_greeting","arguments":null}`),
		wholeSeed("greeting-number", `{"name":"demo_greeting","arguments":{"name":1}}`),
		wholeSeed("greeting-null-value", `{"name":"demo_greeting","arguments":{"name":null}}`),
		wholeSeed("greeting-twice", `{"name":"demo_greeting","arguments":{"name":"a","name":"b"}}`),
		wholeSeed("greeting-escaped", `{"name":"demo_\u0067reeting","arguments":{"\u006eame":"\u00e9\ud83d\ude00"}}`),
		wholeSeed("greeting-surrogate", `{"name":"demo_greeting","arguments":{"name":"\ud800"}}`),
		wholeSeed("greeting-arguments-array", `{"name":"demo_greeting","arguments":["Ada"]}`),
		wholeSeed("review", `{"name":"demo_review"}`),
		wholeSeed("review-arguments", `{"name":"demo_review","arguments":{"x":"y"}}`),
		wholeSeed("unknown", `{"name":"demo_nothing"}`),
		wholeSeed("name-case", `{"Name":"demo_review"}`),
		wholeSeed("name-twice", `{"name":"demo_review","name":"demo_review"}`),
		wholeSeed("name-number", `{"name":1}`),
		wholeSeed("name-null", `{"name":null}`),
		wholeSeed("no-params", `{}`),
		wholeSeed("params-array", `["demo_review"]`),
		wholeSeed("meta", `{"name":"demo_review","_meta":{"correlationId":"fuzz-cid-p"}}`),
		wholeSeed("meta-error", `{"name":"demo_nothing","_meta":{"correlationId":"fuzz-cid-p2"}}`),
		wholeSeed("meta-not-object", `{"name":"demo_review","_meta":"x"}`),
		wholeSeed("long-name", `{"name":"`+strings.Repeat("d", 5000)+`"}`),
		wholeSeed("invalid-utf8", "{\"name\":\"demo_greeting\",\"arguments\":{\"name\":\"\xff\"}}"),
		wholeSeed("not-json", `demo_review`),
		cutSeed("cut-greeting", "demo_greeting", `{"name":"Grace","style":"formal"}`),
		cutSeed("cut-review", "demo_review", ``),
		cutSeed("cut-arguments-string", "demo_greeting", `name=Ada`),
	}
	for i, v := range toolCallVersions[1:] {
		s = append(s, fuzzSeed{"review-" + v, []byte(`{"name":"demo_review"}`), uint16(i+1) << 14})
	}
	return s
}
