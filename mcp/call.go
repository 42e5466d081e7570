package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
)

// Completion outcomes (SPEC §7.6).
const (
	OutcomeSuccess               = "success"
	OutcomeToolError             = "tool_error"
	OutcomeTimeout               = "timeout"
	OutcomeLateCompleted         = "late_completed"
	OutcomeAborted               = "aborted"
	OutcomeDisconnectedCompleted = "disconnected_completed"
	OutcomeProtocolError         = "protocol_error"
)

// errTimeout is the cause of a handler context cancelled at its deadline.
var errTimeout = errors.New("mcp: the tool's deadline passed")

// callParams are the params of tools/call.
type callParams struct {
	Name      json.RawMessage `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      json.RawMessage `json:"_meta"`
}

// toolCall is one tools/call from step 3 on.
type toolCall struct {
	sess    *Session
	tool    string
	runID   string
	cid     string
	payload int
	start   time.Time
	rt      *registeredTool

	mu        sync.Mutex // guards returned and abandoned
	returned  bool       // the handler has returned
	abandoned string     // the waiter gave up with this outcome
	done      chan handlerResult

	finalRecorded atomic.Bool
	slotHeld      bool
	lockHeld      bool
}

type handlerResult struct {
	value any
	err   error
}

// handleCall is the tools/call pipeline of SPEC §7.3. Step 1 (the state
// gate) is the router's.
func (sess *Session) handleCall(ctx context.Context, req *jsonrpc.Request) (any, error) {
	s := sess.srv
	// Step 2: params shape.
	var p callParams
	if err := decodeParams(req.Params, &p); err != nil {
		sess.protocolErrorRecord("", clientCorrelationID(req.Params))
		return nil, err
	}
	name, ok := unquoteName(p.Name)
	switch {
	case !ok:
		sess.protocolErrorRecord("", clientCorrelationID(req.Params))
		return nil, invalidParams(`tools/call needs params.name, the tool's name as a string`)
	case p.Arguments != nil && !isObject(p.Arguments):
		sess.protocolErrorRecord(name, clientCorrelationID(req.Params))
		return nil, invalidParams(`tools/call params.arguments must be an object (or absent), got ` + clipRaw(p.Arguments))
	case p.Meta != nil && !isObject(p.Meta):
		sess.protocolErrorRecord(name, clientCorrelationID(req.Params))
		return nil, invalidParams(`tools/call params._meta must be an object, got ` + clipRaw(p.Meta))
	}
	// Step 3: ids.
	c := &toolCall{sess: sess, tool: name, start: s.clock.Now(), runID: s.ids.NewID(),
		cid: clientCorrelationID(req.Params)}
	if c.cid == "" {
		c.cid = s.ids.NewID()
	}
	args := p.Arguments
	if args == nil {
		args = json.RawMessage(`{}`)
	}
	// Step 4: payload size.
	c.payload = core.CompactLen(args)
	if c.payload > s.cfg.Tools.MaxPayloadBytes {
		if rt := s.tool(name); rt == nil || !rt.def.Observer { // observers neither raise nor reset it
			s.exhausted.Inc()
		}
		return c.fail(core.NewError(core.CodeResourceExhausted, fmt.Sprintf(
			"the arguments are %d bytes (compact JSON), over the limit of %d (tools.maxPayloadBytes); send smaller arguments",
			c.payload, s.cfg.Tools.MaxPayloadBytes)).WithDetail("limit", s.cfg.Tools.MaxPayloadBytes).
			WithDetail("payloadBytes", c.payload), false)
	}
	// Step 5: existence.
	c.rt = s.tool(name)
	if c.rt == nil {
		return c.fail(core.NewError(core.CodeNotFound, "unknown tool "+quoteString(name)+
			"; call tools/list to see the tools this server offers"), true)
	}
	if auth := c.rt.def.Authorize; auth != nil {
		if err := auth(ctx); err != nil {
			return c.fail(core.AsError(err), true)
		}
	}
	observer := c.rt.def.Observer
	// Step 6: concurrency slot, without waiting.
	if !observer {
		if !s.slots.TryAcquire() {
			s.exhausted.Inc()
			sess.log.Warn("tools/call rejected: no concurrency slot free; clients should retry with exponential backoff and jitter",
				"tool", name, "correlationId", c.cid, "runId", c.runID, "maxConcurrentExecutions", s.slots.Max())
			return c.fail(core.NewError(core.CodeResourceExhausted, fmt.Sprintf(
				"all %d concurrency slots are busy (resources.maxConcurrentExecutions); retry with exponential backoff and jitter",
				s.slots.Max())).WithDetail("maxConcurrentExecutions", s.slots.Max()), false)
		}
		c.slotHeld = true
	}
	// Step 7: input validation with the precompiled validator.
	if problems := c.rt.validateArgs(args, c.payload); len(problems) > 0 {
		c.release()
		return c.fail(core.NewError(core.CodeInvalidArgument, "the arguments do not match the tool's inputSchema: "+
			problemText(problems[0])+" (see details.errors for every problem)").WithDetail("errors", problems), true)
	}
	// Steps 8-14.
	return c.run(ctx, args)
}

// run takes the exclusive lock, enters the audit, dispatches under the
// deadline and finishes the call.
func (c *toolCall) run(ctx context.Context, args json.RawMessage) (any, error) {
	s := c.sess.srv
	timeout := c.rt.def.Timeout
	if timeout <= 0 {
		timeout = time.Duration(s.cfg.Tools.DefaultTimeoutMs) * time.Millisecond
	}
	hctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	// Step 8: exclusive lock; waiting counts against the deadline.
	if c.rt.lock != nil {
		select {
		case c.rt.lock <- struct{}{}:
			c.lockHeld = true
		case <-hctx.Done():
			cancel()
			c.release()
			return c.interrupted(context.Cause(hctx), false)
		}
	}
	// Step 9: audit enter.
	if err := c.auditEnter(hctx, args); err != nil {
		cancel()
		c.release()
		return c.fail(core.NewError(core.CodeAuditEnterFailed, "the audit sink refused to record the call: "+
			err.Error()+"; the tool did not run"), true)
	}
	// Step 10: dispatch under the deadline.
	c.done = make(chan handlerResult, 1)
	hctx = withCallInfo(hctx, &callInfo{runID: c.runID, correlationID: c.cid, tool: c.tool, session: c.sess})
	c.sess.track(c)
	c.sess.runs.Add(1)
	go c.invoke(hctx, cancel, args)

	select {
	case r := <-c.done:
		return c.afterReturn(r, hctx, cancel)
	case <-hctx.Done():
		c.mu.Lock()
		if c.returned {
			c.mu.Unlock()
			return c.afterReturn(<-c.done, hctx, cancel)
		}
		cause := context.Cause(hctx)
		c.abandoned = abandonOutcome(cause)
		// Answer (and write the timeout record) before releasing mu: a
		// handler returning now must not log late_completed before the
		// timeout record (SPEC §7.6: timeout, then late_completed).
		res, err := c.interrupted(cause, true)
		c.mu.Unlock()
		return res, err
	}
}

// afterReturn ends a call whose handler returned while the request waited.
// If the handler's context had ended first, the call ends as that cause
// says (TIMEOUT, or no response), whatever the handler answered.
func (c *toolCall) afterReturn(r handlerResult, hctx context.Context, cancel context.CancelFunc) (any, error) {
	cause := context.Cause(hctx)
	cancel()
	if cause == nil {
		return c.finish(r)
	}
	outcome := abandonOutcome(cause)
	res, err := c.interrupted(cause, true)
	if outcome == OutcomeTimeout {
		outcome = OutcomeLateCompleted
	}
	c.completeAbandoned(r, outcome)
	return res, err
}

// auditEnter calls the sink's Enter, turning a panic into an error.
func (c *toolCall) auditEnter(ctx context.Context, args json.RawMessage) (err error) {
	sink := c.sess.srv.audit
	if _, nop := sink.(NopAuditSink); nop {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("audit sink panicked: %v", p)
		}
	}()
	return sink.Enter(ctx, ToolEnterEvent{Tool: c.tool, Args: append(json.RawMessage(nil), args...),
		Time: c.start, CorrelationID: c.cid, RunID: c.runID})
}

// auditExit calls the sink's Exit; its failure is logged, never returned.
func (c *toolCall) auditExit(r handlerResult, outcome string) {
	defer func() {
		if p := recover(); p != nil {
			c.sess.log.Error("audit sink Exit panicked", "tool", c.tool, "runId", c.runID, "panic", fmt.Sprint(p))
		}
	}()
	c.sess.srv.audit.Exit(context.Background(), ToolExitEvent{Tool: c.tool, CorrelationID: c.cid, RunID: c.runID,
		Duration: c.sess.srv.clock.Now().Sub(c.start), Result: r.value, Err: r.err, Outcome: outcome})
}

// invoke runs the handler on its own goroutine and hands the result over:
// to the waiting request, or, when that gave up, finishes the call itself.
func (c *toolCall) invoke(ctx context.Context, cancel context.CancelFunc, args json.RawMessage) {
	defer c.sess.runs.Done()
	r := c.callHandler(ctx, args)
	c.mu.Lock()
	c.returned = true
	outcome := c.abandoned
	c.mu.Unlock()
	if outcome == "" {
		c.done <- r // the waiter cancels the context
		return
	}
	cancel()
	// The response was already sent (TIMEOUT) or will never be (cancelled,
	// disconnected).
	if outcome == OutcomeTimeout {
		outcome = OutcomeLateCompleted
	}
	c.completeAbandoned(r, outcome)
}

// completeAbandoned finishes a call whose response was already decided
// without its handler's result: audit exit, release, final record.
func (c *toolCall) completeAbandoned(r handlerResult, outcome string) {
	c.auditExit(r, outcome)
	c.release()
	c.sess.untrack(c)
	c.record(outcome, errorCode(r.err), true)
}

// callHandler calls the tool's handler, turning a panic into INTERNAL.
func (c *toolCall) callHandler(ctx context.Context, args json.RawMessage) (r handlerResult) {
	defer func() {
		if p := recover(); p != nil {
			c.sess.log.Error("recovered from a panic in a tool handler", "tool", c.tool, "runId", c.runID,
				"correlationId", c.cid, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			r = handlerResult{err: core.NewError(core.CodeInternal, "the tool failed unexpectedly (it panicked); "+
				"the server keeps serving. Report it to the tool's author").WithDetail("reason", "panic")}
		}
	}()
	v, err := c.rt.def.Handler(ctx, args)
	return handlerResult{value: v, err: err}
}

// finish completes a call whose handler returned while the request waited:
// output check (11), audit exit (12), release (13), wrap (14).
func (c *toolCall) finish(r handlerResult) (any, error) {
	c.sess.untrack(c)
	res, terr := c.wrap(r)
	outcome := OutcomeSuccess
	if terr != nil {
		outcome = OutcomeToolError
	}
	c.auditExit(r, outcome)
	c.release()
	if terr != nil {
		return c.fail(terr, true)
	}
	c.resetExhaustion()
	c.record(OutcomeSuccess, "", true)
	return res, nil
}

// interrupted answers a call whose deadline passed or whose request was
// cancelled before its handler returned.
func (c *toolCall) interrupted(cause error, handlerRunning bool) (any, error) {
	switch abandonOutcome(cause) {
	case OutcomeTimeout:
		timeout := c.rt.def.Timeout
		if timeout <= 0 {
			timeout = time.Duration(c.sess.srv.cfg.Tools.DefaultTimeoutMs) * time.Millisecond
		}
		e := core.NewError(core.CodeTimeout, fmt.Sprintf("the tool did not finish within its %d ms deadline; "+
			"it was asked to stop. Retry later or with less work", timeout.Milliseconds())).
			WithDetail("timeoutMs", timeout.Milliseconds())
		c.resetExhaustion()
		c.record(OutcomeTimeout, string(core.CodeTimeout), false)
		return json.RawMessage(toolErrorResult(c.stamp(e))), nil
	case OutcomeDisconnectedCompleted:
		if !handlerRunning {
			c.record(OutcomeAborted, "", true)
		}
		return nil, jsonrpc.ErrNoResponse
	default: // cancelled by the client
		if !handlerRunning {
			c.record(OutcomeAborted, "", true)
		}
		return nil, jsonrpc.ErrNoResponse
	}
}

// abandonOutcome maps the cause of a cancelled handler context to the
// completion outcome.
func abandonOutcome(cause error) string {
	switch {
	case errors.Is(cause, errTimeout):
		return OutcomeTimeout
	case errors.Is(cause, jsonrpc.ErrClosed):
		return OutcomeDisconnectedCompleted
	}
	return OutcomeAborted
}

// fail sends a tool error and writes the call's tool_error record. reset
// says whether this completion resets the RESOURCE_EXHAUSTED counter.
func (c *toolCall) fail(e *core.Error, reset bool) (any, error) {
	e = c.stamp(e)
	if reset {
		c.resetExhaustion()
	}
	c.record(OutcomeToolError, string(e.Code), true)
	return json.RawMessage(toolErrorResult(e)), nil
}

// stamp returns a copy of e carrying the call's ids and retryable flag.
func (c *toolCall) stamp(e *core.Error) *core.Error {
	out := *e
	out.CorrelationID, out.RunID = c.cid, c.runID
	if out.Code.Retryable() {
		out.Retryable = true
	}
	return &out
}

func (c *toolCall) resetExhaustion() {
	if c.rt == nil || !c.rt.def.Observer {
		c.sess.srv.exhausted.Reset()
	}
}

// release gives back the exclusive lock and the slot (step 13).
func (c *toolCall) release() {
	if c.lockHeld {
		c.lockHeld = false
		<-c.rt.lock
	}
	if c.slotHeld {
		c.slotHeld = false
		c.sess.srv.slots.Release()
	}
}

// errorCode returns the structured code of a handler error, or "".
func errorCode(err error) string {
	if err == nil {
		return ""
	}
	return string(core.AsError(err).Code)
}

func unquoteName(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func problemText(p schemaProblem) string {
	path := p.Path
	if path == "" {
		path = "(root)"
	}
	return "at " + path + ": " + p.Message
}

func clipRaw(raw json.RawMessage) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}
