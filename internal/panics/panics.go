// Package panics turns a panic into an error that keeps the stack of the
// goroutine that panicked. etld recovers at the boundary of one pipeline
// (loading, planning, each goroutine of a run), so that a bug reached by
// one pipeline's options or data fails that pipeline and not the process.
// Whoever gets the error logs the stack (Stack), once.
package panics

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// Error is a recovered panic.
type Error struct {
	Value any
	// Stack is the panicking goroutine's stack, from debug.Stack.
	Stack []byte
}

func (e *Error) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic's value when it is an error (a runtime.Error
// such as an index out of range, or a value passed to panic).
func (e *Error) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// Recover, deferred, turns a panic of the calling function into an
// *Error stored in *errp:
//
//	defer panics.Recover(&err)
func Recover(errp *error) {
	if v := recover(); v != nil {
		*errp = &Error{Value: v, Stack: debug.Stack()}
	}
}

// Call runs f and returns its error, or the *Error of its panic.
func Call(f func() error) (err error) {
	defer Recover(&err)
	return f()
}

// Stack returns the stack of the panic in err's chain, if there is one.
func Stack(err error) (string, bool) {
	var p *Error
	if !errors.As(err, &p) {
		return "", false
	}
	return string(p.Stack), true
}
