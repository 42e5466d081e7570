package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// The conformance fixtures (server.fixtures = conformance, mode TEST only)
// are what the MCP conformance suite (@modelcontextprotocol/conformance)
// calls on the server under test: the tools, resources, resource template
// and prompts of its reference "everything server", with the same names
// and payloads, and completions for the prompts' arguments and the
// template's variable. They are registered on top of the TEST fixtures.

// Payloads of the conformance fixtures, as the suite's scenarios describe
// them.
const (
	// conformanceImage is a 1x1 red PNG, base64.
	conformanceImage = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	// conformanceAudio is a minimal WAV file (two bytes of samples), base64.
	conformanceAudio = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

	conformanceSimpleText   = "This is a simple text response for testing."
	conformanceErrorText    = "This tool intentionally returns an error for testing"
	conformanceEmbeddedURI  = "test://embedded-resource"
	conformanceEmbeddedText = "This is an embedded resource content."
	conformanceMixedURI     = "test://mixed-content-resource"
	conformanceMixedJSON    = `{"test":"data","value":123}`
	conformanceReconnected  = "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."

	// conformanceStepDelay is the pause between the log messages of
	// test_tool_with_logging and between the reports of
	// test_tool_with_progress: the suite checks that several notifications
	// arrive while a call runs.
	conformanceStepDelay = 50 * time.Millisecond
)

// conformance2020Schema is json_schema_2020_12_tool's input schema: the
// suite checks that $schema, $defs and additionalProperties (and, from its
// 2026 checks on, $anchor, allOf/anyOf and if/then/else) are listed
// exactly as registered. A call needs a phone or an email, the phone when
// contactMethod is phone.
const conformance2020Schema = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {
		"address": {
			"$anchor": "addressDef",
			"type": "object",
			"properties": {"street": {"type": "string"}, "city": {"type": "string"}}
		}
	},
	"properties": {
		"name": {"type": "string"},
		"address": {"$ref": "#/$defs/address"},
		"contactMethod": {"type": "string", "enum": ["phone", "email"]},
		"phone": {"type": "string"},
		"email": {"type": "string"}
	},
	"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
	"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
	"then": {"required": ["phone"]},
	"else": {"required": ["email"]},
	"additionalProperties": false
}`

// samplingArgs are test_sampling's arguments.
type samplingArgs struct {
	Prompt string `json:"prompt" jsonschema:"The prompt to send to the LLM."`
}

// elicitationArgs are test_elicitation's arguments.
type elicitationArgs struct {
	Message string `json:"message" jsonschema:"The message to show the user."`
}

// watchedUpdateArgs are test_update_watched_resource's arguments.
type watchedUpdateArgs struct {
	Content string `json:"content,omitempty" jsonschema:"The new text of test://watched-resource; empty means a text naming the update's number."`
}

// conformanceTools returns the conformance suite's tools. w is the state
// of test://watched-resource, which test_update_watched_resource changes.
func conformanceTools(w *watchedResource) []tool {
	return []tool{
		conformanceTool("test_simple_text", "Conformance fixture: returns one text block.",
			fixedResult(mcp.TextContent(conformanceSimpleText))),
		conformanceTool("test_image_content", "Conformance fixture: returns one image block (a 1x1 red PNG).",
			fixedResult(mcp.ImageContent(conformanceImage, "image/png"))),
		conformanceTool("test_audio_content", "Conformance fixture: returns one audio block (a minimal WAV file).",
			fixedResult(mcp.AudioContent(conformanceAudio, "audio/wav"))),
		conformanceTool("test_embedded_resource", "Conformance fixture: returns one embedded text resource.",
			fixedResult(mcp.EmbeddedResourceContent(mcp.ResourceContents{URI: conformanceEmbeddedURI,
				MIMEType: "text/plain", Text: conformanceEmbeddedText}))),
		conformanceTool("test_multiple_content_types", "Conformance fixture: returns a text, an image and an embedded resource block.",
			fixedResult(mcp.TextContent("Multiple content types test:"), mcp.ImageContent(conformanceImage, "image/png"),
				mcp.EmbeddedResourceContent(mcp.ResourceContents{URI: conformanceMixedURI,
					MIMEType: "application/json", Text: conformanceMixedJSON}))),
		conformanceTool("test_tool_with_logging", "Conformance fixture: sends three info log messages to the client, "+
			"50 ms apart, while it runs, then returns a text block.", loggingTool),
		conformanceTool("test_tool_with_progress", "Conformance fixture: reports progress 0, 50 and 100 of 100, 50 ms apart, "+
			"when the call carries a progressToken, then returns the token as text.", progressTool),
		conformanceTool("test_error_handling", "Conformance fixture: always fails: returns isError true with a text block saying so.",
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(conformanceErrorText)}, IsError: true}, nil
			}),
		conformanceTool("test_reconnection", "Conformance fixture for SSE polling: waits 100 ms and returns a text block. "+
			"It closes no stream of its own: a Streamable HTTP transport that resumes streams may close the call's stream meanwhile.",
			reconnectionTool),
		typed(mcp.Tool{Name: "test_sampling", Description: "Conformance fixture: asks the client to sample its LLM " +
			"(sampling/createMessage with the prompt, maxTokens 100) and returns \"LLM response: <the sampled text>\"."},
			samplingTool),
		typed(mcp.Tool{Name: "test_elicitation", Description: "Conformance fixture: asks the client's user for a username " +
			"and an email (elicitation/create with the message) and returns \"User response: action=..., content=...\"."},
			func(ctx context.Context, req *mcp.CallToolRequest, in elicitationArgs) (*mcp.CallToolResult, error) {
				return elicit(ctx, req, "User response", in.Message, elicitationUserSchema)
			}),
		conformanceTool("test_elicitation_sep1034_defaults", "Conformance fixture: elicits a form whose string, integer, "+
			"number, enum and boolean fields all have defaults, and returns the answer as text.",
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
				return elicit(ctx, req, "Elicitation completed", "Please review and update the form fields with defaults",
					elicitationDefaultsSchema)
			}),
		conformanceTool("test_elicitation_sep1330_enums", "Conformance fixture: elicits a form with the five enum shapes "+
			"(untitled and titled single-select, legacy enumNames, untitled and titled multi-select), and returns the answer as text.",
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
				return elicit(ctx, req, "Elicitation completed", "Please select options from the enum fields",
					elicitationEnumsSchema)
			}),
		{name: "json_schema_2020_12_tool", add: func(srv *mcp.Server) error {
			return srv.AddTool(mcp.Tool{
				Name:        "json_schema_2020_12_tool",
				Description: "Conformance fixture: a tool whose input schema uses JSON Schema 2020-12 ($schema, $defs, $ref, additionalProperties); returns its arguments as text.",
				InputSchema: json.RawMessage(conformance2020Schema),
				Handler: func(_ context.Context, req *mcp.CallToolRequest) (any, error) {
					return textResult("JSON Schema 2020-12 tool called with: " + string(req.Arguments)), nil
				},
			})
		}},
		typed(mcp.Tool{Name: "test_update_watched_resource", Description: "Conformance fixture: changes the text of " +
			"test://watched-resource and sends notifications/resources/updated to the sessions subscribed to it."},
			func(ctx context.Context, req *mcp.CallToolRequest, in watchedUpdateArgs) (*mcp.CallToolResult, error) {
				n := w.update(in.Content)
				// Not the handler's context: the notification goes to every
				// subscribed session, not as part of this call.
				told := req.Session.Server().ResourceUpdated(context.Background(), conformanceWatchedURI)
				return textResult(fmt.Sprintf("test://watched-resource updated (update %d); %d subscribed session(s) notified", n, told)), nil
			}),
	}
}

// conformanceTool is a conformance tool without arguments.
func conformanceTool(name, description string, h func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, error)) tool {
	return typed(mcp.Tool{Name: name, Description: description}, h)
}

// fixedResult returns a handler whose result is always the blocks.
func fixedResult(blocks ...mcp.Content) func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, error) {
	return func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: blocks}, nil
	}
}

// textResult is a result of one text block.
func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(text)}}
}

// pause waits d, or until ctx ends (then it returns the cause).
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// loggingTool is test_tool_with_logging: three info messages, 50 ms apart.
// A message the session does not send (below the client's level, or over
// the rate limit) is not an error of the call.
func loggingTool(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			if err := pause(ctx, conformanceStepDelay); err != nil {
				return nil, err
			}
		}
		if err := req.Log(ctx, mcp.LogInfo, msg); err != nil && !errors.Is(err, mcp.ErrLogDropped) {
			return nil, err
		}
	}
	return textResult("Tool with logging executed successfully"), nil
}

// progressTool is test_tool_with_progress: progress 0, 50, 100 of 100,
// 50 ms apart; its text is the progressToken.
func progressTool(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			if err := pause(ctx, conformanceStepDelay); err != nil {
				return nil, err
			}
		}
		err := req.Progress(ctx, p, 100, fmt.Sprintf("Completed step %v of 100", p))
		if err != nil && !errors.Is(err, mcp.ErrNoProgressToken) {
			return nil, err
		}
	}
	token, ok := req.Meta.ProgressToken()
	if !ok {
		return textResult("no progressToken"), nil
	}
	var s string
	if json.Unmarshal(token, &s) == nil {
		return textResult(s), nil
	}
	return textResult(string(token)), nil // a number, as sent
}

// reconnectionTool is test_reconnection.
func reconnectionTool(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
	if err := pause(ctx, 100*time.Millisecond); err != nil {
		return nil, err
	}
	return textResult(conformanceReconnected), nil
}

// samplingTool is test_sampling. A client that cannot sample gets a tool
// error saying why.
func samplingTool(ctx context.Context, req *mcp.CallToolRequest, in samplingArgs) (*mcp.CallToolResult, error) {
	res, err := req.Session.CreateMessage(ctx, mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.TextContent(in.Prompt)}},
		MaxTokens: 100,
	})
	if err != nil {
		return clientRequestFailed(ctx, "Sampling", err)
	}
	text := res.Text()
	if text == "" {
		text = "No response"
	}
	return textResult("LLM response: " + text), nil
}

// elicit sends elicitation/create in form mode and returns
// "<prefix>: action=<action>, content=<content as JSON>".
func elicit(ctx context.Context, req *mcp.CallToolRequest, prefix, message, schema string) (*mcp.CallToolResult, error) {
	res, err := req.Session.Elicit(ctx, mcp.ElicitParams{Message: message, RequestedSchema: json.RawMessage(schema)})
	if err != nil {
		return clientRequestFailed(ctx, "Elicitation", err)
	}
	content := res.Content
	if content == nil {
		content = map[string]any{}
	}
	b, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	return textResult(fmt.Sprintf("%s: action=%s, content=%s", prefix, res.Action, b)), nil
}

// clientRequestFailed turns a failed request to the client into a tool
// error naming it, unless the call itself ended (then its cause is the
// call's answer).
func clientRequestFailed(ctx context.Context, what string, err error) (*mcp.CallToolResult, error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	var mc *mcp.MissingCapabilityError
	if errors.Is(err, mcp.ErrInputRequired) || errors.As(err, &mc) {
		return nil, err // the stateless revision's answers: input_required, -32021
	}
	var ce *core.Error
	if errors.As(err, &ce) {
		err = errors.New(ce.Message)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(what + " not supported or error: " + err.Error())},
		IsError: true}, nil
}

// The forms the elicitation fixtures send.
const (
	elicitationUserSchema = `{"type":"object","properties":{` +
		`"username":{"type":"string","description":"User's response"},` +
		`"email":{"type":"string","description":"User's email address"}},` +
		`"required":["username","email"]}`

	elicitationDefaultsSchema = `{"type":"object","properties":{` +
		`"name":{"type":"string","description":"User name","default":"John Doe"},` +
		`"age":{"type":"integer","description":"User age","default":30},` +
		`"score":{"type":"number","description":"User score","default":95.5},` +
		`"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},` +
		`"verified":{"type":"boolean","description":"Verification status","default":true}},` +
		`"required":[]}`

	elicitationEnumsSchema = `{"type":"object","properties":{` +
		`"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},` +
		`"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[` +
		`{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
		`"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],` +
		`"enumNames":["Option One","Option Two","Option Three"]},` +
		`"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,` +
		`"items":{"type":"string","enum":["option1","option2","option3"]}},` +
		`"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,` +
		`"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},` +
		`{"const":"value3","title":"Third Choice"}]}}},` +
		`"required":[]}`
)
