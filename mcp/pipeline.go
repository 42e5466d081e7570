package mcp

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/core"
)

// The steps of running a tool that every entry point shares: tools/call
// (call.go, and its task form in tasks_call.go) and InvokeTool
// (invoke.go: workflow steps, agents). Each entry point runs them in the
// same order — payload size, existence, authorisation, a slot, input
// validation, the exclusive lock, the handler under its deadline — and
// differs only in how it answers.

// payloadError is the RESOURCE_EXHAUSTED of arguments of size bytes
// (compact JSON) over tools.maxPayloadBytes, or nil.
func (s *Server) payloadError(size int) *core.Error {
	limit := s.opts.Limits.MaxPayloadBytes
	if size <= limit {
		return nil
	}
	return core.NewError(core.CodeResourceExhausted, fmt.Sprintf(
		"the arguments are %d bytes (compact JSON), over the limit of %d (tools.maxPayloadBytes); send smaller arguments",
		size, limit)).WithDetail("limit", limit).WithDetail("payloadBytes", size).
		WithDetail("reason", "payload_too_large").WithRetryable(false)
}

// authorize runs the tool's Authorize hook, if any.
func authorize(ctx context.Context, rt *registeredTool, req *CallToolRequest) *core.Error {
	if auth := rt.def.Authorize; auth != nil {
		if err := auth(ctx, req); err != nil {
			return core.AsError(err)
		}
	}
	return nil
}

// inputError validates args (size bytes compact) with the tool's compiled
// inputSchema: nil when they match, else INVALID_ARGUMENT whose message
// names schema (which inputSchema) and the first problem, with every
// problem in details.errors. When it decoded a typed tool's input while
// validating, it hands it to req for the handler.
func inputError(rt *registeredTool, req *CallToolRequest, size int, schema string) *core.Error {
	problems, decoded := rt.validateArgs(req.Arguments, size)
	if len(problems) == 0 {
		req.decoded = decoded
		return nil
	}
	return core.NewError(core.CodeInvalidArgument, "the arguments do not match "+schema+": "+
		problemText(problems[0])+" (see details.errors for every problem)").WithDetail("errors", problems)
}

// slotsBusy is the RESOURCE_EXHAUSTED of a call that found no execution
// slot free.
func (s *Server) slotsBusy() *core.Error {
	return core.NewError(core.CodeResourceExhausted, fmt.Sprintf(
		"all %d concurrency slots are busy (resources.maxConcurrentExecutions); retry with exponential backoff and jitter",
		s.slots.Max())).WithDetail("maxConcurrentExecutions", s.slots.Max())
}

// toolTimeout is a tool's deadline: its own, else tools.defaultTimeoutMs.
func (s *Server) toolTimeout(rt *registeredTool) time.Duration {
	if t := rt.def.Timeout; t > 0 {
		return t
	}
	return s.opts.Limits.ToolTimeout
}

// timeoutError is the TIMEOUT of a call whose deadline passed.
func timeoutError(subject string, timeout time.Duration) *core.Error {
	ms := timeout.Milliseconds()
	return core.NewError(core.CodeTimeout, fmt.Sprintf("%s did not finish within its %d ms deadline; "+
		"it was asked to stop. Retry later or with less work", subject, ms)).WithDetail("timeoutMs", ms)
}

// handlerResult is what a tool's handler ended with.
type handlerResult struct {
	value    any
	err      error
	panicked bool
}

// callHandler calls the tool's handler, turning a panic into INTERNAL (the
// panic is logged with its stack). Every entry point runs handlers
// through it.
func (s *Server) callHandler(ctx context.Context, rt *registeredTool, req *CallToolRequest) handlerResult {
	v, err := core.Guard(func() (any, error) { return rt.def.Handler(ctx, req) })
	pe, panicked := err.(*core.PanicError) // Guard returns it as it is
	if !panicked {
		return handlerResult{value: v, err: err}
	}
	s.log.Error("recovered from a panic in a tool handler", "tool", req.Name, "runId", req.RunID,
		"correlationId", req.CorrelationID, "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
	return handlerResult{err: core.NewError(core.CodeInternal, "the tool failed unexpectedly (it panicked); "+
		"the server keeps serving. Report it to the tool's author").WithDetail("reason", "panic").WithRetryable(true),
		panicked: true}
}

// slotHold is one run's hold on an execution slot
// (resources.maxConcurrentExecutions): taken, lent to a run it waits for,
// given back. Every handler that runs holds one until it returns, except
// an observer's and a call's that is waiting (WaitWithoutSlot).
type slotHold struct {
	slots *core.Slots
	held  atomic.Bool
}

// take takes a free slot, without waiting, and reports whether it did.
func (h *slotHold) take() bool {
	if !h.slots.TryAcquire() {
		return false
	}
	h.held.Store(true)
	return true
}

// release gives the slot back, if held.
func (h *slotHold) release() {
	if h.held.CompareAndSwap(true, false) {
		h.slots.Release()
	}
}

// lendTo moves h's slot to to and reports whether h held one.
func (h *slotHold) lendTo(to *slotHold) bool {
	if !h.held.CompareAndSwap(true, false) {
		return false
	}
	to.held.Store(true)
	return true
}
