package jsonrpc

import (
	"bytes"
	"encoding/json"
	"github.com/mcprt/mcprt/internal/jsontext"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Message is one decoded JSON-RPC message: a *Request, a *Notification or a
// *Response. The router type-switches on it.
type Message interface {
	isMessage()
}

// Request is a call that expects a response.
type Request struct {
	ID     ID
	Method string
	// Params is the raw "params" member: an object, an array, or nil when
	// absent. Handlers decode their own params.
	Params json.RawMessage
}

// Notification is a call without an id; it never gets a response.
type Notification struct {
	Method string
	Params json.RawMessage
}

// Response is the client's answer to a request the server sent. Exactly one
// of Result and Error is set.
type Response struct {
	ID     ID
	Result json.RawMessage
	Error  *Error
}

func (*Request) isMessage()      {}
func (*Notification) isMessage() {}
func (*Response) isMessage()     {}

// DecodeError is why a line is not a usable message. Err is the JSON-RPC
// error to answer with; ID is the id to echo (zero when none can be
// derived); Params is the message's params member, if one was read, so that
// the layer above can find a client-supplied correlation id in it.
type DecodeError struct {
	Err    *Error
	ID     ID
	Params json.RawMessage
}

// envelope member bits.
const (
	memJSONRPC = 1 << iota
	memID
	memMethod
	memParams
	memResult
	memError
)

var memberNames = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// isBlank reports whether line holds only spaces and tabs.
func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// Decode decodes one line holding a single JSON-RPC message (not a batch).
// It walks the top-level object with an encoding/json streaming decoder:
// keys are matched case-sensitively, duplicate keys and case variants of the
// envelope members are rejected, and the id is kept as raw bytes.
func Decode(line []byte) (Message, *DecodeError) {
	var d Decoder
	return d.Decode(line)
}

// maxKeptScratch bounds the value buffer a Decoder keeps between messages:
// one huge message does not pin its memory.
const maxKeptScratch = 64 << 10

// A Decoder decodes message after message as Decode does, with one
// json.Decoder: it reads from a source that serves the current message,
// and once a whole valid message has been consumed the json.Decoder (which
// reads a stream of values) is ready for the next, its buffers reused.
// After anything unusual it starts afresh. What it returns does not alias
// its buffers or the message. The zero value is ready; a Decoder is not
// safe for concurrent use (a transport that decodes on many goroutines
// keeps a pool of them).
type Decoder struct {
	src     jsontext.Spaced // serves the current message to dec, spaced
	dec     *json.Decoder
	scratch json.RawMessage // each member value, as dec reads it; its buffer is reused
	inPlace bool            // values are sliced from the message, not copied

	methods    [keptMethods]string // method names seen lately, reused rather than copied again
	nextMethod int                 // the slot of methods to fill next
}

// Decode decodes one message (not a batch) as the function Decode does.
// What it returns does not alias line.
func (d *Decoder) Decode(line []byte) (Message, *DecodeError) {
	d.inPlace = false
	return d.decode(line)
}

// DecodeInPlace is Decode for a message that is the caller's to give
// away (an HTTP body read for it alone): the params, result and error
// data it returns are slices of data, not copies, so data must not change
// afterwards.
func (d *Decoder) DecodeInPlace(data []byte) (Message, *DecodeError) {
	d.inPlace = true
	return d.decode(data)
}

func (d *Decoder) decode(line []byte) (Message, *DecodeError) {
	if msg, derr, ok := d.decodeFast(line); ok {
		return msg, derr
	}
	return d.decodeReference(line)
}

// decodeReference decodes line with the encoding/json streaming decoder:
// the reference every other path must agree with.
func (d *Decoder) decodeReference(line []byte) (Message, *DecodeError) {
	if derr := checkJSON(line); derr != nil {
		return nil, derr
	}
	if d.dec == nil {
		d.dec = json.NewDecoder(&d.src)
		d.dec.UseNumber() // a top-level 1e700 is valid JSON (-32600), not a float64 overflow (-32700)
	}
	d.src.Reset(line)
	msg, derr := d.decodeTop(line)
	if derr != nil || !d.src.Done() || cap(d.scratch) > maxKeptScratch {
		d.dec, d.scratch = nil, nil
		d.src.Reset(nil)
	}
	return msg, derr
}

// decodeTop reads the top-level value: it must be an object.
func (d *Decoder) decodeTop(line []byte) (Message, *DecodeError) {
	tok, err := d.dec.Token()
	if err != nil {
		return nil, syntaxError(err)
	}
	if dl, ok := tok.(json.Delim); !ok || dl != '{' {
		return nil, invalid(ID{}, nil, "a JSON-RPC message must be a JSON object")
	}
	// Where this line starts in the decoder's stream: the '{' just read
	// is served where it stands in the line (no space is inserted before
	// it). (The stream's offset before the Token is no guide: the
	// decoder may not have counted the last line's trailing spaces yet.)
	base := d.dec.InputOffset() - int64(jsontext.SkipSpace(line, 0)+1)
	msg, derr := d.decodeObject(line, base)
	if derr == nil && !d.inPlace {
		detach(msg)
	}
	return msg, derr
}

// detach copies what a decoded message holds of its line (params,
// result, error data) into one buffer of its own.
func detach(msg Message) {
	switch m := msg.(type) {
	case *Request:
		m.Params = bytes.Clone(m.Params)
	case *Notification:
		m.Params = bytes.Clone(m.Params)
	case *Response:
		m.Result = bytes.Clone(m.Result) // (an error's data is decoded apart, into a copy)
	}
}

// value returns the member value dec just read into d.scratch as a slice
// of line (base: where line starts in dec's stream).
func (d *Decoder) value(line []byte, base int64) json.RawMessage {
	end := d.src.Offset(int(d.dec.InputOffset() - base))
	return line[end-len(d.scratch) : end : end]
}

// checkJSON rejects a line that is not valid UTF-8 or not exactly one valid
// JSON value (nesting deeper than encoding/json's limit of 10,000 included),
// so that classification never sees a broken message.
func checkJSON(line []byte) *DecodeError {
	if !utf8.Valid(line) {
		return parseError("the message is not valid UTF-8; send UTF-8 encoded JSON")
	}
	if !json.Valid(line) {
		var raw json.RawMessage
		return syntaxError(json.Unmarshal(line, &raw))
	}
	return nil
}

// decodeObject reads the members of an object whose '{' was consumed. The
// values it keeps are slices of line (base: where line starts in the
// decoder's stream).
func (d *Decoder) decodeObject(line []byte, base int64) (Message, *DecodeError) {
	dec := d.dec
	var (
		vals      [len(memberNames)]json.RawMessage
		seen      int
		idCount   int
		problem   string
		raw       json.RawMessage
		keyString string
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		keyString, _ = tok.(string)
		if err := dec.Decode(&d.scratch); err != nil {
			return nil, syntaxError(err)
		}
		raw = d.value(line, base)
		bit := -1
		for i, name := range memberNames {
			if keyString == name {
				bit = i
				break
			}
		}
		if bit < 0 {
			if problem == "" {
				for _, name := range memberNames {
					if strings.EqualFold(keyString, name) {
						problem = "member " + quote(keyString) + " differs from " + quote(name) +
							" only by case; member names are case-sensitive"
						break
					}
				}
			}
			continue
		}
		if bit == 1 {
			idCount++
		}
		if seen&(1<<bit) != 0 {
			if problem == "" {
				problem = "duplicate member " + quote(keyString) + "; each member may appear once"
			}
			continue
		}
		seen |= 1 << bit
		vals[bit] = raw
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, syntaxError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, parseError("unexpected data after the JSON object; send one message per line")
	}
	return d.classify(&vals, seen, idCount, problem)
}

// classify turns the envelope's members (vals, by memberNames index; seen:
// the bits of those present; idCount: how many "id" members there were;
// problem: the first case variant or duplicate found, or "") into a
// message, or the error it earns. Both decoding paths end here, so they
// answer alike.
func (d *Decoder) classify(vals *[len(memberNames)]json.RawMessage, seen, idCount int, problem string) (Message, *DecodeError) {
	var id ID
	idOK := false
	if idCount == 1 {
		id, idOK = parseID(vals[1])
	}
	echo := ID{}
	if idOK {
		echo = id
	}
	params := vals[3]
	if problem != "" {
		return nil, invalid(echo, params, problem)
	}
	if seen&memJSONRPC == 0 {
		return nil, invalid(echo, params, `missing member "jsonrpc"; it must be the string "2.0"`)
	}
	if v := vals[0]; string(v) != `"2.0"` {
		var s string
		if json.Unmarshal(v, &s) != nil || s != "2.0" {
			return nil, invalid(echo, params, `member "jsonrpc" must be the string "2.0", got `+clip(v))
		}
	}
	if seen&memID != 0 && !idOK {
		return nil, invalid(echo, params, `member "id" must be a string, a number or null, got `+clip(vals[1]))
	}
	if seen&memParams != 0 && params[0] != '{' && params[0] != '[' {
		return nil, invalid(echo, params, `member "params" must be an object or an array, got `+clip(params))
	}

	if seen&memMethod != 0 {
		method, ok := d.method(vals[2])
		if !ok {
			return nil, invalid(echo, params, `member "method" must be a string, got `+clip(vals[2]))
		}
		if seen&(memResult|memError) != 0 {
			return nil, invalid(echo, params, `a request or notification must not carry "result" or "error"`)
		}
		if seen&memID == 0 {
			return &Notification{Method: method, Params: params}, nil
		}
		return &Request{ID: id, Method: method, Params: params}, nil
	}

	switch seen & (memResult | memError) {
	case 0:
		return nil, invalid(echo, params, `the object has neither "method" (a request or notification) nor "result"/"error" (a response)`)
	case memResult | memError:
		return nil, invalid(echo, params, `a response must carry exactly one of "result" and "error", not both`)
	}
	if seen&memID == 0 {
		return nil, invalid(echo, params, `a response must carry the "id" of the request it answers`)
	}
	if seen&memParams != 0 {
		return nil, invalid(echo, params, `a response must not carry "params"`)
	}
	if seen&memResult != 0 {
		return &Response{ID: id, Result: vals[4]}, nil
	}
	// The error object's members are matched exactly too: a struct would
	// take "Code" for "code", and a json.Number would take the string
	// "-32601" for a number.
	var e map[string]json.RawMessage
	if vals[5][0] != '{' || json.Unmarshal(vals[5], &e) != nil {
		return nil, invalid(echo, nil, `member "error" must be an object with an integer "code" and a string "message"`)
	}
	message, isString := unquote(e["message"])
	codeRaw := e["code"]
	if !isString || len(codeRaw) == 0 || (codeRaw[0] != '-' && (codeRaw[0] < '0' || codeRaw[0] > '9')) {
		return nil, invalid(echo, nil, `member "error" must be an object with an integer "code" and a string "message"`)
	}
	code, err := strconv.ParseInt(string(codeRaw), 10, 64)
	if err != nil {
		return nil, invalid(echo, nil, `member "error.code" must be an integer`)
	}
	re := &Error{Code: code, Message: message}
	if data, ok := e["data"]; ok {
		re.Data = data
	}
	return &Response{ID: id, Error: re}, nil
}

// DecodeBatch splits a line holding a JSON array into its elements. The
// array must be valid JSON as a whole; elements are returned raw, to be
// decoded one by one with DecodeElement.
func DecodeBatch(line []byte) ([]json.RawMessage, *DecodeError) {
	if derr := checkJSON(line); derr != nil {
		return nil, derr
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil {
		return nil, syntaxError(err)
	}
	var elems []json.RawMessage
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntaxError(err)
		}
		elems = append(elems, raw)
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, parseError("unexpected data after the JSON array; send one message per line")
	}
	return elems, nil
}

// DecodeElement decodes one element of a batch: it must be an object.
func DecodeElement(raw json.RawMessage) (Message, *DecodeError) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, invalid(ID{}, nil, "each element of a batch must be a JSON-RPC message object")
	}
	return Decode(raw)
}

// isBatch reports whether a (trimmed, non-blank) line holds a JSON array.
func isBatch(line []byte) bool {
	for _, c := range line {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '[':
			return true
		}
		return false
	}
	return false
}

func parseError(msg string) *DecodeError {
	return &DecodeError{Err: NewError(CodeParseError, "Parse error: "+msg)}
}

func syntaxError(err error) *DecodeError {
	msg := "the message is not valid JSON"
	if se, ok := err.(*json.SyntaxError); ok {
		msg += " (" + se.Error() + " at byte " + strconv.FormatInt(se.Offset, 10) + ")"
	} else if err == io.EOF || err == io.ErrUnexpectedEOF {
		msg += " (unexpected end of input)"
	}
	return parseError(msg)
}

func invalid(id ID, params json.RawMessage, msg string) *DecodeError {
	return &DecodeError{Err: NewError(CodeInvalidRequest, "Invalid Request: "+msg), ID: id, Params: params}
}

func unquote(raw []byte) (string, bool) { return jsontext.String(raw) }

// quote returns s as a JSON string, clipped to jsontext.MaxEcho bytes.
func quote(s string) string { return jsontext.Quote(s) }

// clip shortens raw JSON for an error message, never inside a character.
func clip(raw []byte) string { return jsontext.ClipBytes(raw, 40) }
