package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"sync"
)

const (
	resultPrefix = `{"jsonrpc":"2.0","id":`
	resultMember = `,"result":`
	errorMember  = `,"error":`
)

// CompactJSON is a handler result that is already valid, compact JSON (no
// whitespace outside strings), as an encoder made it: the connection sends
// it without checking it again. Anything else belongs in a json.RawMessage,
// which is validated and compacted.
type CompactJSON []byte

// encodeResult encodes a success response ending in "\n". A
// json.RawMessage result (the common case) is validated and compacted
// straight into a frame of the right size.
func encodeResult(id ID, result any) ([]byte, error) {
	if c, ok := result.(CompactJSON); ok && len(c) > 0 {
		frame := make([]byte, 0, len(resultPrefix)+len(id.raw)+len(resultMember)+len(c)+2)
		frame = append(frame, resultPrefix...)
		frame = id.appendJSON(frame)
		frame = append(frame, resultMember...)
		frame = append(frame, c...)
		return append(frame, "}\n"...), nil
	}
	if raw, ok := result.(json.RawMessage); ok && len(raw) > 0 {
		if !json.Valid(raw) {
			return nil, errors.New("jsonrpc: the result is not valid JSON")
		}
		frame := make([]byte, 0, len(resultPrefix)+len(id.raw)+len(resultMember)+len(raw)+2)
		frame = append(frame, resultPrefix...)
		frame = id.appendJSON(frame)
		frame = append(frame, resultMember...)
		frame = appendCompact(frame, raw)
		return append(frame, "}\n"...), nil
	}
	var buf bytes.Buffer
	buf.Grow(64)
	buf.WriteString(resultPrefix)
	buf.Write(id.appendJSON(buf.AvailableBuffer()))
	buf.WriteString(resultMember)
	if err := appendValue(&buf, result); err != nil {
		return nil, err
	}
	buf.WriteString("}\n")
	return buf.Bytes(), nil
}

// appendCompact appends the valid JSON text src without the whitespace
// outside its strings.
func appendCompact(dst, src []byte) []byte {
	inString, escaped := false, false
	start := 0
	for i, c := range src {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, src[start:i]...)
			start = i + 1
		}
	}
	return append(dst, src[start:]...)
}

// appendValue writes v as compact JSON: a json.RawMessage is compacted (and
// so validated), anything else is encoded without HTML escaping.
func appendValue(buf *bytes.Buffer, v any) error {
	switch r := v.(type) {
	case json.RawMessage:
		if len(r) == 0 {
			buf.WriteString("null")
			return nil
		}
		return json.Compact(buf, r)
	case nil:
		buf.WriteString("null")
		return nil
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	return nil
}

// encodeError encodes an error response ending in "\n". err that is not an
// *Error becomes -32603. A nil Data gets {"correlationId": ...}.
func (c *Conn) encodeError(id ID, params json.RawMessage, err error) []byte {
	var e *Error
	if !errors.As(err, &e) {
		c.log.Error("request failed", "error", err.Error())
		e = NewError(CodeInternalError, "Internal error: "+err.Error())
	}
	if e.Code == 0 {
		e = &Error{Code: CodeInternalError, Message: e.Message, Data: e.Data}
	}
	out := *e
	if out.Data == nil {
		out.Data = map[string]string{"correlationId": c.correlationFor(params)}
	}
	var buf bytes.Buffer
	buf.WriteString(resultPrefix)
	buf.Write(id.appendJSON(buf.AvailableBuffer()))
	buf.WriteString(errorMember)
	if err := appendValue(&buf, &out); err != nil {
		// Data could not be encoded: fall back to the bare error.
		c.log.Error("could not encode error data", "error", err)
		buf.Reset()
		buf.WriteString(resultPrefix)
		buf.Write(id.appendJSON(buf.AvailableBuffer()))
		buf.WriteString(errorMember)
		_ = appendValue(&buf, &Error{Code: out.Code, Message: out.Message,
			Data: map[string]string{"correlationId": c.correlationFor(params)}})
	}
	buf.WriteString("}\n")
	return buf.Bytes()
}

// batch collects the responses to the elements of one batch and writes
// them as one array line when the last one is in.
type batch struct {
	c       *Conn
	mu      sync.Mutex
	pending int      // guarded by mu
	frames  [][]byte // guarded by mu
	// closeAfter closes the connection once the batch's answer is written
	// (a shutdown inside a batch); guarded by mu.
	closeAfter bool
}

// closeWhenAnswered makes the batch close the connection after its answer
// is written, so that the answer (which holds a shutdown's {}) still goes
// out.
func (b *batch) closeWhenAnswered() {
	b.mu.Lock()
	b.closeAfter = true
	b.mu.Unlock()
}

// expect announces one more response (or deliberate non-response).
func (b *batch) expect() {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.pending++
	b.mu.Unlock()
}

// finish records one response (nil: none) and writes the array when it was
// the last.
func (b *batch) finish(frame []byte) {
	b.mu.Lock()
	if frame != nil {
		b.frames = append(b.frames, frame[:len(frame)-1]) // without "\n"
	}
	b.pending--
	last := b.pending == 0
	frames := b.frames
	closeAfter := b.closeAfter
	b.mu.Unlock()
	if !last {
		return
	}
	if closeAfter {
		defer b.c.Close()
	}
	if len(frames) == 0 {
		return
	}
	out := []byte{'['}
	for i, f := range frames {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, f...)
	}
	out = append(out, "]\n"...)
	_ = b.c.wr.write(out, closeAfter) // before a close, the answer must be out
}

// handleBatch processes a JSON array line per JSON-RPC 2.0.
func (c *Conn) handleBatch(line []byte) {
	elems, derr := DecodeBatch(line)
	if derr != nil {
		c.replyError(nil, ID{}, nil, derr.Err)
		return
	}
	if !c.batching.Load() {
		c.replyError(nil, ID{}, nil, NewError(CodeInvalidRequest, "Invalid Request: batches are not part of "+
			"the negotiated protocol revision (only 2025-03-26 has them); send one message per line"))
		return
	}
	if len(elems) == 0 {
		c.replyError(nil, ID{}, nil, NewError(CodeInvalidRequest,
			"Invalid Request: an empty batch; a batch must hold at least one message"))
		return
	}
	b := &batch{c: c, pending: 1} // the 1 is this loop, finished below
	for _, raw := range elems {
		msg, derr := DecodeElement(raw)
		if derr != nil {
			c.replyError(b, derr.ID, derr.Params, derr.Err)
			continue
		}
		c.route(msg, b)
	}
	b.finish(nil)
}
