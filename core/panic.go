package core

import (
	"fmt"
	"runtime/debug"
)

// PanicError is a panic recovered by Guard: the value the code panicked
// with and the stack where it did.
type PanicError struct {
	// Value is what was passed to panic.
	Value any
	// Stack is the goroutine's stack at the panic (runtime/debug.Stack).
	Stack []byte
}

// Error says what the code panicked with.
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Guard calls fn and returns what it returns, except that a panic in fn is
// recovered and returned as a *PanicError (the zero T with it). It is the
// one place where the server turns a panic of code it calls (a tool
// handler, an audit sink, a workflow step) into an error; each caller then
// says in its own words what failed.
func Guard[T any](fn func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			var zero T
			v, err = zero, &PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	return fn()
}
