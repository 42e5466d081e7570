package mcp

import (
	"encoding/json"

	"github.com/mcprt/mcprt/jsonrpc"
)

// exit is a tools/call's one exit once the call has its answer: result (a
// CallToolResult's JSON, or an input_required result) or rpcErr, and what
// the completion record says when the answer reaches the client (outcome,
// and code for an error).
//
// The answer is exit's return value, which the call's handler returns to
// the engine; the record is written when the engine reports whether the
// answer went out (Answered). Two cases answer otherwise, because their
// answer is asynchronous: a call that became a task completes the task,
// and a call that may still become one, whose handler runs on a goroutine
// of its own, answers its waiting request through jsonrpc.Respond.
func (c *toolCall) exit(raw json.RawMessage, rpcErr *jsonrpc.Error, outcome, code string) (any, error) {
	return c.exitWith(raw, nil, rpcErr, outcome, code)
}

// exitWith is exit with the answer given as raw JSON (the pipeline's, sent
// as it is) or as a value the engine encodes (an input_required result).
func (c *toolCall) exitWith(raw json.RawMessage, value any, rpcErr *jsonrpc.Error, outcome, code string) (any, error) {
	if t := c.taskOf(); t != nil {
		st := c.sess.srv.tasks
		var taken bool
		if rpcErr != nil {
			taken = st.fail(t, rpcErr)
		} else {
			taken = st.complete(t, raw)
		}
		c.recordAnswer(taken, outcome, code)
		return nil, jsonrpc.ErrNoResponse
	}
	if c.reply.answered != nil {
		var sent bool
		if rpcErr != nil {
			sent = jsonrpc.RespondError(c.reply.rpc, rpcErr)
		} else {
			sent = jsonrpc.Respond(c.reply.rpc, answerValue(raw, value))
		}
		c.reply.closeAnswered()
		c.recordAnswer(sent, outcome, code)
		return nil, jsonrpc.ErrNoResponse
	}
	c.rec.outcome, c.rec.code = outcome, code
	if !jsonrpc.OnAnswered(c.reply.rpc, c) {
		c.Answered(true) // not a connection's request: nobody to tell us
	}
	if rpcErr != nil {
		return nil, rpcErr
	}
	return answerValue(raw, value), nil
}

// Answered writes the completion record of a call whose answer was its
// handler's return value, once the engine settled it (jsonrpc.Answerer).
func (c *toolCall) Answered(sent bool) { c.recordAnswer(sent, c.rec.outcome, c.rec.code) }

// recordAnswer writes the final record: outcome and code when the answer
// went out, else what kept it from the client.
func (c *toolCall) recordAnswer(sent bool, outcome, code string) {
	if !sent {
		c.record(c.unanswered(), "", true)
		return
	}
	c.record(outcome, code, true)
}

// answerValue is the answer as the engine encodes it: value, else raw,
// which the pipeline made compact.
func answerValue(raw json.RawMessage, value any) any {
	if value != nil {
		return value
	}
	return jsonrpc.CompactJSON(raw)
}
