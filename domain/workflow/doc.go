// Package workflow runs workflows: named lists of steps, each calling a
// registered MCP tool or an agent, with inputs templated from the run's
// input and the outputs of earlier steps.
//
// # Definitions
//
// A definition is one JSON document valid against SchemaJSON, the
// published schema (committed as docs/workflow.schema.json; a test keeps
// the copies identical). Parse also bounds its size (MaxDefinitionBytes)
// and nesting (MaxDepth) before decoding, rejects duplicate member names
// and step ids, parses every {{...}} template (see template.go) and checks
// that it refers only to the input and to earlier steps, and compiles the
// inputSchema. Errors are INVALID_ARGUMENT *core.Error values naming the
// source and saying what was wrong. Load returns the two bundled workflows
// (remember-and-recall, check-change) and those of a directory (one per
// *.json; a missing directory holds none; a file may replace a bundled
// workflow by using its id). Definitions never change once loaded.
//
// # Runs
//
// Engine.Run checks, before any step runs: the nesting of workflows
// (MaxNesting, WORKFLOW_NESTING_TOO_DEEP), the status (inactive ones do
// not run: WORKFLOW_VALIDATION_ERROR), the input against the inputSchema
// (INVALID_ARGUMENT) and that every tool a step calls is registered
// (WORKFLOW_VALIDATION_ERROR), and it reserves all its steps from the
// budget it shares with the runs nested in it (MaxRunSteps; a run that
// cannot is refused with RESOURCE_EXHAUSTED and runs nothing). Each step's
// output is counted against the same budget's MaxRunOutputBytes as it
// arrives; passing it fails that step with RESOURCE_EXHAUSTED naming the
// limit. Then the steps run in order. A step's input
// is rendered (a bad reference fails the step with
// WORKFLOW_TEMPLATE_ERROR, never retried), then it is attempted up to
// 1+retries times; each attempt has its own timeout (TIMEOUT), and before
// retry n the engine waits backoffMs·2^(n-1) (at most MaxBackoffMs) on its
// core.Clock. A failed step with onFailure "stop" (the default) ends the
// run with WORKFLOW_STEP_FAILED; with "continue" the run goes on (status
// "partial") and later references to its output fail. The run's deadline
// (timeoutMs) and ctx (the call's deadline, cancellation) end the run at
// once: WORKFLOW_TIMEOUT or WORKFLOW_CANCELLED. A step that ignores its
// context is abandoned, not waited for. Run returns the *RunResult with
// those errors too: every step's status, attempts, duration, output and
// error.
//
// Tool steps go through an Invoker (in mcprt, mcp.Server.InvokeTool under
// the step's correlation path, run/step). Agent steps go through an
// AgentRunner set with SetAgentRunner; without one they fail with
// AGENTS_UNAVAILABLE. A Tracer, when set, sees every attempt (and, for
// RunWorkflow, the run) as a StepEvent. Inputs are never modified: step
// arguments are built afresh from the templates.
//
// Tools holds the typed workflow_run, workflow_list and workflow_describe
// handlers and ToolSpecs their annotations: workflow_run is destructive
// (its steps may overwrite or delete) and not idempotent; the others are
// read-only. The Engine is safe for concurrent use.
package workflow
