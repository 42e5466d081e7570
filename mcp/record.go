package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/jsontext"
)

// record writes the call's completion record. final records
// (every outcome but timeout) are written at most once per call.
func (c *toolCall) record(outcome, code string, final bool) {
	if final && !c.rec.final.CompareAndSwap(false, true) {
		return
	}
	level := slog.LevelInfo
	switch outcome {
	case OutcomeTimeout, OutcomeLateCompleted, OutcomeAborted, OutcomeDisconnectedCompleted:
		level = slog.LevelWarn
	}
	var buf [8]core.Field
	fields := append(buf[:0],
		core.StringField("correlationId", c.cid),
		core.StringField("runId", c.runID),
		core.StringField("tool", c.tool),
		core.IntField("durationMs", c.sess.srv.clock.Now().Sub(c.start).Milliseconds()),
		core.StringField("outcome", outcome))
	if code != "" {
		fields = append(fields, core.StringField("errorCode", code))
	}
	fields = append(fields, core.IntField("payloadBytes", int64(c.payload)))
	c.state.mu.Lock()
	if t := c.state.task; t != nil {
		fields = append(fields, core.StringField("taskId", t.id))
	}
	c.state.mu.Unlock()
	core.LogFields(context.Background(), c.sess.log, level, "tool call completed", fields...)
}

// protocolErrorRecord writes the record of a tools/call that failed at
// step 1 or 2: no runId.
func (sess *Session) protocolErrorRecord(tool, cid string) {
	if cid == "" {
		cid = sess.cid
	}
	core.LogFields(context.Background(), sess.log, slog.LevelInfo, "tool call completed",
		core.StringField("correlationId", cid),
		core.StringField("tool", tool),
		core.IntField("durationMs", 0),
		core.StringField("outcome", OutcomeProtocolError),
		core.IntField("payloadBytes", 0))
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

// The parts around the JSON of a result that wrap sends as a text block.
const (
	wrapTextPrefix    = `{"content":[{"type":"text","text":`
	wrapStructured    = `,"structuredContent":`
	wrapTextSuffix    = `}]`
	wrapSuccessSuffix = `,"isError":false}`
)

// wrap checks the handler's result against the outputSchema and encodes
// the CallToolResult. The result is encoded under tools.maxResultBytes:
// one that would pass it fails as soon as it does, so memory for it stays
// within about twice the limit (its JSON, then the CallToolResult holding
// it, built in a buffer of exactly its size).
// wrapString wraps a Go string result: its text is the string itself, not
// its JSON, and there is no structuredContent (a string is no object).
func (c *toolCall) wrapString(str string, limit int) (json.RawMessage, *core.Error) {
	if c.rt.output != nil { // a string never satisfies an object outputSchema
		js, _ := json.Marshal(str)
		if e := c.checkOutput(js); e != nil {
			return nil, e
		}
	}
	size := len(wrapTextPrefix) + jsontext.QuotedLenNoHTML(str) + len(wrapTextSuffix) + len(wrapSuccessSuffix)
	if size > limit {
		return nil, resultTooLarge(limit, size)
	}
	out := make([]byte, 0, size)
	out = append(out, wrapTextPrefix...)
	out = jsontext.AppendStringNoHTML(out, str)
	out = append(out, wrapTextSuffix...)
	return append(out, wrapSuccessSuffix...), nil
}

func (c *toolCall) wrap(r handlerResult) (json.RawMessage, *core.Error) {
	if r.err != nil {
		var ce *core.Error
		if isCoreError(r.err, &ce) {
			return nil, ce
		}
		return nil, core.NewError(core.CodeInternal, r.err.Error()).WithDetail("reason", "handler_error")
	}
	structured := c.req.ProtocolVersion >= Version20250618
	switch v := r.value.(type) {
	case *CallToolResult:
		if v == nil {
			return nil, notRetryable(core.NewError(core.CodeInternal, "the tool returned a nil *CallToolResult").
				WithDetail("reason", "result_not_serializable"))
		}
		return c.encodeFull(*v, structured)
	case CallToolResult:
		return c.encodeFull(v, structured)
	}
	limit := c.sess.srv.opts.Limits.MaxResultBytes
	if str, ok := r.value.(string); ok {
		return c.wrapString(str, limit)
	}
	e := getEncoder()
	defer putEncoder(e)
	// The text block quotes the JSON, which is at least 2 bytes longer.
	js, err := e.encodeLimited(r.value, limit-len(wrapTextPrefix)-len(wrapTextSuffix)-len(wrapSuccessSuffix)-2)
	if err != nil {
		return nil, resultEncodingError("result", err, limit, 0)
	}
	if !c.rt.trustsOutput(r.value) {
		if e := c.checkOutput(js); e != nil {
			return nil, e
		}
	}
	structured = structured && isObject(js)
	size := len(wrapTextPrefix) + jsontext.QuotedLenBytesNoHTML(js) + len(wrapTextSuffix) + len(wrapSuccessSuffix)
	if structured {
		size += len(wrapStructured) + len(js)
	}
	if size > limit {
		return nil, resultTooLarge(limit, size)
	}
	out := make([]byte, 0, size)
	out = append(out, wrapTextPrefix...)
	out = jsontext.AppendBytesNoHTML(out, js)
	out = append(out, wrapTextSuffix...)
	if structured {
		out = append(out, wrapStructured...)
		out = append(out, js...)
	}
	return append(out, wrapSuccessSuffix...), nil
}

// The members of a CallToolResult as encoding/json writes them, in its
// field order: content, structuredContent (omitted when nil), isError,
// _meta (omitted when empty).
const (
	fullContent    = `{"content":`
	fullStructured = `,"structuredContent":`
	fullIsError    = `,"isError":`
	fullMeta       = `,"_meta":`
)

// encodeFull encodes a handler's own CallToolResult under
// tools.maxResultBytes, byte for byte as encoding/json writes it without
// HTML escaping. Content blocks are encoded by their MarshalJSON, each
// whole, so a result whose text, data and URIs alone pass the limit is
// refused before any is encoded.
//
// structuredContent is encoded once: when the tool has an outputSchema
// (and the result is no tool error), those bytes are checked against it
// (schemafast_raw.go reads them in one pass when the fast validator
// models the schema) and then copied into the answer as they are, so the
// value is neither encoded twice nor decoded. The encoder's buffer holds
// structuredContent, then content, then _meta; the answer is assembled
// from them in a buffer of exactly its size.
func (c *toolCall) encodeFull(v CallToolResult, structured bool) (json.RawMessage, *core.Error) {
	limit := c.sess.srv.opts.Limits.MaxResultBytes
	if v.Content == nil {
		v.Content = []Content{}
	}
	v.Content = contentForRevision(v.Content, c.req.ProtocolVersion) // nothing newer than the revision
	check := c.rt.output != nil && !v.IsError
	send := structured && v.StructuredContent != nil
	e := getEncoder()
	defer putEncoder(e)
	e.out.reset(limit)
	// Depth 2: where encoding the whole result meets the value, below the
	// result and its interface member.
	if check {
		if err := e.value(reflect.ValueOf(v.StructuredContent), 2); err != nil {
			return nil, resultEncodingError("structuredContent", err, limit, 0)
		}
		if ce := c.checkOutput(e.out.buf); ce != nil {
			return nil, ce
		}
	}
	if n := contentBytes(v.Content); n > limit {
		return nil, resultTooLarge(limit, 0)
	}
	if send && !check {
		if err := e.value(reflect.ValueOf(v.StructuredContent), 2); err != nil {
			return nil, resultEncodingError("result", err, limit, 0)
		}
	}
	sc := len(e.out.buf) // e.out.buf[:sc] is structuredContent, if encoded
	isError := "false}"
	if v.IsError {
		isError = "true}"
	}
	size := len(fullContent) + len(fullIsError) + len(isError) // + content and the optional members
	if send {
		size += len(fullStructured) + sc
	}
	if len(v.Meta) > 0 {
		size += len(fullMeta)
	}
	// From here the buffer's limit is the answer's: what it holds beyond
	// structuredContent, plus what the answer adds around it.
	e.out.limit = sc + limit - size // below sc when size passes limit: the first write fails
	if err := e.value(reflect.ValueOf(v.Content), 1); err != nil {
		return nil, resultEncodingError("result", err, limit, 0)
	}
	ct := len(e.out.buf) // e.out.buf[sc:ct] is content
	if len(v.Meta) > 0 {
		if err := e.value(reflect.ValueOf(v.Meta), 1); err != nil {
			return nil, resultEncodingError("result", err, limit, 0)
		}
	}
	buf := e.out.buf
	size += len(buf) - sc
	out := make([]byte, 0, size)
	out = append(out, fullContent...)
	out = append(out, buf[sc:ct]...)
	if send {
		out = append(out, fullStructured...)
		out = append(out, buf[:sc]...)
	}
	out = append(out, fullIsError...)
	if len(v.Meta) > 0 {
		out = append(out, isError[:len(isError)-1]...)
		out = append(out, fullMeta...)
		out = append(out, buf[ct:]...)
		return append(out, '}'), nil
	}
	return append(out, isError...), nil
}

// contentBytes is a lower bound on the encoded size of blocks: the bytes
// of their text, data, URIs and embedded resources.
func contentBytes(blocks []Content) int {
	n := 0
	for _, b := range blocks {
		n += len(b.Text) + len(b.Data) + len(b.URI)
		if r := b.Resource; r != nil {
			n += len(r.Text) + len(r.Blob) + len(r.URI)
		}
	}
	return n
}

// resultEncodingError is the tool error for a result (what names the part)
// that could not be encoded: too large, or not serializable.
func resultEncodingError(what string, err error, limit, size int) *core.Error {
	if errors.Is(err, errOverLimit) {
		return resultTooLarge(limit, size)
	}
	return notRetryable(core.NewError(core.CodeInternal, "the tool's "+what+" cannot be encoded as JSON: "+err.Error()).
		WithDetail("reason", "result_not_serializable"))
}

// notRetryable marks e as an error that sending the same call again
// cannot fix: the tool would return the same result.
func notRetryable(e *core.Error) *core.Error {
	e.Retryable = false
	return e
}

// resultTooLarge is the tool error for a result over tools.maxResultBytes;
// size is the encoded size when known, else 0.
func resultTooLarge(limit, size int) *core.Error {
	msg := "the tool's result is over the limit of " + itoa(limit) + " bytes (tools.maxResultBytes)"
	if size > 0 {
		msg = "the tool's result is " + itoa(size) + " bytes, over the limit of " + itoa(limit) + " (tools.maxResultBytes)"
	}
	e := core.NewError(core.CodeInternal, msg).WithDetail("reason", "result_too_large").WithDetail("limit", limit)
	if size > 0 {
		e = e.WithDetail("resultBytes", size)
	}
	return notRetryable(e)
}

// checkOutput validates a result against the tool's outputSchema.
func (c *toolCall) checkOutput(js []byte) *core.Error {
	if c.rt.output == nil {
		return nil
	}
	if problems := c.rt.output.validate(js); len(problems) > 0 {
		return notRetryable(core.NewError(core.CodeInternal, "the tool's result does not match its outputSchema: "+
			problemText(problems[0])).WithDetail("reason", "output_schema_violation").WithDetail("errors", problems))
	}
	return nil
}
