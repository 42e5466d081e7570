package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcprt/mcprt/internal/jsontext"
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

// toolName reads params.name: the registered tool's own name string when
// it names one without escapes (no allocation), else the decoded string.
func toolName(s *Server, raw json.RawMessage) (string, bool) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		if rt, ok := s.tools.getBytes(raw[1 : n-1]); ok {
			return rt.def.Name, true
		}
	}
	return jsontext.String(raw)
}

// handleCall is the tools/call pipeline, steps 2 to 14 (step 1, the state
// gate, is Route's). Its return value is the answer, given through exit,
// which writes the completion record once the engine says whether the
// answer went out; only the truly asynchronous answers (TIMEOUT at the
// deadline, a call that may become a task) go through jsonrpc.Respond.
func (sess *Session) handleCall(ctx context.Context, req *jsonrpc.Request) (any, error) {
	s := sess.srv
	// Step 2: params shape.
	p, perr := parseCallParams(req.Params)
	if perr != nil {
		sess.protocolErrorRecord("", clientCorrelationID(req.Params))
		return nil, perr
	}
	name, ok := toolName(s, p.Name)
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
	c := &toolCall{callID: callID{sess: sess, tool: jsontext.Clip(name, jsontext.MaxEcho), start: s.clock.Now(),
		runID: s.ids.NewID(), cid: metaCorrelationID(p.Meta)}, Context: ctx, reply: callReply{rpc: ctx}}
	c.hold.slot.slots = s.slots
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
	if e := s.payloadError(c.payload); e != nil {
		if rt := s.tool(name); rt == nil || !rt.def.Observer { // observers neither raise nor reset it
			s.exhausted.Inc()
		}
		return c.fail(e, false)
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
	if e := authorize(ctx, c.rt, &c.req); e != nil {
		return c.fail(e, true)
	}
	// Step 6: concurrency slot, without waiting.
	if !c.rt.def.Observer && !c.hold.slot.take() {
		s.exhausted.Inc()
		sess.log.Warn("tools/call rejected: no concurrency slot free; clients should retry with exponential backoff and jitter",
			"tool", name, "correlationId", c.cid, "runId", c.runID, "maxConcurrentExecutions", s.slots.Max())
		return c.fail(s.slotsBusy(), false)
	}
	// Step 7: input validation with the precompiled validator.
	if e := inputError(c.rt, &c.req, c.payload, "the tool's inputSchema"); e != nil {
		c.release()
		return c.fail(e, true)
	}
	// Steps 8-14.
	return c.run(ctx, args)
}

// run takes the exclusive lock, enters the audit, and runs the handler on
// this goroutine under the deadline (steps 8-14). The deadline is queued
// with the server's (deadlines.go): when it passes first, the client gets TIMEOUT at once (jsonrpc.Respond)
// while the handler runs on, holding its slot, until it returns.
func (c *toolCall) run(ctx context.Context, args json.RawMessage) (any, error) {
	if c.taskPossible(ctx) {
		c.detach()
		ctx = c.Context
	}
	c.info = callInfo{runID: c.runID, correlationID: c.cid, tool: c.tool, session: c.sess, call: c, slot: &c.hold.slot}
	c.state.deadlineDone.Add(1) // done by deadline; waited for only when it fired
	now := c.sess.srv.clock.Now()
	c.state.at = now.Add(c.timeout())
	c.sess.srv.deadlines.add(c, now)
	// Step 8: exclusive lock; waiting counts against the deadline.
	if c.rt.lock != nil {
		select {
		case c.rt.lock <- struct{}{}:
			c.hold.lockHeld = true
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
	if c.reply.answered != nil { // it may become a task: the handler runs on
		go c.runDetached(args)
		<-c.reply.answered
		return nil, jsonrpc.ErrNoResponse
	}
	r := c.sess.srv.callHandler(c, c.rt, &c.req)
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
func (c *toolCall) Deadline() (time.Time, bool) { return c.state.at, true }

// timeout is the call's deadline: the tool's own or tools.defaultTimeoutMs.
func (c *toolCall) timeout() time.Duration { return c.sess.srv.toolTimeout(c.rt) }

// deadline runs on the deadline queue's timer when the call's time is up before
// its handler returned: it cancels the handler's context, answers TIMEOUT
// at once and writes the timeout record.
func (c *toolCall) deadline() {
	defer c.state.deadlineDone.Done()
	if !c.state.expire() {
		return
	}
	c.req.progress.end() // no progress after the TIMEOUT answer
	c.reply.abort(errTimeout)
	e := c.stamp(timeoutError("the tool", c.timeout()))
	if c.answer(toolErrorResult(e)) {
		c.state.timeoutSent = true
		c.resetExhaustion()
		c.record(OutcomeTimeout, string(core.CodeTimeout), false)
	}
}

// stop marks the handler as returned and settles the race with the
// deadline. It reports whether the deadline fired first; then it has
// finished its work (answer and record) when stop returns.
func (c *toolCall) stop() bool {
	expired := c.state.handlerReturned()
	c.req.progress.end() // before the answer: no progress follows it
	if expired {
		c.state.deadlineDone.Wait()
		return true
	}
	c.sess.srv.deadlines.remove(c)
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
	case c.state.timeoutSent:
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
func (id *callID) auditEnter(ctx context.Context, args json.RawMessage) (err error) {
	sink := id.sess.srv.audit
	if _, nop := sink.(NopAuditSink); nop {
		return nil
	}
	_, err = core.Guard(func() (struct{}, error) {
		return struct{}{}, sink.Enter(ctx, ToolEnterEvent{Tool: id.tool, Args: append(json.RawMessage(nil), args...),
			Time: id.start, CorrelationID: id.cid, RunID: id.runID})
	})
	var pe *core.PanicError
	if errors.As(err, &pe) {
		return fmt.Errorf("audit sink panicked: %v", pe.Value)
	}
	return err
}

// auditExit calls the sink's Exit; its failure is logged, never returned.
func (id *callID) auditExit(r handlerResult, outcome string) {
	sink := id.sess.srv.audit
	if _, nop := sink.(NopAuditSink); nop {
		return
	}
	_, err := core.Guard(func() (struct{}, error) {
		sink.Exit(context.Background(), ToolExitEvent{Tool: id.tool, CorrelationID: id.cid, RunID: id.runID,
			Duration: id.sess.srv.clock.Now().Sub(id.start), Result: r.value, Err: r.err, Outcome: outcome})
		return struct{}{}, nil
	})
	if pe := (*core.PanicError)(nil); errors.As(err, &pe) {
		id.sess.log.Error("audit sink Exit panicked", "tool", id.tool, "runId", id.runID, "panic", fmt.Sprint(pe.Value))
	}
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
	return c.exit(res, nil, OutcomeSuccess, "")
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
	var je *jsonrpc.Error
	switch {
	case errors.As(rpcErr, &je):
		return c.exit(nil, je, outcome, code)
	case rpcErr != nil:
		return c.exit(nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: "+rpcErr.Error()), outcome, code)
	}
	return c.exitWith(nil, out, nil, outcome, code)
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
	return c.exit(toolErrorResult(e), nil, OutcomeToolError, string(e.Code))
}

func (id *callID) resetExhaustion() {
	if id.rt == nil || !id.rt.def.Observer {
		id.sess.srv.exhausted.Reset()
	}
}

// release gives back the exclusive lock and the slot (step 13).
func (c *toolCall) release() { c.hold.release(c.rt.lock) }

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
