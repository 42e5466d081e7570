package builtin

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/core"
)

var conformanceToolNames = []string{
	"json_schema_2020_12_tool", "test_audio_content", "test_elicitation", "test_elicitation_sep1034_defaults",
	"test_elicitation_sep1330_enums", "test_embedded_resource", "test_error_handling", "test_image_content",
	"test_multiple_content_types", "test_reconnection", "test_sampling", "test_simple_text",
	"test_tool_with_logging", "test_tool_with_progress", "test_update_watched_resource",
}

func TestConformanceOnlyWhenAsked(t *testing.T) {
	for _, tc := range []struct {
		mode     string
		fixtures []string
		want     bool
	}{
		{core.ModeTest, []string{"conformance"}, true},
		{core.ModeTest, nil, false},
		{core.ModeFull, []string{"conformance"}, false},
		{core.ModeReadOnly, []string{"conformance"}, false},
	} {
		c := newConfClient(t, tc.mode, tc.fixtures, `{}`)
		_, got := c.srv.LookupTool("test_simple_text")
		if got != tc.want {
			t.Errorf("mode %s, fixtures %q: test_simple_text registered = %v, want %v", tc.mode, tc.fixtures, got, tc.want)
		}
		if res := c.response("prompts/get", `{"name":"test_simple_prompt"}`); (res["result"] != nil) != tc.want {
			t.Errorf("mode %s, fixtures %q: prompts/get test_simple_prompt = %v", tc.mode, tc.fixtures, res)
		}
	}
}

func TestConformanceToolsList(t *testing.T) {
	c := conformanceClient(t)
	var names []string
	name := regexp.MustCompile(`^[A-Za-z0-9_./-]{1,64}$`) // the suite's tool name rule
	for _, tool := range c.request("tools/list", `{}`)["tools"].([]any) {
		tool := tool.(map[string]any)
		n := tool["name"].(string)
		names = append(names, n)
		if !name.MatchString(n) || tool["description"] == "" || tool["description"] == nil || tool["inputSchema"] == nil {
			t.Errorf("tool %q does not pass the suite's tools-list checks: %v", n, tool)
		}
		if n == "json_schema_2020_12_tool" {
			wantJSON(t, "json_schema_2020_12_tool inputSchema", tool["inputSchema"], conformance2020Schema)
		}
	}
	for _, want := range conformanceToolNames {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
}

func TestConformanceContentTools(t *testing.T) {
	c := conformanceClient(t)
	for _, tc := range []struct{ name, args, want string }{
		{"test_simple_text", "", `{"content":[{"type":"text","text":"This is a simple text response for testing."}],"isError":false}`},
		{"test_image_content", `{}`, `{"content":[{"type":"image","data":"` + conformanceImage + `","mimeType":"image/png"}],"isError":false}`},
		{"test_audio_content", `{}`, `{"content":[{"type":"audio","data":"` + conformanceAudio + `","mimeType":"audio/wav"}],"isError":false}`},
		{"test_embedded_resource", `{}`, `{"content":[{"type":"resource","resource":{"uri":"test://embedded-resource",` +
			`"mimeType":"text/plain","text":"This is an embedded resource content."}}],"isError":false}`},
		{"test_multiple_content_types", `{}`, `{"content":[{"type":"text","text":"Multiple content types test:"},` +
			`{"type":"image","data":"` + conformanceImage + `","mimeType":"image/png"},` +
			`{"type":"resource","resource":{"uri":"test://mixed-content-resource","mimeType":"application/json",` +
			`"text":"{\"test\":\"data\",\"value\":123}"}}],"isError":false}`},
		{"test_error_handling", `{}`, `{"content":[{"type":"text","text":"This tool intentionally returns an error for testing"}],"isError":true}`},
		{"test_reconnection", `{}`, `{"content":[{"type":"text","text":"` + conformanceReconnected + `"}],"isError":false}`},
		{"json_schema_2020_12_tool", `{"name":"Ada","email":"ada@example.com"}`,
			`{"content":[{"type":"text","text":"JSON Schema 2020-12 tool called with: {\"name\":\"Ada\",\"email\":\"ada@example.com\"}"}],"isError":false}`},
	} {
		wantJSON(t, tc.name, c.call(tc.name, tc.args), tc.want)
	}
	// The 2020-12 schema is enforced: a phone or an email, and nothing else.
	for _, bad := range []string{`{}`, `{"name":"Ada"}`, `{"email":"a@b","age":3}`, `{"contactMethod":"phone","email":"a@b"}`} {
		if res := c.call("json_schema_2020_12_tool", bad); res["isError"] != true {
			t.Errorf("json_schema_2020_12_tool %s = %v, want INVALID_ARGUMENT", bad, res)
		}
	}
}

func TestConformancePayloadsDecode(t *testing.T) {
	png, err := base64.StdEncoding.DecodeString(conformanceImage)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("the image is not a base64 PNG: %v", err)
	}
	wav, err := base64.StdEncoding.DecodeString(conformanceAudio)
	if err != nil || string(wav[:4]) != "RIFF" || string(wav[8:12]) != "WAVE" {
		t.Errorf("the audio is not a base64 WAV: %v", err)
	}
	for _, s := range []string{elicitationUserSchema, elicitationDefaultsSchema, elicitationEnumsSchema, conformance2020Schema} {
		if !json.Valid([]byte(s)) {
			t.Errorf("not JSON: %s", s)
		}
	}
}

func TestConformanceLogging(t *testing.T) {
	c := conformanceClient(t)
	c.request("logging/setLevel", `{"level":"debug"}`)
	c.drainNotes()
	wantJSON(t, "result", c.call("test_tool_with_logging", `{}`),
		`{"content":[{"type":"text","text":"Tool with logging executed successfully"}],"isError":false}`)
	var got []string
	for _, n := range c.drainNotes() { // sent before the response
		if n["method"] == "notifications/message" {
			p := n["params"].(map[string]any)
			if p["level"] != "info" || p["logger"] != "test_tool_with_logging" {
				t.Errorf("log message %v", p)
			}
			got = append(got, p["data"].(string))
		}
	}
	if want := []string{"Tool execution started", "Tool processing data", "Tool execution completed"}; !slices.Equal(got, want) {
		t.Errorf("log messages %q, want %q", got, want)
	}
}

func TestConformanceProgress(t *testing.T) {
	c := conformanceClient(t)
	c.drainNotes()
	wantJSON(t, "with a token", c.request("tools/call", `{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":"progress-test-1"}}`),
		`{"content":[{"type":"text","text":"progress-test-1"}],"isError":false}`)
	var got []any
	for _, n := range c.drainNotes() {
		if n["method"] == "notifications/progress" {
			got = append(got, n["params"])
		}
	}
	wantJSON(t, "progress", got, `[
		{"progressToken":"progress-test-1","progress":0,"total":100,"message":"Completed step 0 of 100"},
		{"progressToken":"progress-test-1","progress":50,"total":100,"message":"Completed step 50 of 100"},
		{"progressToken":"progress-test-1","progress":100,"total":100,"message":"Completed step 100 of 100"}]`)
	wantJSON(t, "numeric token", c.request("tools/call", `{"name":"test_tool_with_progress","_meta":{"progressToken":7}}`),
		`{"content":[{"type":"text","text":"7"}],"isError":false}`)
	wantJSON(t, "without a token", c.call("test_tool_with_progress", `{}`),
		`{"content":[{"type":"text","text":"no progressToken"}],"isError":false}`)
}

func TestConformanceSampling(t *testing.T) {
	c := conformanceClient(t)
	c.handle("sampling/createMessage", func(json.RawMessage) (any, error) {
		return jsonOf(t, `{"role":"assistant","content":{"type":"text","text":"This is a test response from the client"},
			"model":"test-model","stopReason":"endTurn"}`), nil
	})
	wantJSON(t, "result", c.call("test_sampling", `{"prompt":"Test prompt for sampling"}`),
		`{"content":[{"type":"text","text":"LLM response: This is a test response from the client"}],"isError":false}`)
	asked := c.requests("sampling/createMessage")
	if len(asked) != 1 {
		t.Fatalf("%d sampling requests, want 1", len(asked))
	}
	var params any
	_ = json.Unmarshal(asked[0], &params)
	wantJSON(t, "sampling params", params, `{"messages":[{"role":"user","content":{"type":"text","text":"Test prompt for sampling"}}],"maxTokens":100}`)
	if res := c.call("test_sampling", `{}`); res["isError"] != true {
		t.Errorf("test_sampling without a prompt = %v, want INVALID_ARGUMENT", res)
	}

	// A client that cannot sample gets a tool error saying so.
	plain := newConfClient(t, core.ModeTest, []string{"conformance"}, `{}`)
	res := plain.call("test_sampling", `{"prompt":"x"}`)
	if text := firstText(t, res); res["isError"] != true || !strings.HasPrefix(text, "Sampling not supported or error: ") {
		t.Errorf("test_sampling without the capability = %v", res)
	}
}

func TestConformanceElicitation(t *testing.T) {
	c := conformanceClient(t)
	answer := map[string]any{"action": "accept", "content": map[string]any{"username": "testuser", "email": "test@example.com"}}
	c.handle("elicitation/create", func(json.RawMessage) (any, error) { return answer, nil })
	for _, tc := range []struct{ tool, args, message, schema, prefix string }{
		{"test_elicitation", `{"message":"Please provide your information"}`, "Please provide your information",
			elicitationUserSchema, "User response"},
		{"test_elicitation_sep1034_defaults", `{}`, "Please review and update the form fields with defaults",
			elicitationDefaultsSchema, "Elicitation completed"},
		{"test_elicitation_sep1330_enums", `{}`, "Please select options from the enum fields",
			elicitationEnumsSchema, "Elicitation completed"},
	} {
		n := len(c.requests("elicitation/create"))
		wantJSON(t, tc.tool, c.call(tc.tool, tc.args), `{"content":[{"type":"text","text":"`+tc.prefix+
			`: action=accept, content={\"email\":\"test@example.com\",\"username\":\"testuser\"}"}],"isError":false}`)
		asked := c.requests("elicitation/create")
		if len(asked) != n+1 {
			t.Fatalf("%s: %d elicitation requests, want %d", tc.tool, len(asked), n+1)
		}
		var params any
		_ = json.Unmarshal(asked[n], &params)
		want, _ := json.Marshal(map[string]any{"mode": "form", "message": tc.message, "requestedSchema": json.RawMessage(tc.schema)})
		wantJSON(t, tc.tool+" request", params, string(want))
	}
	answer = map[string]any{"action": "decline"}
	wantJSON(t, "declined", c.call("test_elicitation_sep1034_defaults", `{}`),
		`{"content":[{"type":"text","text":"Elicitation completed: action=decline, content={}"}],"isError":false}`)
}

func TestConformanceResources(t *testing.T) {
	c := conformanceClient(t)
	var uris []string
	for _, r := range c.request("resources/list", `{}`)["resources"].([]any) {
		r := r.(map[string]any)
		uris = append(uris, r["uri"].(string))
		if r["name"] == nil || r["description"] == nil || r["mimeType"] == nil {
			t.Errorf("resource listing %v lacks name, description or mimeType", r)
		}
	}
	for _, want := range []string{"test://static-binary", "test://static-text", "test://watched-resource"} {
		if !slices.Contains(uris, want) {
			t.Errorf("resources/list lacks %s: %v", want, uris)
		}
	}
	var template any
	for _, tpl := range c.request("resources/templates/list", `{}`)["resourceTemplates"].([]any) {
		if tpl.(map[string]any)["uriTemplate"] == conformanceTemplate {
			template = tpl
		}
	}
	wantJSON(t, "template", template,
		`{"uriTemplate":"test://template/{id}/data","name":"template","title":"Resource Template",
		"description":"A resource template with parameter substitution","mimeType":"application/json"}`)
	for _, tc := range []struct{ uri, want string }{
		{"test://static-text", `{"contents":[{"uri":"test://static-text","mimeType":"text/plain","text":"This is the content of the static text resource."}]}`},
		{"test://static-binary", `{"contents":[{"uri":"test://static-binary","mimeType":"image/png","blob":"` + conformanceImage + `"}]}`},
		{"test://template/123/data", `{"contents":[{"uri":"test://template/123/data","mimeType":"application/json",` +
			`"text":"{\"id\":\"123\",\"templateTest\":true,\"data\":\"Data for ID: 123\"}"}]}`},
		{"test://watched-resource", `{"contents":[{"uri":"test://watched-resource","mimeType":"text/plain","text":"Watched resource content"}]}`},
	} {
		wantJSON(t, tc.uri, c.request("resources/read", `{"uri":"`+tc.uri+`"}`), tc.want)
	}

	// Subscribed, the client hears of updates; unsubscribed, it does not.
	c.request("resources/subscribe", `{"uri":"test://watched-resource"}`)
	c.drainNotes()
	wantJSON(t, "update", c.call("test_update_watched_resource", `{"content":"v2"}`),
		`{"content":[{"type":"text","text":"test://watched-resource updated (update 1); 1 subscribed session(s) notified"}],"isError":false}`)
	wantJSON(t, "updated", c.nextNote("notifications/resources/updated")["params"], `{"uri":"test://watched-resource"}`)
	wantJSON(t, "new text", c.request("resources/read", `{"uri":"test://watched-resource"}`),
		`{"contents":[{"uri":"test://watched-resource","mimeType":"text/plain","text":"v2"}]}`)
	c.request("resources/unsubscribe", `{"uri":"test://watched-resource"}`)
	firstText(t, c.call("test_update_watched_resource", `{}`))
	for _, n := range c.drainNotes() {
		if n["method"] == "notifications/resources/updated" {
			t.Errorf("update after unsubscribe: %v", n)
		}
	}
	wantJSON(t, "default text", c.request("resources/read", `{"uri":"test://watched-resource"}`),
		`{"contents":[{"uri":"test://watched-resource","mimeType":"text/plain","text":"Watched resource content (update 2)"}]}`)
}

func TestConformancePrompts(t *testing.T) {
	c := conformanceClient(t)
	var names []string
	for _, p := range c.request("prompts/list", `{}`)["prompts"].([]any) {
		p := p.(map[string]any)
		names = append(names, p["name"].(string))
		if p["description"] == nil {
			t.Errorf("prompt %v has no description", p)
		}
	}
	for _, want := range []string{"test_prompt_with_arguments", "test_prompt_with_embedded_resource", "test_prompt_with_image", "test_simple_prompt"} {
		if !slices.Contains(names, want) {
			t.Errorf("prompts/list lacks %s: %v", want, names)
		}
	}
	for _, tc := range []struct{ params, want string }{
		{`{"name":"test_simple_prompt"}`, `{"messages":[{"role":"user","content":{"type":"text","text":"This is a simple prompt for testing."}}]}`},
		{`{"name":"test_prompt_with_arguments","arguments":{"arg1":"testValue1","arg2":"testValue2"}}`,
			`{"messages":[{"role":"user","content":{"type":"text","text":"Prompt with arguments: arg1='testValue1', arg2='testValue2'"}}]}`},
		{`{"name":"test_prompt_with_embedded_resource","arguments":{"resourceUri":"test://example-resource"}}`,
			`{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"test://example-resource","mimeType":"text/plain",` +
				`"text":"Embedded resource content for testing."}}},{"role":"user","content":{"type":"text","text":"Please process the embedded resource above."}}]}`},
		{`{"name":"test_prompt_with_image"}`, `{"messages":[{"role":"user","content":{"type":"image","data":"` + conformanceImage +
			`","mimeType":"image/png"}},{"role":"user","content":{"type":"text","text":"Please analyze the image above."}}]}`},
	} {
		wantJSON(t, tc.params, c.request("prompts/get", tc.params), tc.want)
	}
	if e, _ := c.response("prompts/get", `{"name":"test_prompt_with_arguments","arguments":{"arg1":"x"}}`)["error"].(map[string]any); e["code"] != -32602.0 {
		t.Errorf("a missing argument: error %v, want -32602", e)
	}
}

func TestConformanceCompletion(t *testing.T) {
	c := conformanceClient(t)
	for _, tc := range []struct{ ref, arg, value, want string }{
		{`{"type":"ref/prompt","name":"test_prompt_with_arguments"}`, "arg1", "par", `["paris","park","party"]`},
		{`{"type":"ref/prompt","name":"test_prompt_with_arguments"}`, "arg1", "test", `[]`},
		{`{"type":"ref/prompt","name":"test_prompt_with_arguments"}`, "arg2", "W", `["world"]`},
		{`{"type":"ref/prompt","name":"test_prompt_with_embedded_resource"}`, "resourceUri", "test://s", `["test://static-text","test://static-binary"]`},
		{`{"type":"ref/resource","uri":"test://template/{id}/data"}`, "id", "1", `["123"]`},
	} {
		res := c.request("completion/complete", `{"ref":`+tc.ref+`,"argument":{"name":"`+tc.arg+`","value":"`+tc.value+`"}}`)
		wantJSON(t, tc.arg+"="+tc.value, res["completion"].(map[string]any)["values"], tc.want)
	}
}
