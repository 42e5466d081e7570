package jsonrpc

import (
	"encoding/json"
	"errors"
	"strconv"
)

// The error codes of JSON-RPC 2.0. Codes from -32000 to -32099 are left to
// the protocol above.
const (
	CodeParseError     int64 = -32700
	CodeInvalidRequest int64 = -32600
	CodeMethodNotFound int64 = -32601
	CodeInvalidParams  int64 = -32602
	CodeInternalError  int64 = -32603
)

// Error is a JSON-RPC error object and a Go error. errors.Is reports two
// *Error values equal when their codes are equal.
//
// Data is encoded as the error's "data" member; a connection's
// Options.ErrorData may fill it in.
type Error struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// NewError returns an *Error with the given code and message.
func NewError(code int64, message string) *Error {
	return &Error{Code: code, Message: message}
}

// Error implements the error interface.
func (e *Error) Error() string {
	return "jsonrpc " + strconv.FormatInt(e.Code, 10) + ": " + e.Message
}

// Is reports whether target is a non-nil *Error with the same code. A nil
// *Error matches nothing.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && t.Code == e.Code
}

// Sentinel values for errors.Is checks against the standard codes.
var (
	ErrParse          = NewError(CodeParseError, "parse error")
	ErrInvalidRequest = NewError(CodeInvalidRequest, "invalid request")
	ErrMethodNotFound = NewError(CodeMethodNotFound, "method not found")
	ErrInvalidParams  = NewError(CodeInvalidParams, "invalid params")
	ErrInternal       = NewError(CodeInternalError, "internal error")
)

// ErrNoResponse, returned by a request handler, tells the connection to send
// no response for that request (for example because the client cancelled
// it). It is an engine control-flow signal, never sent on the wire.
var ErrNoResponse = errors.New("jsonrpc: no response")

// ErrClosed is returned by operations on a connection that has closed.
var ErrClosed = errors.New("jsonrpc: connection closed")

// ID is a request id kept as its exact JSON text, so that it is echoed byte
// for byte (9007199254740993, 1.0 and "x" come back as sent) and compared by
// text (1 and 1.0 are different ids). ID is a comparable value type; the
// zero ID means "no id" and encodes as null.
type ID struct {
	raw string
}

// NullID is the id null.
var NullID = ID{raw: "null"}

// Int64ID returns the numeric id n.
func Int64ID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// StringID returns the string id s.
func StringID(s string) ID {
	b, _ := json.Marshal(s) // a string always encodes
	return ID{raw: string(b)}
}

// parseID validates raw as an id member's value: a string, a number or null.
func parseID(raw []byte) (ID, bool) {
	if len(raw) == 0 {
		return ID{}, false
	}
	switch c := raw[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9', c == 'n':
		return ID{raw: string(raw)}, true
	}
	return ID{}, false
}

// IsZero reports whether id is absent.
func (id ID) IsZero() bool { return id.raw == "" }

// IsNull reports whether id is the JSON null.
func (id ID) IsNull() bool { return id.raw == "null" }

// String returns the id's JSON text ("null" for the zero ID).
func (id ID) String() string {
	if id.raw == "" {
		return "null"
	}
	return id.raw
}

// appendJSON appends the id's JSON text (null for the zero ID).
func (id ID) appendJSON(b []byte) []byte {
	if id.raw == "" {
		return append(b, "null"...)
	}
	return append(b, id.raw...)
}

// MarshalJSON encodes the id exactly as it was received.
func (id ID) MarshalJSON() ([]byte, error) { return id.appendJSON(nil), nil }

// UnmarshalJSON keeps the id's exact JSON text. It rejects values that are
// not a string, a number or null.
func (id *ID) UnmarshalJSON(b []byte) error {
	v, ok := parseID(b)
	if !ok {
		return errors.New("jsonrpc: id must be a string, a number or null")
	}
	*id = v
	return nil
}
