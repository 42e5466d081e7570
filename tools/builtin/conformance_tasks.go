package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// The conformance fixtures of the tasks extension (the suite's tasks-*
// scenarios, stateless revision 2026-07-28): one tool that never becomes a
// task, and tools that call mcp.StartTask, some before and some after
// asking the client for input.

const (
	// maxSlowComputeSeconds bounds slow_compute's sleep.
	maxSlowComputeSeconds = 3600
	// failingJobDelay is how long failing_job works before it fails.
	failingJobDelay = time.Second
)

// greetArgs are greet's arguments.
type greetArgs struct {
	Name string `json:"name" jsonschema:"Who to greet."`
}

// slowComputeArgs are slow_compute's arguments.
type slowComputeArgs struct {
	Seconds float64 `json:"seconds" jsonschema:"How long to work, in seconds (0 to 3600)."`
	Label   string  `json:"label,omitempty" jsonschema:"A label repeated in the result."`
}

// confirmDeleteArgs are confirm_delete's arguments.
type confirmDeleteArgs struct {
	Filename string `json:"filename" jsonschema:"The file to (pretend to) delete."`
}

// confirmSchema is the form confirm_delete and multi_input ask for.
const confirmSchema = `{"type":"object","properties":{"confirm":{"type":"boolean","title":"Confirm"},` +
	`"name":{"type":"string","title":"Name"}}}`

// conformanceTaskTools returns the fixtures of the tasks scenarios.
func conformanceTaskTools() []tool {
	return []tool{
		typed(mcp.Tool{Name: "greet", Description: "Conformance fixture (tasks): never a task; returns \"Hello, <name>!\"."},
			func(_ context.Context, _ *mcp.CallToolRequest, in greetArgs) (*mcp.CallToolResult, error) {
				return textResult("Hello, " + in.Name + "!"), nil
			}),
		typed(mcp.Tool{Name: "slow_compute", TaskSupport: mcp.TaskOptional, Description: "Conformance fixture (tasks): " +
			"becomes a task when the client declared the tasks extension, works `seconds` seconds, then returns a text " +
			"naming the label; tasks/cancel stops it."}, slowCompute),
		typed(mcp.Tool{Name: "failing_job", TaskSupport: mcp.TaskRequired, Description: "Conformance fixture (tasks): " +
			"needs the tasks extension; becomes a task and fails after about a second with a tool error (isError)."},
			func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
				if _, err := mcp.StartTask(ctx); err != nil {
					return nil, err
				}
				if err := pause(ctx, failingJobDelay); err != nil {
					return nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("failing_job failed, as it always does")},
					IsError: true}, nil
			}),
		typed(mcp.Tool{Name: "protocol_error_job", TaskSupport: mcp.TaskOptional, Description: "Conformance fixture (tasks): " +
			"becomes a task and panics, so that the task fails (status failed, a JSON-RPC error)."},
			func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
				if _, err := mcp.StartTask(ctx); err != nil {
					return nil, err
				}
				panic("protocol_error_job fails below the tool, on purpose")
			}),
		typed(mcp.Tool{Name: "confirm_delete", TaskSupport: mcp.TaskOptional, Description: "Conformance fixture (tasks): " +
			"becomes a task, asks the user to confirm (elicitation/create under the key \"confirm\"), then reports " +
			"whether it deleted the file (it deletes nothing)."},
			func(ctx context.Context, req *mcp.CallToolRequest, in confirmDeleteArgs) (*mcp.CallToolResult, error) {
				if _, err := mcp.StartTask(ctx); err != nil {
					return nil, err
				}
				got, err := mcp.RequestInput(ctx, req.Session, map[string]mcp.InputRequest{"confirm": mcp.ElicitInput(
					mcp.ElicitParams{Message: "Delete " + in.Filename + "?", RequestedSchema: json.RawMessage(confirmSchema)})})
				if err != nil {
					return nil, err
				}
				res, err := got.Elicit("confirm")
				if err != nil {
					return nil, err
				}
				if res.Action == mcp.ElicitAccept && res.Content["confirm"] == true {
					return textResult("Deleted " + in.Filename + " (a fixture: nothing was deleted)"), nil
				}
				return textResult("Kept " + in.Filename + " (action " + res.Action + ")"), nil
			}),
		typed(mcp.Tool{Name: "multi_input", TaskSupport: mcp.TaskOptional, Description: "Conformance fixture (tasks): " +
			"becomes a task and asks for two inputs at once (elicitation/create under \"first\" and \"second\"), " +
			"then returns both answers."},
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
				if _, err := mcp.StartTask(ctx); err != nil {
					return nil, err
				}
				ask := func(n string) mcp.InputRequest {
					return mcp.ElicitInput(mcp.ElicitParams{Message: "Input " + n + " of 2", RequestedSchema: json.RawMessage(confirmSchema)})
				}
				got, err := mcp.RequestInput(ctx, req.Session, map[string]mcp.InputRequest{"first": ask("1"), "second": ask("2")})
				if err != nil {
					return nil, err
				}
				first, err1 := got.Elicit("first")
				second, err2 := got.Elicit("second")
				if err1 != nil || err2 != nil {
					return nil, core.NewError(core.CodeInvalidArgument, "an answer is not an elicitation result")
				}
				return textResult(fmt.Sprintf("first: %s %v; second: %s %v", first.Action, first.Content["name"],
					second.Action, second.Content["name"])), nil
			}),
		typed(mcp.Tool{Name: "test_tool_with_task", TaskSupport: mcp.TaskRequired, Description: "Conformance fixture " +
			"(tasks): asks for user_name first (input_required, no task yet), then becomes a task whose result greets " +
			"the user by that name."},
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
				got, err := mcp.RequestInput(ctx, req.Session, map[string]mcp.InputRequest{"user_name": mcp.ElicitInput(
					mcp.ElicitParams{Message: "What is your name?", RequestedSchema: json.RawMessage(
						`{"type":"object","properties":{"name":{"type":"string","title":"Name"}},"required":["name"]}`)})})
				if err != nil {
					return nil, err
				}
				res, err := got.Elicit("user_name")
				if err != nil {
					return nil, err
				}
				if _, err := mcp.StartTask(ctx); err != nil {
					return nil, err
				}
				return textResult(fmt.Sprintf("Hello, %v! (gathered before the task began)", res.Content["name"])), nil
			}),
	}
}

// slowCompute is slow_compute: a task when it can be one, `seconds` of
// work (or until cancelled), then a text.
func slowCompute(ctx context.Context, _ *mcp.CallToolRequest, in slowComputeArgs) (*mcp.CallToolResult, error) {
	if in.Seconds < 0 || in.Seconds > maxSlowComputeSeconds {
		return nil, core.NewError(core.CodeInvalidArgument, fmt.Sprintf(
			"seconds is %v; give a number from 0 to %d", in.Seconds, maxSlowComputeSeconds))
	}
	if _, err := mcp.StartTask(ctx); err != nil {
		return nil, err
	}
	if err := pause(ctx, time.Duration(in.Seconds*float64(time.Second))); err != nil {
		return nil, err
	}
	return textResult(fmt.Sprintf("slow_compute %q done after %v s", in.Label, in.Seconds)), nil
}
