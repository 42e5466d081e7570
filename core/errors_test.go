package core

import (
	"errors"
	"io"
	"os"
	"testing"
)

// TestErrorIsNilTarget: a nil *Error as the target matches nothing and
// does not panic, whatever wraps the error.
func TestErrorIsNilTarget(t *testing.T) {
	cases := []struct {
		name string
		err  error
	}{
		{"bare", NewError(CodeNotFound, "no such thing")},
		{"wrapped cause", Errorf(CodeInternal, "read: %w", io.EOF)},
		{"joined", errors.Join(io.EOF, NewError(CodeTimeout, "late"))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if errors.Is(c.err, (*Error)(nil)) {
				t.Fatalf("errors.Is(%v, (*Error)(nil)) = true, want false", c.err)
			}
			if !errors.Is(c.err, &Error{Code: AsError(c.err).Code}) {
				t.Fatalf("errors.Is(%v, its own code) = false", c.err)
			}
		})
	}
}

// TestErrorfCauses: every %w operand of Errorf is a cause errors.Is and
// errors.As find; the message is fmt's.
func TestErrorfCauses(t *testing.T) {
	inner := NewError(CodeTimeout, "late")
	cases := []struct {
		name    string
		err     *Error
		causes  []error
		message string
	}{
		{"none", Errorf(CodeInternal, "plain %d", 1), nil, "plain 1"},
		{"one", Errorf(CodeInternal, "read: %w", io.EOF), []error{io.EOF}, "read: EOF"},
		{"two", Errorf(CodeInternal, "%w and %w", io.EOF, os.ErrNotExist), []error{io.EOF, os.ErrNotExist},
			"EOF and file does not exist"},
		{"three with an Error", Errorf(CodeInvalidArgument, "%w/%w/%w", io.EOF, inner, os.ErrClosed),
			[]error{io.EOF, inner, os.ErrClosed}, "EOF/TIMEOUT: late/file already closed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.err.Message != c.message {
				t.Errorf("message %q, want %q", c.err.Message, c.message)
			}
			if (c.err.Unwrap() == nil) != (len(c.causes) == 0) {
				t.Errorf("Unwrap() = %v with %d causes", c.err.Unwrap(), len(c.causes))
			}
			for _, cause := range c.causes {
				if !errors.Is(c.err, cause) {
					t.Errorf("errors.Is(err, %v) = false", cause)
				}
			}
			if errors.Is(c.err, io.ErrUnexpectedEOF) {
				t.Error("errors.Is found a cause that was never wrapped")
			}
		})
	}
	var got *Error
	if err := error(Errorf(CodeInternal, "%w and %w", io.EOF, inner)); !errors.As(err.(*Error).Unwrap(), &got) || got != inner {
		t.Fatalf("errors.As through the second cause = %v, want %v", got, inner)
	}
}
