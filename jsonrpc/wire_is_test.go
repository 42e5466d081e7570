package jsonrpc

import (
	"errors"
	"fmt"
	"testing"
)

// TestErrorIsNilTarget: errors.Is with a nil *Error as the target matches
// nothing and does not panic; equal codes still match.
func TestErrorIsNilTarget(t *testing.T) {
	cases := []struct {
		name string
		err  error
		code int64
	}{
		{"bare", NewError(CodeInvalidParams, "bad"), CodeInvalidParams},
		{"wrapped", fmt.Errorf("call: %w", ErrMethodNotFound), CodeMethodNotFound},
		{"joined", errors.Join(errors.New("x"), ErrInternal), CodeInternalError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if errors.Is(c.err, (*Error)(nil)) {
				t.Fatalf("errors.Is(%v, (*Error)(nil)) = true, want false", c.err)
			}
			if !errors.Is(c.err, &Error{Code: c.code}) {
				t.Fatalf("errors.Is(%v, code %d) = false", c.err, c.code)
			}
			if errors.Is(c.err, &Error{Code: c.code + 1}) {
				t.Fatalf("errors.Is(%v, code %d) = true", c.err, c.code+1)
			}
		})
	}
}
