package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcprt/mcprt/internal/jsontext"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
)

// Completion outcomes: what a completion record says happened to a call.
const (
	OutcomeSuccess               = "success"
	OutcomeToolError             = "tool_error"
	OutcomeTimeout               = "timeout"
	OutcomeLateCompleted         = "late_completed"
	OutcomeAborted               = "aborted"
	OutcomeDisconnectedCompleted = "disconnected_completed"
	OutcomeProtocolError         = "protocol_error"
	// OutcomeInputRequired: a stateless call was answered with
	// input_required; the client retries it with the input.
	OutcomeInputRequired = "input_required"
)

// errTimeout is the cause of a handler context cancelled at its deadline.
var errTimeout = errors.New("mcp: the tool's deadline passed")

// Why a handler's context was cancelled, as context.Cause reports it:
// ErrTimeout (the tool's deadline passed: the client got TIMEOUT),
// ErrCancelled (the client sent notifications/cancelled) or ErrSessionClosed
// (the session closed: the client went away or the server is shutting
// down).
var (
	ErrTimeout       = errTimeout
	ErrSessionClosed = jsonrpc.ErrClosed
)

// callParams are the params of tools/call, as raw JSON values.
type callParams struct {
	Name      json.RawMessage
	Arguments json.RawMessage
	Meta      json.RawMessage
}

// parseCallParams reads the members of tools/call params (absent params
// read as {}). Member names are matched exactly; a repeated member is
// -32602, as is params that is not an object.
func parseCallParams(params json.RawMessage) (callParams, error) {
	var p callParams
	if len(params) == 0 {
		return p, nil
	}
	dup := ""
	isObj := jsontext.EachMember(params, func(key, value []byte) bool {
		var slot *json.RawMessage
		switch {
		case jsontext.KeyIs(key, "name"):
			slot = &p.Name
		case jsontext.KeyIs(key, "arguments"):
			slot = &p.Arguments
		case jsontext.KeyIs(key, "_meta"):
			slot = &p.Meta
		default:
			return true
		}
		if *slot != nil {
			dup = string(key)
			return false
		}
		*slot = value
		return true
	})
	switch {
	case !isObj:
		return p, invalidParams("tools/call params must be an object {name, arguments?, _meta?}")
	case dup != "":
		return p, invalidParams("tools/call params has the member " + dup + " twice; send each member once")
	}
	return p, nil
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
	req     CallToolRequest // what the handler sees

	// The call is its handler's context: the request's context (cancelled
	// by the client, the connection's end, or the deadline), plus the
	// call's deadline and callInfo.
	context.Context
	info         callInfo
	deadlineAt   time.Time
	deadlineDone chan struct{} // closed when the deadline timer's work is done

	mu       sync.Mutex // guards returned, expired, timer and task
	returned bool       // the handler returned (or never will run)
	expired  bool       // the deadline fired first
	timer    core.Timer // the deadline's
	task     *task      // set when the call became a task (StartTask)

	// rpc is the request's context: the call's answer goes through it
	// (until the call becomes a task). For a call that may become a task
	// (tasks_call.go) the handler's context is another one: cancelHandler
	// cancels it, stopProp stops passing the request's cancellation on to
	// it, and answered is closed once the request has its answer.
	rpc           context.Context
	cancelHandler context.CancelCauseFunc
	stopProp      func() bool
	answered      chan struct{}
	answerOnce    sync.Once

	timeoutSent   bool // TIMEOUT was sent; written by deadline before deadlineDone closes
	finalRecorded atomic.Bool
	slotHeld      atomic.Bool // the call holds an execution slot (see WaitWithoutSlot)
	lockHeld      bool
}

type handlerResult struct {
	value    any
	err      error
	panicked bool
}

// handleCall is the tools/call pipeline, steps 2 to 14 (step 1, the state
// gate, is Route's). Every answer goes out through jsonrpc.Respond, so the
// completion record says what the client saw.
func (sess *Session) handleCall(ctx context.Context, req *jsonrpc.Request) (any, error) {
	s := sess.srv
	// Step 2: params shape.
	p, perr := parseCallParams(req.Params)
	if perr != nil {
		sess.protocolErrorRecord("", clientCorrelationID(req.Params))
		return nil, perr
	}
	name, ok := jsontext.String(p.Name)
	switch {
	case !ok:
		sess.protocolErrorRecord("", clientCorrelationID(req.Params))
		return nil, invalidParams(`tools/call needs params.name, the tool's name as a string`)
	case p.Arguments != nil && !isObject(p.Arguments):
		sess.protocolErrorRecord(name, clientCorrelationID(req.Params))
		return nil, invalidParams(`tools/call params.arguments must be an object (or absent), got ` + jsontext.ClipBytes(p.Arguments, 40))
	case p.Meta != nil && !isObject(p.Meta):
		sess.protocolErrorRecord(name, clientCorrelationID(req.Params))
		return nil, invalidParams(`tools/call params._meta must be an object, got ` + jsontext.ClipBytes(p.Meta, 40))
	}
	// Step 3: ids.
	c := &toolCall{sess: sess, tool: jsontext.Clip(name, jsontext.MaxEcho), start: s.clock.Now(), runID: s.ids.NewID(),
		cid: metaCorrelationID(p.Meta), Context: ctx, rpc: ctx}
	if c.cid == "" {
		c.cid = s.ids.NewID()
	}
	args := p.Arguments
	if args == nil {
		args = json.RawMessage(`{}`)
	}
	c.req = CallToolRequest{Session: sess, Name: name, Arguments: args, Meta: Meta(p.Meta),
		ProtocolVersion: sess.versionFor(ctx), RunID: c.runID, CorrelationID: c.cid}
	c.req.progress = newProgressReporter(sess, c, c.req.Meta, c.req.ProtocolVersion)
	// Step 4: payload size.
	c.payload = jsontext.CompactLen(args)
	if c.payload > s.cfg.Tools.MaxPayloadBytes {
		if rt := s.tool(name); rt == nil || !rt.def.Observer { // observers neither raise nor reset it
			s.exhausted.Inc()
		}
		return c.fail(core.NewError(core.CodeResourceExhausted, fmt.Sprintf(
			"the arguments are %d bytes (compact JSON), over the limit of %d (tools.maxPayloadBytes); send smaller arguments",
			c.payload, s.cfg.Tools.MaxPayloadBytes)).WithDetail("limit", s.cfg.Tools.MaxPayloadBytes).
			WithDetail("payloadBytes", c.payload).WithDetail("reason", "payload_too_large").WithRetryable(false), false)
	}
	// Step 5: existence.
	c.rt = s.tool(name)
	if c.rt == nil {
		return c.fail(core.NewError(core.CodeNotFound, "unknown tool "+jsontext.Quote(name)+
			"; call tools/list to see the tools this server offers"), true)
	}
	if !sess.tools.Allows(name) { // outside the session's profile: as if absent
		c.rt = nil
		return c.fail(sess.notInSession(name), true)
	}
	if e := c.taskRequiredError(ctx); e != nil {
		return c.refuse(e)
	}
	if auth := c.rt.def.Authorize; auth != nil {
		if err := auth(ctx, &c.req); err != nil {
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
		c.slotHeld.Store(true)
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

// run takes the exclusive lock, enters the audit, and runs the handler on
// this goroutine under the deadline (steps 8-14). The deadline is a timer:
// when it fires first, the client gets TIMEOUT at once (jsonrpc.Respond)
// while the handler runs on, holding its slot, until it returns.
func (c *toolCall) run(ctx context.Context, args json.RawMessage) (any, error) {
	if c.taskPossible(ctx) {
		c.detach()
		ctx = c.Context
	}
	c.info = callInfo{runID: c.runID, correlationID: c.cid, tool: c.tool, session: c.sess, call: c}
	c.deadlineDone = make(chan struct{})
	c.deadlineAt = c.sess.srv.clock.Now().Add(c.timeout())
	c.mu.Lock()
	c.timer = c.sess.srv.clock.AfterFunc(c.timeout(), c.deadline)
	c.mu.Unlock()
	// Step 8: exclusive lock; waiting counts against the deadline.
	if c.rt.lock != nil {
		select {
		case c.rt.lock <- struct{}{}:
			c.lockHeld = true
		case <-ctx.Done():
			return c.settle(handlerResult{}, false)
		}
	}
	// Step 9: audit enter.
	if err := c.auditEnter(c, args); err != nil {
		if c.stop() {
			c.release()
			return nil, jsonrpc.ErrNoResponse // TIMEOUT was sent while waiting
		}
		c.release()
		return c.fail(core.NewError(core.CodeAuditEnterFailed, "the audit sink refused to record the call: "+
			err.Error()+"; the tool did not run"), true)
	}
	// Step 10: dispatch, panics recovered.
	c.sess.track(c)
	if c.answered != nil { // it may become a task: the handler runs on
		go c.runDetached(args)
		<-c.answered
		return nil, jsonrpc.ErrNoResponse
	}
	r := c.callHandler(c, args)
	c.sess.untrack(c)
	return c.settle(r, true)
}

// Value gives the handler's context its callInfo.
func (c *toolCall) Value(key any) any {
	if _, ok := key.(callInfoKey); ok {
		return &c.info
	}
	return c.Context.Value(key)
}

// Deadline reports the call's deadline to the handler.
func (c *toolCall) Deadline() (time.Time, bool) { return c.deadlineAt, true }

// timeout is the call's deadline: the tool's own or tools.defaultTimeoutMs.
func (c *toolCall) timeout() time.Duration {
	if t := c.rt.def.Timeout; t > 0 {
		return t
	}
	return time.Duration(c.sess.srv.cfg.Tools.DefaultTimeoutMs) * time.Millisecond
}

// deadline runs on the timer's goroutine when the call's time is up before
// its handler returned: it cancels the handler's context, answers TIMEOUT
// at once and writes the timeout record.
func (c *toolCall) deadline() {
	defer close(c.deadlineDone)
	c.mu.Lock()
	if c.returned {
		c.mu.Unlock()
		return
	}
	c.expired = true
	c.mu.Unlock()
	c.req.progress.end() // no progress after the TIMEOUT answer
	c.abort(errTimeout)
	ms := c.timeout().Milliseconds()
	e := c.stamp(core.NewError(core.CodeTimeout, fmt.Sprintf("the tool did not finish within its %d ms deadline; "+
		"it was asked to stop. Retry later or with less work", ms)).WithDetail("timeoutMs", ms))
	if c.answer(toolErrorResult(e)) {
		c.timeoutSent = true
		c.resetExhaustion()
		c.record(OutcomeTimeout, string(core.CodeTimeout), false)
	}
}

// stop marks the handler as returned and settles the race with the
// deadline timer. It reports whether the deadline fired first; then it
// has finished its work (answer and record) when stop returns.
func (c *toolCall) stop() bool {
	c.mu.Lock()
	c.returned = true
	expired, timer := c.expired, c.timer
	c.mu.Unlock()
	c.req.progress.end() // before the answer: no progress follows it
	if expired {
		<-c.deadlineDone
		return true
	}
	timer.Stop()
	return false
}

// settle ends the call once its handler returned (ran) or could not start
// (!ran): a normal finish, or the late end of a call that was already
// answered with TIMEOUT, cancelled by the client, or cut off by the
// connection's end.
func (c *toolCall) settle(r handlerResult, ran bool) (any, error) {
	c.stop()
	var outcome string
	switch {
	case c.timeoutSent:
		outcome = OutcomeLateCompleted
	case c.Err() != nil:
		outcome = abandonOutcome(context.Cause(c.Context))
		if outcome == OutcomeTimeout { // the deadline cancelled, but the client cancelled first
			outcome = OutcomeAborted
		}
	default:
		if !ran { // impossible: the lock wait ends only by the lock or the context
			c.release()
			return c.fail(core.NewError(core.CodeInternal, "the call ended before its tool ran"), true)
		}
		return c.finish(r)
	}
	if !ran {
		// The handler never ran. A timed-out lock wait still ends with
		// late_completed, so every timed-out call has its two records.
		c.release()
		if outcome != OutcomeLateCompleted {
			outcome = OutcomeAborted
		}
		c.record(outcome, "", true)
		return nil, jsonrpc.ErrNoResponse
	}
	c.auditExit(r, outcome)
	c.release()
	code := ""
	if outcome == OutcomeLateCompleted || outcome == OutcomeDisconnectedCompleted {
		code = errorCode(r.err) // what the handler ended with; aborted calls sent nothing
	}
	c.record(outcome, code, true)
	return nil, jsonrpc.ErrNoResponse
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
	sink := c.sess.srv.audit
	if _, nop := sink.(NopAuditSink); nop {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			c.sess.log.Error("audit sink Exit panicked", "tool", c.tool, "runId", c.runID, "panic", fmt.Sprint(p))
		}
	}()
	sink.Exit(context.Background(), ToolExitEvent{Tool: c.tool, CorrelationID: c.cid, RunID: c.runID,
		Duration: c.sess.srv.clock.Now().Sub(c.start), Result: r.value, Err: r.err, Outcome: outcome})
}

// callHandler calls the tool's handler, turning a panic into INTERNAL.
func (c *toolCall) callHandler(ctx context.Context, args json.RawMessage) (r handlerResult) {
	defer func() {
		if p := recover(); p != nil {
			c.sess.log.Error("recovered from a panic in a tool handler", "tool", c.tool, "runId", c.runID,
				"correlationId", c.cid, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			r = handlerResult{err: core.NewError(core.CodeInternal, "the tool failed unexpectedly (it panicked); "+
				"the server keeps serving. Report it to the tool's author").WithDetail("reason", "panic").WithRetryable(true),
				panicked: true}
		}
	}()
	v, err := c.rt.def.Handler(ctx, &c.req)
	return handlerResult{value: v, err: err}
}

// finish completes a call whose handler returned in time: output check
// (11), audit exit (12), release (13), wrap (14).
func (c *toolCall) finish(r handlerResult) (any, error) {
	if c.taskOf() != nil {
		if e := taskFailure(r); e != nil {
			return c.finishFailed(r, e)
		}
	} else if r.err != nil {
		if out, handled, ierr := c.sess.srv.inputOutcome(c.Context, r.err); handled {
			return c.finishInput(r, out, ierr)
		}
	}
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
	c.resetExhaustion() // before the answer: a client that saw it sees the counter reset
	if !c.answer(res) { // made by wrap's encoder
		c.record(c.unanswered(), "", true) // no answer went out
		return nil, jsonrpc.ErrNoResponse
	}
	c.record(OutcomeSuccess, "", true)
	return nil, jsonrpc.ErrNoResponse
}

// finishInput completes a stateless call whose handler asked for input
// (out, an input_required result) or needs a client capability the
// request did not declare (rpcErr, -32021).
func (c *toolCall) finishInput(r handlerResult, out any, rpcErr error) (any, error) {
	outcome, code := OutcomeInputRequired, ""
	if rpcErr != nil {
		outcome, code = OutcomeProtocolError, string(core.CodeInvalidArgument)
	}
	c.auditExit(r, outcome)
	c.release()
	c.resetExhaustion()
	var sent bool
	var je *jsonrpc.Error
	switch {
	case errors.As(rpcErr, &je):
		sent = c.answerError(je)
	case rpcErr != nil:
		sent = c.answerError(jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: "+rpcErr.Error()))
	default:
		sent = c.answerAny(out)
	}
	if !sent {
		c.record(c.unanswered(), "", true)
		return nil, jsonrpc.ErrNoResponse
	}
	c.record(outcome, code, true)
	return nil, jsonrpc.ErrNoResponse
}

// unanswered is the outcome of a call whose answer could not go out: the
// session closed first (disconnected_completed), or the client cancelled
// it (aborted).
func (c *toolCall) unanswered() string {
	if errors.Is(context.Cause(c.Context), errCancelledByClient) {
		return OutcomeAborted // the client's cancel came first
	}
	if c.sess.conn.Closed() {
		return OutcomeDisconnectedCompleted
	}
	return OutcomeAborted
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

// fail sends a tool error and writes the call's tool_error record (aborted
// when the client cancelled and got no answer). reset says whether this
// completion resets the RESOURCE_EXHAUSTED counter.
func (c *toolCall) fail(e *core.Error, reset bool) (any, error) {
	e = c.stamp(e)
	if reset { // before the answer, as in finish
		c.resetExhaustion()
	}
	if !c.answer(toolErrorResult(e)) {
		c.record(c.unanswered(), "", true)
		return nil, jsonrpc.ErrNoResponse
	}
	c.record(OutcomeToolError, string(e.Code), true)
	return nil, jsonrpc.ErrNoResponse
}

// stamp returns a copy of e carrying the call's ids.
func (c *toolCall) stamp(e *core.Error) *core.Error {
	out := *e
	out.CorrelationID, out.RunID = c.cid, c.runID
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
	if c.slotHeld.CompareAndSwap(true, false) {
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

func problemText(p schemaProblem) string {
	path := p.Path
	if path == "" {
		path = "(root)"
	}
	return "at " + path + ": " + p.Message
}
