package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcprt/mcprt/mcp"
)

// The conformance fixtures of the stateless revision (2026-07-28): tools
// and a prompt that ask the client for input with mcp.RequestInput (an
// input_required result under that revision, requests to the client in a
// session), one that needs a capability, one that logs, and two that
// change the tool and prompt lists.

// stateOK is what test_input_required_result_request_state keeps in its
// requestState and says once it has it back.
const stateOK = "state-ok"

// nameForm is the form of a single string property prop, required.
func nameForm(prop string) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"` + prop + `":{"type":"string"}},"required":["` + prop + `"]}`)
}

func elicitInput(message string, schema json.RawMessage) mcp.InputRequest {
	return mcp.ElicitInput(mcp.ElicitParams{Message: message, RequestedSchema: schema})
}

func samplingInput(text string, maxTokens int) mcp.InputRequest {
	return mcp.SamplingInput(mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.TextContent(text)}},
		MaxTokens: maxTokens,
	})
}

// answerText describes the answers of got, key by key in key order.
func answerText(got mcp.InputResponses) string {
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + string(got[k])
	}
	return strings.Join(parts, ", ")
}

// inputTool is a conformance tool that asks for reqs and says what came
// back.
func inputTool(name, description string, reqs map[string]mcp.InputRequest, done func(mcp.InputResponses) string) tool {
	return conformanceTool(name, description, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
		got, err := mcp.RequestInput(ctx, req.Session, reqs)
		if err != nil {
			return nil, err
		}
		return textResult(done(got)), nil
	})
}

// statelessTools returns the stateless revision's conformance tools. The
// two trigger tools add or remove test_dynamic_tool and
// test_dynamic_prompt.
func statelessTools() []tool {
	var dyn dynamicFixtures
	return []tool{
		{name: "test_header_param", add: func(srv *mcp.Server) error {
			return srv.AddTool(mcp.Tool{
				Name: "test_header_param",
				Description: "Conformance fixture: its optional string argument region is mirrored into the " +
					"Mcp-Param-Region header of a stateless call (x-mcp-header); returns the region as text.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string",` +
					`"x-mcp-header":"Region","description":"Any region name."}}}`),
				Handler: func(_ context.Context, req *mcp.CallToolRequest) (any, error) {
					var in struct {
						Region string `json:"region"`
					}
					if err := json.Unmarshal(req.Arguments, &in); err != nil {
						return nil, fmt.Errorf("test_header_param: reading the arguments: %w", err)
					}
					return textResult("region: " + in.Region), nil
				},
			})
		}},
		inputTool("test_input_required_result_elicitation", "Conformance fixture: asks the user's name (elicitation, key user_name) and greets them.",
			map[string]mcp.InputRequest{"user_name": elicitInput("What is your name?", nameForm("name"))},
			func(got mcp.InputResponses) string {
				res, err := got.Elicit("user_name")
				if err != nil {
					return "Hello, stranger! (" + err.Error() + ")"
				}
				return fmt.Sprintf("Hello, %v!", res.Content["name"])
			}),
		inputTool("test_input_required_result_sampling", "Conformance fixture: asks the client's LLM a question (sampling, key capital_question) and returns its answer.",
			map[string]mcp.InputRequest{"capital_question": samplingInput("What is the capital of France?", 100)},
			func(got mcp.InputResponses) string {
				res, err := got.Sampling("capital_question")
				if err != nil {
					return "No answer: " + err.Error()
				}
				return "LLM response: " + res.Text()
			}),
		inputTool("test_input_required_result_list_roots", "Conformance fixture: asks for the client's roots (key client_roots) and lists them.",
			map[string]mcp.InputRequest{"client_roots": mcp.RootsInput()},
			func(got mcp.InputResponses) string {
				roots, err := got.Roots("client_roots")
				if err != nil {
					return "No roots: " + err.Error()
				}
				uris := make([]string, len(roots))
				for i, r := range roots {
					uris[i] = r.URI
				}
				return fmt.Sprintf("The client has %d root(s): %s", len(roots), strings.Join(uris, ", "))
			}),
		inputTool("test_input_required_result_multiple_inputs", "Conformance fixture: asks for a name (elicitation), a greeting (sampling) and the roots at once.",
			map[string]mcp.InputRequest{
				"user_name":    elicitInput("What is your name?", nameForm("name")),
				"greeting":     samplingInput("Generate a greeting", 50),
				"client_roots": mcp.RootsInput(),
			},
			func(got mcp.InputResponses) string { return "All inputs received: " + answerText(got) }),
		inputTool("test_input_required_result_tampered_state", "Conformance fixture: asks for a confirmation; a retry whose requestState was changed is refused.",
			map[string]mcp.InputRequest{"confirm": elicitInput("Please confirm", json.RawMessage(
				`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`))},
			func(got mcp.InputResponses) string { return "Confirmed: " + answerText(got) }),
		conformanceTool("test_input_required_result_request_state", "Conformance fixture: asks for a confirmation and keeps "+
			"\""+stateOK+"\" in its requestState; the answer says "+stateOK+" once the state came back intact.",
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
				prev := string(mcp.RequestState(ctx))
				mcp.SetRequestState(ctx, []byte(stateOK))
				got, err := mcp.RequestInput(ctx, req.Session, map[string]mcp.InputRequest{"confirm": elicitInput("Please confirm",
					json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`))})
				if err != nil {
					return nil, err
				}
				if prev != stateOK {
					return textResult("Confirmed without a requestState: " + answerText(got)), nil
				}
				return textResult(stateOK + ": the requestState came back intact; " + answerText(got)), nil
			}),
		conformanceTool("test_input_required_result_multi_round", "Conformance fixture: asks for a name, then (a second round) for a favourite colour.",
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
				first, err := mcp.RequestInput(ctx, req.Session, map[string]mcp.InputRequest{
					"step1": elicitInput("Step 1: What is your name?", nameForm("name"))})
				if err != nil {
					return nil, err
				}
				second, err := mcp.RequestInput(ctx, req.Session, map[string]mcp.InputRequest{
					"step2": elicitInput("Step 2: What is your favorite color?", nameForm("color"))})
				if err != nil {
					return nil, err
				}
				return textResult("Both rounds answered: " + answerText(first) + "; " + answerText(second)), nil
			}),
		conformanceTool("test_input_required_result_capabilities", "Conformance fixture: asks for input only through the "+
			"capabilities the request declared (elicitation and sampling).",
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
				caps := mcp.ClientCapabilitiesFor(ctx, req.Session)
				reqs := map[string]mcp.InputRequest{}
				if caps.Elicitation != nil {
					reqs["user_name"] = elicitInput("What is your name?", nameForm("name"))
				}
				if caps.Sampling != nil {
					reqs["capital_question"] = samplingInput("What is the capital of France?", 100)
				}
				if len(reqs) == 0 {
					return textResult("The client declared neither elicitation nor sampling: nothing to ask"), nil
				}
				got, err := mcp.RequestInput(ctx, req.Session, reqs)
				if err != nil {
					return nil, err
				}
				return textResult("Inputs received: " + answerText(got)), nil
			}),
		inputTool("test_missing_capability", "Conformance fixture: needs the client's sampling capability (without it the "+
			"request fails with -32021 under 2026-07-28).",
			map[string]mcp.InputRequest{"sample": samplingInput("Say something", 20)},
			func(got mcp.InputResponses) string { return "Sampled: " + answerText(got) }),
		inputTool("test_streaming_elicitation", "Conformance fixture: asks the user for a name; under 2026-07-28 the answer "+
			"is an input_required result, never a request on the response stream.",
			map[string]mcp.InputRequest{"user_name": elicitInput("What is your name?", nameForm("name"))},
			func(got mcp.InputResponses) string { return "Received: " + answerText(got) }),
		conformanceTool("test_logging_tool", "Conformance fixture: sends three info log messages (only to a client that "+
			"asked for log messages) and returns.",
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
				for i := 1; i <= 3; i++ {
					_ = req.Log(ctx, mcp.LogInfo, fmt.Sprintf("log message %d of 3", i))
				}
				return textResult("Logged three messages"), nil
			}),
		conformanceTool("test_trigger_tool_change", "Conformance fixture: adds test_dynamic_tool, or removes it when present "+
			"(the tool list changes: listeners are told).",
			func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
				return dyn.toggleTool(req.Session.Server())
			}),
		conformanceTool("test_trigger_prompt_change", "Conformance fixture: adds test_dynamic_prompt, or removes it when present "+
			"(the prompt list changes: listeners are told).",
			func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
				return dyn.togglePrompt(req.Session.Server())
			}),
	}
}

// dynamicFixtures is the state of the trigger tools.
type dynamicFixtures struct {
	mu           sync.Mutex
	tool, prompt bool // registered now
}

func (d *dynamicFixtures) toggleTool(srv *mcp.Server) (*mcp.CallToolResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tool {
		if err := srv.RemoveTool("test_dynamic_tool"); err != nil {
			return nil, err
		}
		d.tool = false
		return textResult("test_dynamic_tool removed"), nil
	}
	err := srv.AddTool(mcp.Tool{Name: "test_dynamic_tool", Description: "Conformance fixture added by test_trigger_tool_change.",
		Handler: func(context.Context, *mcp.CallToolRequest) (any, error) { return textResult("dynamic"), nil }})
	if err != nil {
		return nil, err
	}
	d.tool = true
	return textResult("test_dynamic_tool added"), nil
}

func (d *dynamicFixtures) togglePrompt(srv *mcp.Server) (*mcp.CallToolResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.prompt {
		if err := srv.RemovePrompt("test_dynamic_prompt"); err != nil {
			return nil, err
		}
		d.prompt = false
		return textResult("test_dynamic_prompt removed"), nil
	}
	err := srv.AddPrompt(mcp.Prompt{Name: "test_dynamic_prompt", Description: "Conformance fixture added by test_trigger_prompt_change."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.TextContent("dynamic")}}}, nil
		})
	if err != nil {
		return nil, err
	}
	d.prompt = true
	return textResult("test_dynamic_prompt added"), nil
}

// inputPrompt is test_input_required_result_prompt: it asks the user for
// the context to use (key user_context) before it answers.
func inputPrompt() conformancePrompt {
	return conformancePrompt{
		mcp.Prompt{Name: "test_input_required_result_prompt", Title: "Prompt that asks for input",
			Description: "Asks the user for the context to use, then returns a prompt built on it"},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			got, err := mcp.RequestInput(ctx, req.Session, map[string]mcp.InputRequest{
				"user_context": elicitInput("What context should the prompt use?", nameForm("context"))})
			if err != nil {
				return nil, err
			}
			text := "Use this context: " + answerText(got)
			if res, err := got.Elicit("user_context"); err == nil {
				text = fmt.Sprintf("Use this context: %v", res.Content["context"])
			}
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.TextContent(text)}}}, nil
		},
	}
}
