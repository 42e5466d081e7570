package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
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
// Like tools/call it finds the tool (NOT_FOUND), checks that the server's
// mode admits it (UNAUTHORIZED) and its Authorize hook, bounds the payload
// (RESOURCE_EXHAUSTED), validates args against the tool's compiled
// inputSchema (INVALID_ARGUMENT with details.errors), takes the exclusive
// lock of an Exclusive tool, applies the tool's deadline (TIMEOUT) and
// turns a panic into INTERNAL. A result with isError true is returned as
// the *core.Error its first text block holds (INTERNAL when it holds none).
// Errors are *core.Error values; a call cancelled by ctx returns an
// INTERNAL one that wraps context.Cause(ctx).
//
// It takes no concurrency slot (the caller, a tool call itself, holds one)
// and reaches no audit sink: the caller records what it invoked. When ctx
// is a tool handler's context, the invoked handler sees the same session
// and, under a fresh runId, the correlation id of WithCorrelationID (else
// its caller's). A handler that ignores its context runs on after TIMEOUT,
// detached.
func (s *Server) InvokeTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	rt := s.tool(name)
	if rt == nil {
		return nil, core.NewError(core.CodeNotFound, "unknown tool "+jsontext.Quote(name)+"; tools/list shows the tools this server offers")
	}
	if !s.Admitted(&rt.def) {
		return nil, core.NewError(core.CodeUnauthorized, fmt.Sprintf("tool %q is not admitted in mode %s, which admits %s",
			name, s.cfg.Server.Mode, admits(s.cfg.Server.Mode)))
	}
	if args == nil {
		args = json.RawMessage(`{}`)
	}
	if !isObject(args) {
		return nil, core.NewError(core.CodeInvalidArgument, "the arguments must be a JSON object, got "+jsontext.ClipBytes(args, 40))
	}
	size := jsontext.CompactLen(args)
	if size > s.cfg.Tools.MaxPayloadBytes {
		return nil, core.NewError(core.CodeResourceExhausted, fmt.Sprintf("the arguments are %d bytes (compact JSON), over the limit of %d "+
			"(tools.maxPayloadBytes); send smaller arguments", size, s.cfg.Tools.MaxPayloadBytes)).
			WithDetail("reason", "payload_too_large").WithRetryable(false)
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
	if auth := rt.def.Authorize; auth != nil {
		if err := auth(ctx, req); err != nil {
			return nil, core.AsError(err)
		}
	}
	if problems := rt.validateArgs(args, size); len(problems) > 0 {
		return nil, core.NewError(core.CodeInvalidArgument, "the arguments do not match the inputSchema of tool "+jsontext.Quote(name)+
			": "+problemText(problems[0])+" (see details.errors for every problem)").WithDetail("errors", problems)
	}
	timeout := rt.def.Timeout
	if timeout <= 0 {
		timeout = time.Duration(s.cfg.Tools.DefaultTimeoutMs) * time.Millisecond
	}
	hctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := s.clock.AfterFunc(timeout, func() { cancel(errTimeout) })
	defer timer.Stop()
	if rt.lock != nil {
		select {
		case rt.lock <- struct{}{}:
			defer func() { <-rt.lock }()
		case <-hctx.Done():
			return nil, s.invokeAbandoned(hctx, name, timeout)
		}
	}
	if parent != nil && parent.session != nil {
		hctx = context.WithValue(hctx, callInfoKey{}, &callInfo{runID: req.RunID, correlationID: req.CorrelationID,
			tool: name, session: parent.session})
	}
	done := make(chan handlerResult, 1)
	go func() {
		var r handlerResult
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("recovered from a panic in a tool handler invoked in process", "tool", name, "runId", req.RunID,
					"correlationId", req.CorrelationID, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				r = handlerResult{err: core.NewError(core.CodeInternal, "the tool failed unexpectedly (it panicked); "+
					"report it to the tool's author").WithDetail("reason", "panic").WithRetryable(true)}
			}
			done <- r
		}()
		r.value, r.err = rt.def.Handler(hctx, req)
	}()
	var r handlerResult
	select {
	case r = <-done:
	case <-hctx.Done():
		select {
		case r = <-done:
		default:
			return nil, s.invokeAbandoned(hctx, name, timeout)
		}
	}
	if r.err != nil && hctx.Err() != nil { // it failed because it was stopped
		return nil, s.invokeAbandoned(hctx, name, timeout)
	}
	return s.invokeResult(rt, r)
}

// invokeAbandoned is the error of an in-process call whose context ended
// before its handler returned.
func (s *Server) invokeAbandoned(ctx context.Context, name string, timeout time.Duration) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, errTimeout) {
		ms := timeout.Milliseconds()
		return core.NewError(core.CodeTimeout, fmt.Sprintf("tool %q did not finish within its %d ms deadline; it was asked to stop. "+
			"Retry later or with less work", name, ms)).WithDetail("timeoutMs", ms)
	}
	return core.Errorf(core.CodeInternal, "the call of tool %q was abandoned: %w", name, cause)
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
	if rt.output != nil {
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
	if limit := s.cfg.Tools.MaxResultBytes; len(js) > limit {
		return resultTooLarge(limit, len(js))
	}
	return nil
}
