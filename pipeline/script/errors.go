package script

import (
	"context"
	"errors"
	"fmt"

	"github.com/dop251/goja"
)

// Kind tells what went wrong in a call.
type Kind string

const (
	KindThrown    Kind = "thrown"    // the script threw or its promise rejected
	KindTimeout   Kind = "timeout"   // the time limit interrupted it
	KindCancelled Kind = "cancelled" // the caller went away
	KindStack     Kind = "stack"     // the call stack limit was hit
	KindTooLarge  Kind = "too large" // input or output over its cap
	KindBadValue  Kind = "bad value" // a value that cannot cross the boundary
	KindInternal  Kind = "internal"  // a runtime failure that is not the script's
	KindBusy      Kind = "busy"      // too many runtimes abandoned at their limit still run
)

// Error is a failed call. Message is safe to show to the caller (the
// thrown message, or which limit was hit); Stack is the JavaScript stack,
// for debug logs only.
type Error struct {
	Kind    Kind
	Message string
	Stack   string
}

func (e *Error) Error() string {
	if e.Stack != "" {
		return e.Message + "\n" + e.Stack
	}
	return e.Message
}

// SafeMessage makes *Error a pipeline.SafeError: only Message reaches the
// caller.
func (e *Error) SafeMessage() string { return e.Message }

// errTimedOut is the interrupt value of the time limit on evaluating a
// module (newRunner); a call is interrupted with its context's error.
var errTimedOut = errors.New("script time limit")

// rejection carries the reason of a rejected promise out of invoke.
type rejection struct{ reason goja.Value }

func (rejection) Error() string { return "promise rejected" }

// classify turns whatever a call failed with into an *Error.
func (s *Script) classify(r *runner, err error) (out error) {
	defer func() {
		if p := recover(); p != nil {
			out = &Error{Kind: KindThrown, Message: "the script threw a value that cannot be read"}
		}
	}()
	var se *Error
	var intr *goja.InterruptedError
	var so *goja.StackOverflowError
	var ex *goja.Exception
	var rej rejection
	switch {
	case errors.As(err, &se):
		return se
	case errors.As(err, &intr):
		if v := intr.Value(); v == context.Canceled {
			return &Error{Kind: KindCancelled, Message: "call cancelled"}
		}
		return &Error{Kind: KindTimeout, Message: s.timeoutMessage(), Stack: intr.String()}
	case errors.As(err, &so):
		return &Error{Kind: KindStack, Message: fmt.Sprintf("maximum call stack depth exceeded (limit %d frames)", s.opts.MaxCallDepth), Stack: so.String()}
	case errors.As(err, &ex):
		return &Error{Kind: KindThrown, Message: r.thrownMessage(ex.Value()), Stack: ex.String()}
	case errors.As(err, &rej):
		return &Error{Kind: KindThrown, Message: r.thrownMessage(rej.reason)}
	default:
		return &Error{Kind: KindInternal, Message: "script runtime error", Stack: err.Error()}
	}
}

// thrownMessage is what a developer expects to read for a thrown value:
// an Error's message (prefixed by its name when it is not plain "Error"),
// else the value as a string.
func (r *runner) thrownMessage(v goja.Value) string {
	const max = 1024
	msg := "undefined"
	if v != nil {
		msg = v.String()
		if obj, ok := v.(*goja.Object); ok {
			if m := obj.Get("message"); m != nil && !goja.IsUndefined(m) {
				msg = m.String()
				if n := obj.Get("name"); n != nil && !goja.IsUndefined(n) && n.String() != "Error" && n.String() != "" {
					msg = n.String() + ": " + msg
				}
			}
		}
	}
	if len(msg) > max {
		msg = msg[:max] + "…"
	}
	return msg
}
