package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/jsontext"
	"github.com/mcprt/mcprt/jsonrpc"
)

// Task-augmented tools/call. A call that may become a task (a stateless
// request that declared the tasks extension, of a tool whose TaskSupport
// is not TaskForbidden) runs its handler on a goroutine of its own, under
// a context of its own: until StartTask the request's cancellation is
// passed on to it and the call is answered as any other; from StartTask on
// the request is answered with the CreateTaskResult, its end no longer
// touches the handler, and everything the call would have answered goes
// into the task instead (see answer). The completion record and the audit
// exit are written when the handler returns, as for any call, with the
// taskId in the record.

// StartTask makes the tools/call whose handler context ctx is a task of
// the tasks extension: the client is answered at once with a
// CreateTaskResult, and what the handler returns later becomes the task's
// result, which the client fetches with tasks/get. From then on the
// handler's context is no longer the request's: it is cancelled by
// tasks/cancel (context.Cause is ErrTaskCancelled), when the task expires
// (ErrTaskExpired), and at the tool's own deadline (Tool.Timeout; without
// one the task's TTL is the only bound). RequestInput then waits for the
// client's answers through tasks/update instead of answering
// input_required.
//
// StartTask reports false, and the call simply goes on as an ordinary
// one, when it cannot become a task: the tool's TaskSupport is
// TaskForbidden, the request is of a session revision or did not declare
// the extension, or the server does not serve it. It returns an error
// when the server keeps too many tasks (RESOURCE_EXHAUSTED; the handler
// may go on without a task) or when the request ended before the task
// could be announced (the handler should return). Calling it again once
// the call is a task reports true.
func StartTask(ctx context.Context) (bool, error) {
	ci := callInfoFrom(ctx)
	if ci == nil || ci.call == nil {
		return false, nil
	}
	return ci.call.escalate()
}

// taskPossible reports whether the call may become a task.
func (c *toolCall) taskPossible(ctx context.Context) bool {
	if c.sess.srv.tasks == nil || c.rt.def.TaskSupport == TaskForbidden {
		return false // decided without looking up the request's context
	}
	r := statelessOf(ctx)
	return r != nil && declaresTasks(r.caps)
}

// detach gives a call that may become a task a handler context of its own,
// cancelled with the request's until the call becomes a task.
func (c *toolCall) detach() { c.Context = c.reply.detach() }

// detach makes the handler's context of a call that may become a task and
// returns it: cancelled with the request's until stopProp.
func (r *callReply) detach() context.Context {
	hctx, cancel := context.WithCancelCause(context.WithoutCancel(r.rpc))
	rpc := r.rpc
	r.cancelHandler = cancel
	r.stopProp = context.AfterFunc(rpc, func() { cancel(context.Cause(rpc)) })
	r.answered = make(chan struct{})
	return hctx
}

// runDetached runs the handler of a call that may become a task, and ends
// the call when it returns.
func (c *toolCall) runDetached(args json.RawMessage) {
	r := c.sess.srv.callHandler(c, c.rt, &c.req)
	c.sess.untrack(c)
	_, _ = c.settle(r, true)
	c.reply.closeAnswered()
	c.reply.stopProp()
	c.reply.cancelHandler(nil)
}

// closeAnswered lets the request's handler return: the request has its
// answer (or never gets one).
func (r *callReply) closeAnswered() {
	if r.answered != nil {
		r.answerOnce.Do(func() { close(r.answered) })
	}
}

// taskOf returns the call's task, or nil while it is an ordinary call.
func (c *toolCall) taskOf() *task {
	c.state.mu.Lock()
	defer c.state.mu.Unlock()
	return c.state.task
}

// abort cancels the handler's context with cause.
func (r *callReply) abort(cause error) {
	if r.cancelHandler != nil {
		r.cancelHandler(cause)
		return
	}
	jsonrpc.CancelRequest(r.rpc, cause)
}

// answer gives the call its result: the request's response, or once the
// call is a task, the task's result. It reports whether the answer was
// taken (false when the client cancelled the request or the task, or the
// connection closed).
func (c *toolCall) answer(result json.RawMessage) bool {
	if t := c.taskOf(); t != nil {
		return c.sess.srv.tasks.complete(t, result)
	}
	ok := jsonrpc.Respond(c.reply.rpc, jsonrpc.CompactJSON(result))
	c.reply.closeAnswered()
	return ok
}

// escalate makes the call a task (see StartTask).
func (c *toolCall) escalate() (bool, error) {
	if c.reply.answered == nil {
		return false, nil
	}
	st := c.sess.srv.tasks
	c.state.mu.Lock()
	switch {
	case c.state.task != nil:
		c.state.mu.Unlock()
		return true, nil
	case c.state.expired || c.state.returned:
		c.state.mu.Unlock()
		return false, causeOr(c.Context, errTimeout)
	case !c.reply.stopProp(): // the request ended first: its cause cancels the handler
		c.state.mu.Unlock()
		return false, causeOr(c.Context, context.Cause(c.reply.rpc))
	}
	t, err := st.create(c.reply.cancelHandler)
	if err != nil {
		rpc, cancel := c.reply.rpc, c.reply.cancelHandler
		c.reply.stopProp = context.AfterFunc(rpc, func() { cancel(context.Cause(rpc)) })
		c.state.mu.Unlock()
		return false, err
	}
	c.state.task = t
	if c.rt.def.Timeout <= 0 {
		c.sess.srv.deadlines.remove(c) // no deadline of its own: the task's TTL bounds it
	}
	c.state.mu.Unlock()
	c.req.progress.end() // the request is answered now
	c.sess.untrack(c)    // a session's end no longer ends the call
	if r := statelessOf(c.Context); r != nil && r.inputs != nil {
		r.inputs.attach(st, t)
	}
	body, _ := json.Marshal(st.wire(t, false))
	sent := jsonrpc.Respond(c.reply.rpc, jsonrpc.CompactJSON(body))
	c.reply.closeAnswered()
	if !sent {
		cause := causeOr(c.reply.rpc, ErrSessionClosed)
		st.remove(t)
		c.reply.cancelHandler(cause)
		return false, cause
	}
	c.sess.log.LogAttrs(context.Background(), slog.LevelInfo, "tool call continues as a task",
		slog.String("correlationId", c.cid), slog.String("runId", c.runID), slog.String("tool", c.tool),
		slog.String("taskId", t.id))
	return true, nil
}

// taskFailure is the JSON-RPC error a task's handler result ends the task
// with (status failed), or nil when it is the tool's result or tool error
// (status completed): a panic is a failure of the server, a missing client
// capability one of the request.
func taskFailure(r handlerResult) *jsonrpc.Error {
	if r.panicked {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the tool failed unexpectedly " +
			"(it panicked); the server keeps serving. Report it to the tool's author",
			Data: map[string]any{"reason": "panic"}}
	}
	var mc *MissingCapabilityError
	if errors.As(r.err, &mc) {
		return mc.rpcError()
	}
	return nil
}

// finishFailed ends a task whose handler failed below the tool (see
// taskFailure): status failed, outcome protocol_error.
func (c *toolCall) finishFailed(r handlerResult, e *jsonrpc.Error) (any, error) {
	code := string(core.CodeInternal)
	if e.Code == CodeMissingClientCapability {
		code = string(core.CodeInvalidArgument)
	}
	c.auditExit(r, OutcomeProtocolError)
	c.release()
	return c.exit(nil, e, OutcomeProtocolError, code)
}

// refuse answers a call with a JSON-RPC error before its handler runs.
func (c *toolCall) refuse(e *jsonrpc.Error) (any, error) {
	return c.exit(nil, e, OutcomeProtocolError, string(core.CodeInvalidArgument))
}

// taskRequiredError is the -32021 of a call of a TaskRequired tool whose
// request did not declare the tasks extension, or nil.
func (c *toolCall) taskRequiredError(ctx context.Context) *jsonrpc.Error {
	if c.rt.def.TaskSupport != TaskRequired || statelessOf(ctx) == nil || c.sess.srv.tasks == nil || c.taskPossible(ctx) {
		return nil
	}
	return tasksRequired("the tool " + jsontext.Quote(c.tool))
}

// attach makes the input round of a call that became a task wait for
// tasks/update instead of answering input_required.
func (in *inputRound) attach(st *taskStore, t *task) {
	in.mu.Lock()
	in.store, in.task = st, t
	in.pending = nil
	in.mu.Unlock()
}

// encodeInputRequests encodes input requests as the members of
// inputRequests: {"method": ..., "params": ...}.
func encodeInputRequests(reqs map[string]InputRequest) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(reqs))
	for k, req := range reqs {
		params, err := json.Marshal(req.Params)
		if err != nil {
			return nil, errors.New("the input request " + jsontext.Quote(k) + " cannot be encoded: " + err.Error())
		}
		out[k] = json.RawMessage(`{"method":` + jsontext.Quote(req.Method) + `,"params":` + string(params) + `}`)
	}
	return out, nil
}
