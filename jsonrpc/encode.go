package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
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
// json.RawMessage result is validated and compacted (json.Compact)
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
		buf := bytes.NewBuffer(make([]byte, 0, len(resultPrefix)+len(id.raw)+len(resultMember)+len(raw)+2))
		buf.WriteString(resultPrefix)
		buf.Write(id.appendJSON(buf.AvailableBuffer()))
		buf.WriteString(resultMember)
		if err := json.Compact(buf, raw); err != nil { // validates and compacts in one pass
			return nil, errors.New("jsonrpc: the result is not valid JSON")
		}
		buf.WriteString("}\n")
		return buf.Bytes(), nil
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

// appendResult is encodeResult appending to dst (reused: not sized to
// the frame).
func appendResult(dst []byte, id ID, result any) ([]byte, error) {
	if c, ok := result.(CompactJSON); ok && len(c) > 0 {
		frame := append(dst, resultPrefix...)
		frame = id.appendJSON(frame)
		frame = append(frame, resultMember...)
		frame = append(frame, c...)
		return append(frame, "}\n"...), nil
	}
	buf := bytes.NewBuffer(dst)
	buf.WriteString(resultPrefix)
	buf.Write(id.appendJSON(buf.AvailableBuffer()))
	buf.WriteString(resultMember)
	if raw, ok := result.(json.RawMessage); ok && len(raw) > 0 {
		if err := json.Compact(buf, raw); err != nil { // validates and compacts in one pass
			return nil, errors.New("jsonrpc: the result is not valid JSON")
		}
	} else if err := appendValue(buf, result); err != nil {
		return nil, err
	}
	buf.WriteString("}\n")
	return buf.Bytes(), nil
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
// *Error becomes -32603. Options.ErrorData fills in or extends the data.
func (c *Conn) encodeError(id ID, params json.RawMessage, err error) []byte {
	var e *Error
	if !errors.As(err, &e) {
		c.log.Error("request failed", "error", err.Error())
		e = NewError(CodeInternalError, "Internal error: "+err.Error())
	}
	out := *e
	if out.Code == 0 { // code 0 is never sent
		out.Code = CodeInternalError
	}
	if f := c.opts.ErrorData; f != nil {
		switch d := out.Data.(type) {
		case nil:
			out.Data = f(params, nil)
		case map[string]any:
			out.Data = f(params, d)
		}
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
		bare := &Error{Code: out.Code, Message: out.Message}
		if f := c.opts.ErrorData; f != nil {
			bare.Data = f(params, nil)
		}
		_ = appendValue(&buf, bare)
	}
	buf.WriteString("}\n")
	return buf.Bytes()
}
