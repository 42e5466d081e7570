package mcp

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/mcprt/mcprt/core"
)

// record writes the call's completion record. final records
// (every outcome but timeout) are written at most once per call.
func (c *toolCall) record(outcome, code string, final bool) {
	if final && !c.finalRecorded.CompareAndSwap(false, true) {
		return
	}
	level := slog.LevelInfo
	switch outcome {
	case OutcomeTimeout, OutcomeLateCompleted, OutcomeAborted, OutcomeDisconnectedCompleted:
		level = slog.LevelWarn
	}
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs,
		slog.String("correlationId", c.cid),
		slog.String("runId", c.runID),
		slog.String("tool", c.tool),
		slog.Int64("durationMs", c.sess.srv.clock.Now().Sub(c.start).Milliseconds()),
		slog.String("outcome", outcome))
	if code != "" {
		attrs = append(attrs, slog.String("errorCode", code))
	}
	attrs = append(attrs, slog.Int("payloadBytes", c.payload))
	c.sess.log.LogAttrs(context.Background(), level, "tool call completed", attrs...)
}

// protocolErrorRecord writes the record of a tools/call that failed at
// step 1 or 2: no runId.
func (sess *Session) protocolErrorRecord(tool, cid string) {
	if cid == "" {
		cid = sess.cid
	}
	sess.log.LogAttrs(context.Background(), slog.LevelInfo, "tool call completed",
		slog.String("correlationId", cid),
		slog.String("tool", tool),
		slog.Int64("durationMs", 0),
		slog.String("outcome", OutcomeProtocolError),
		slog.Int("payloadBytes", 0))
}

// track remembers a call whose handler is running, for shutdown.
func (sess *Session) track(c *toolCall) {
	sess.mu.Lock()
	sess.calls[c] = struct{}{}
	sess.mu.Unlock()
}

func (sess *Session) untrack(c *toolCall) {
	sess.mu.Lock()
	delete(sess.calls, c)
	sess.mu.Unlock()
}

// abandonCalls writes the aborted record of every call whose handler is
// still running when the shutdown time is up.
func (sess *Session) abandonCalls() {
	sess.mu.Lock()
	calls := make([]*toolCall, 0, len(sess.calls))
	for c := range sess.calls {
		calls = append(calls, c)
	}
	sess.mu.Unlock()
	for _, c := range calls {
		c.record(OutcomeAborted, "", true)
	}
}

// wrap checks the handler's result against the outputSchema and encodes
// the CallToolResult (steps 11 and 14).
func (c *toolCall) wrap(r handlerResult) (json.RawMessage, *core.Error) {
	if r.err != nil {
		var ce *core.Error
		if isCoreError(r.err, &ce) {
			return nil, ce
		}
		return nil, core.NewError(core.CodeInternal, r.err.Error()).WithDetail("reason", "handler_error")
	}
	structured := c.sess.ProtocolVersion() >= Version20250618
	var out []byte
	switch v := r.value.(type) {
	case *CallToolResult:
		if v == nil {
			return nil, core.NewError(core.CodeInternal, "the tool returned a nil *CallToolResult").
				WithDetail("reason", "result_not_serializable")
		}
		return c.encodeFull(*v, structured)
	case CallToolResult:
		return c.encodeFull(v, structured)
	default:
		e := getEncoder()
		defer putEncoder(e)
		js, err := e.encode(v)
		if err != nil {
			return nil, core.NewError(core.CodeInternal, "the tool's result cannot be encoded as JSON: "+err.Error()).
				WithDetail("reason", "result_not_serializable")
		}
		if e := c.checkOutput(js); e != nil {
			return nil, e
		}
		structured = structured && isObject(js)
		size := 64 + len(js) + len(js)/8
		if structured {
			size += len(js)
		}
		out = make([]byte, 0, size)
		out = append(out, `{"content":[{"type":"text","text":`...)
		out = appendJSONString(out, js)
		out = append(out, `}]`...)
		if structured {
			out = append(out, `,"structuredContent":`...)
			out = append(out, js...)
		}
		out = append(out, `,"isError":false}`...)
	}
	return c.checkSize(out)
}

// encodeFull encodes a handler's own CallToolResult.
func (c *toolCall) encodeFull(v CallToolResult, structured bool) (json.RawMessage, *core.Error) {
	if v.Content == nil {
		v.Content = []Content{}
	}
	if c.rt.output != nil && !v.IsError {
		js, err := marshalCompact(v.StructuredContent)
		if err != nil {
			return nil, core.NewError(core.CodeInternal, "the tool's structuredContent cannot be encoded as JSON: "+
				err.Error()).WithDetail("reason", "result_not_serializable")
		}
		if e := c.checkOutput(js); e != nil {
			return nil, e
		}
	}
	if !structured {
		v.StructuredContent = nil
	}
	out, err := marshalCompact(v)
	if err != nil {
		return nil, core.NewError(core.CodeInternal, "the tool's result cannot be encoded as JSON: "+err.Error()).
			WithDetail("reason", "result_not_serializable")
	}
	return c.checkSize(out)
}

// checkOutput validates a result against the tool's outputSchema.
func (c *toolCall) checkOutput(js []byte) *core.Error {
	if c.rt.output == nil {
		return nil
	}
	if problems := c.rt.output.validate(js); len(problems) > 0 {
		return core.NewError(core.CodeInternal, "the tool's result does not match its outputSchema: "+
			problemText(problems[0])).WithDetail("reason", "output_schema_violation").WithDetail("errors", problems)
	}
	return nil
}

// checkSize enforces tools.maxResultBytes on the encoded result.
func (c *toolCall) checkSize(out []byte) (json.RawMessage, *core.Error) {
	if limit := c.sess.srv.cfg.Tools.MaxResultBytes; len(out) > limit {
		return nil, core.NewError(core.CodeInternal, "the tool's result is "+itoa(len(out))+
			" bytes, over the limit of "+itoa(limit)+" (tools.maxResultBytes)").
			WithDetail("reason", "result_too_large").WithDetail("limit", limit).WithDetail("resultBytes", len(out))
	}
	return out, nil
}
