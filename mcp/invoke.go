package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/jsontext"
)

// invokeCorrelationKey carries the correlation id of an in-process call.
type invokeCorrelationKey struct{}

// WithCorrelationID returns ctx telling InvokeTool the correlation id of
// the call it makes (e.g. "T/step" below the caller's "T"). Without it the
// invoked tool shares its caller's correlation id.
func WithCorrelationID(ctx context.Context, correlationID string) context.Context {
	return context.WithValue(ctx, invokeCorrelationKey{}, correlationID)
}

// InvokeTool calls the registered tool name with args (nil means {}) in
// process, for code on the server such as a workflow step, and returns its
// result as JSON:
//   - a value the handler returns, encoded (a string as a JSON string),
//     checked against the tool's outputSchema;
//   - for a *CallToolResult, its structuredContent when set, else the
//     whole result object ({"content": [...], "isError": false}).
//
// It runs the steps of tools/call (pipeline.go): it finds the tool
// (NOT_FOUND), checks that the server's mode admits it (UNAUTHORIZED),
// bounds the payload (RESOURCE_EXHAUSTED), runs its Authorize hook,
// validates args against the tool's compiled inputSchema
// (INVALID_ARGUMENT with details.errors), takes the exclusive lock of an
// Exclusive tool, applies the tool's deadline (TIMEOUT) and turns a panic
// into INTERNAL. A result with isError true is returned as the
// *core.Error its first text block holds (INTERNAL when it holds none).
// Errors are *core.Error values; a call cancelled by ctx returns an
// INTERNAL one that wraps context.Cause(ctx).
//
// The invoked handler holds an execution slot while it runs: the slot of
// the tool call whose handler context ctx is, lent for the time the
// caller waits, else a free one (RESOURCE_EXHAUSTED when none is; an
// observer tool takes none). A handler that ignores its context runs on
// after TIMEOUT, detached, and keeps its slot, and its exclusive lock,
// until it returns, so abandoned runs never outnumber the slots; the
// caller then goes on without a slot when none is free.
//
// It reaches no audit sink: the caller records what it invoked. When ctx
// is a tool handler's context, the invoked handler sees the same session
// and, under a fresh runId, the correlation id of WithCorrelationID (else
// its caller's).
func (s *Server) InvokeTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	rt := s.tool(name)
	if rt == nil {
		return nil, core.NewError(core.CodeNotFound, "unknown tool "+jsontext.Quote(name)+"; tools/list shows the tools this server offers")
	}
	if !s.Admitted(&rt.def) {
		return nil, core.NewError(core.CodeUnauthorized, fmt.Sprintf("tool %q is not admitted in mode %s, which admits %s",
			name, s.opts.Mode, admits(s.opts.Mode)))
	}
	if args == nil {
		args = json.RawMessage(`{}`)
	}
	if !isObject(args) {
		return nil, core.NewError(core.CodeInvalidArgument, "the arguments must be a JSON object, got "+jsontext.ClipBytes(args, 40))
	}
	size := jsontext.CompactLen(args)
	if e := s.payloadError(size); e != nil {
		return nil, e
	}
	parent := callInfoFrom(ctx)
	req := &CallToolRequest{Name: name, Arguments: args, ProtocolVersion: LatestVersion, RunID: s.ids.NewID()}
	if parent != nil {
		req.Session, req.CorrelationID = parent.session, parent.correlationID
		if parent.session != nil {
			req.ProtocolVersion = parent.session.ProtocolVersion()
		}
	}
	if cid, ok := ctx.Value(invokeCorrelationKey{}).(string); ok && cid != "" {
		req.CorrelationID = cid
	}
	if req.CorrelationID == "" {
		req.CorrelationID = s.ids.NewID()
	}
	if e := authorize(ctx, rt, req); e != nil {
		return nil, e
	}
	if e := inputError(rt, req, size, "the inputSchema of tool "+jsontext.Quote(name)); e != nil {
		return nil, e
	}
	run := &invocation{srv: s, rt: rt, req: req, slot: slotHold{slots: s.slots}}
	if !rt.def.Observer {
		if parent != nil && parent.slot != nil && parent.slot.lendTo(&run.slot) {
			run.lender = parent.slot
		} else if !run.slot.take() {
			s.exhausted.Inc()
			return nil, s.slotsBusy()
		}
	}
	return run.run(ctx, parent)
}

// invocation is one InvokeTool run: its handler runs on a goroutine of its
// own, which holds the run's slot (and lock) until the handler returns.
type invocation struct {
	srv    *Server
	rt     *registeredTool
	req    *CallToolRequest
	slot   slotHold
	lender *slotHold    // the caller's hold the slot was lent from, or nil
	state  atomic.Int32 // invokeRunning, then invokeReturned or invokeAbandoned
}

// The states of an invocation: the first of the handler's return and the
// caller's giving up settles it.
const (
	invokeRunning int32 = iota
	invokeReturned
	invokeAbandoned
)

// run takes the lock, starts the handler under the deadline and waits for
// it or for the end of ctx.
func (r *invocation) run(ctx context.Context, parent *callInfo) (json.RawMessage, error) {
	s, rt := r.srv, r.rt
	timeout := s.toolTimeout(rt)
	hctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := s.clock.AfterFunc(timeout, func() { cancel(errTimeout) })
	defer timer.Stop()
	if rt.lock != nil {
		select {
		case rt.lock <- struct{}{}:
		case <-hctx.Done():
			r.giveBack()
			return nil, r.abandoned(hctx, timeout)
		}
	}
	ci := &callInfo{runID: r.req.RunID, correlationID: r.req.CorrelationID, tool: r.req.Name, slot: &r.slot}
	if parent != nil {
		ci.session = parent.session
	}
	hctx = context.WithValue(hctx, callInfoKey{}, ci)
	done := make(chan handlerResult, 1)
	go r.handle(hctx, done)
	var res handlerResult
	select {
	case res = <-done:
	case <-hctx.Done():
		if r.state.CompareAndSwap(invokeRunning, invokeAbandoned) {
			// The handler runs on, detached, with the slot; the caller
			// goes on with one if one is free.
			if r.lender != nil {
				r.lender.take()
			}
			return nil, r.abandoned(hctx, timeout)
		}
		res = <-done // it returned as the context ended: keep what it did
	}
	r.giveBack()
	if res.err != nil && hctx.Err() != nil { // it failed because it was stopped
		return nil, r.abandoned(hctx, timeout)
	}
	return s.invokeResult(rt, res)
}

// handle runs the handler on the run's goroutine. The lock is given back
// when the handler returns; so is the slot, by the caller when it still
// waits, else here.
func (r *invocation) handle(ctx context.Context, done chan<- handlerResult) {
	res := r.srv.callHandler(ctx, r.rt, r.req)
	if r.rt.lock != nil {
		<-r.rt.lock
	}
	if r.state.CompareAndSwap(invokeRunning, invokeReturned) {
		done <- res
		return
	}
	r.slot.release() // abandoned: the caller has gone on
}

// giveBack returns the run's slot to the caller it was lent by, or to the
// server.
func (r *invocation) giveBack() {
	if r.lender == nil || !r.slot.lendTo(r.lender) {
		r.slot.release()
	}
}

// abandoned is the error of an in-process call whose context ended
// before its handler returned.
func (r *invocation) abandoned(ctx context.Context, timeout time.Duration) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, errTimeout) {
		return timeoutError("tool "+jsontext.Quote(r.req.Name), timeout)
	}
	return core.Errorf(core.CodeInternal, "the call of tool %q was abandoned: %w", r.req.Name, cause)
}

// invokeResult turns a handler's return into InvokeTool's.
func (s *Server) invokeResult(rt *registeredTool, r handlerResult) (json.RawMessage, error) {
	if r.err != nil {
		var ce *core.Error
		if isCoreError(r.err, &ce) {
			return nil, ce
		}
		return nil, core.NewError(core.CodeInternal, r.err.Error()).WithDetail("reason", "handler_error")
	}
	var v any = r.value
	switch x := r.value.(type) {
	case *CallToolResult:
		if x == nil {
			return nil, core.NewError(core.CodeInternal, "the tool returned a nil *CallToolResult").WithRetryable(false)
		}
		return s.invokeFull(rt, *x)
	case CallToolResult:
		return s.invokeFull(rt, x)
	}
	js, err := json.Marshal(v)
	if err != nil {
		return nil, core.NewError(core.CodeInternal, "the tool's result cannot be encoded as JSON: "+err.Error()).WithRetryable(false)
	}
	if err := s.invokeSize(js); err != nil {
		return nil, err
	}
	if rt.output != nil && !rt.trustsOutput(r.value) {
		if problems := rt.output.validate(js); len(problems) > 0 {
			return nil, core.NewError(core.CodeInternal, "the tool's result does not match its outputSchema: "+
				problemText(problems[0])).WithDetail("reason", "output_schema_violation").WithRetryable(false)
		}
	}
	return js, nil
}

// invokeFull is the JSON of a handler's own CallToolResult.
func (s *Server) invokeFull(rt *registeredTool, res CallToolResult) (json.RawMessage, error) {
	if res.IsError {
		if len(res.Content) > 0 && res.Content[0].Type == "text" {
			var ce core.Error
			if json.Unmarshal([]byte(res.Content[0].Text), &ce) == nil && ce.Code != "" {
				return nil, &ce
			}
			return nil, core.NewError(core.CodeInternal, core.Clip(res.Content[0].Text, 1024)).WithRetryable(false)
		}
		return nil, core.NewError(core.CodeInternal, "the tool reported an error without a text block").WithRetryable(false)
	}
	if res.StructuredContent != nil {
		return s.invokeResult(rt, handlerResult{value: res.StructuredContent})
	}
	if res.Content == nil {
		res.Content = []Content{}
	}
	js, err := json.Marshal(res)
	if err != nil {
		return nil, core.NewError(core.CodeInternal, "the tool's result cannot be encoded as JSON: "+err.Error()).WithRetryable(false)
	}
	return js, s.invokeSize(js)
}

// invokeSize bounds a result by tools.maxResultBytes.
func (s *Server) invokeSize(js []byte) error {
	if limit := s.opts.Limits.MaxResultBytes; len(js) > limit {
		return resultTooLarge(limit, len(js))
	}
	return nil
}
