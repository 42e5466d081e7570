package core

import (
	"errors"
	"fmt"
)

// Code is the code of a structured error: what kind of failure it is, in
// UPPER_SNAKE_CASE. Domain tools may define their own codes.
type Code string

// The codes the runtime itself uses. NOT_INITIALIZED only ever appears
// inside the error of a request sent before initialization finished.
const (
	CodeInvalidArgument   Code = "INVALID_ARGUMENT"
	CodeNotFound          Code = "NOT_FOUND"
	CodeTimeout           Code = "TIMEOUT"
	CodeResourceExhausted Code = "RESOURCE_EXHAUSTED"
	CodeInternal          Code = "INTERNAL"
	CodeUnauthorized      Code = "UNAUTHORIZED"
	CodeNotImplemented    Code = "NOT_IMPLEMENTED"
	CodeAuditEnterFailed  Code = "AUDIT_ENTER_FAILED"
	CodeNotInitialized    Code = "NOT_INITIALIZED"
)

// Retryable reports whether sending the same call again can usually
// succeed after a failure with this code: TIMEOUT, RESOURCE_EXHAUSTED (no
// free slot) and AUDIT_ENTER_FAILED are passing conditions; every other
// code, unknown (domain) codes included, is not. It is the default that
// NewError sets; the cases that differ set Error.Retryable themselves (a
// panic is INTERNAL but retryable, a payload over the limit is
// RESOURCE_EXHAUSTED but not).
func (c Code) Retryable() bool {
	switch c {
	case CodeTimeout, CodeResourceExhausted, CodeAuditEnterFailed:
		return true
	}
	return false
}

// Error is mcprt's structured error. Its JSON form is
// {code, message, details?, retryable, correlationId?, runId?}; the runtime
// fills CorrelationID and RunID before a tool error reaches the wire.
//
// An *Error is a Go error: errors.Is(err, &Error{Code: X}) matches any
// *Error with code X, and Unwrap exposes the cause.
type Error struct {
	Code          Code           `json:"code"`
	Message       string         `json:"message"`
	Details       map[string]any `json:"details,omitempty"`
	Retryable     bool           `json:"retryable"`
	CorrelationID string         `json:"correlationId,omitempty"`
	RunID         string         `json:"runId,omitempty"`

	cause error
}

// NewError returns an *Error with the given code and message and the
// retryable flag the code implies.
func NewError(code Code, message string) *Error {
	return &Error{Code: code, Message: message, Retryable: code.Retryable()}
}

// Errorf is NewError with a formatted message. A %w verb in format sets the
// cause that Unwrap returns; with several %w verbs the cause wraps them all,
// so errors.Is and errors.As find each.
func Errorf(code Code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	e := NewError(code, err.Error())
	if _, many := err.(interface{ Unwrap() []error }); many {
		e.cause = err
	} else {
		e.cause = errors.Unwrap(err)
	}
	return e
}

// WithDetail returns a copy of e with details[key] = value. The receiver is
// not changed.
func (e *Error) WithDetail(key string, value any) *Error {
	c := *e
	c.Details = make(map[string]any, len(e.Details)+1)
	for k, v := range e.Details {
		c.Details[k] = v
	}
	c.Details[key] = value
	return &c
}

// WithRetryable returns a copy of e whose Retryable flag is r: for the
// failures whose retryability differs from their code's default.
func (e *Error) WithRetryable(r bool) *Error {
	c := *e
	c.Retryable = r
	return &c
}

// Error implements the error interface: "CODE: message".
func (e *Error) Error() string {
	return string(e.Code) + ": " + e.Message
}

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.cause }

// Is reports whether target is a non-nil *Error with the same code. A nil
// *Error matches nothing.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && t.Code == e.Code
}

// AsError returns err as an *Error. An error that is not (and does not wrap)
// an *Error becomes INTERNAL with err's text as the message.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	out := NewError(CodeInternal, err.Error())
	out.cause = err
	return out
}
