package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// JSON-RPC error codes put on the wire (docs/architecture.md, Errors).
const (
	CodeToolNotFound  = -32601 // tool resolution failed
	CodeStageFailed   = -32000 // any pipeline stage after resolution failed
	CodeInvalidParams = -32602 // malformed tools/call params (not a stage failure)
	CodeInternal      = -32603 // a bug: never expected on the wire
)

// Stage names one step of the tools/call pipeline. The names appear in error
// messages, logs and spans, so they are written for people.
type Stage string

const (
	StageResolution      Stage = "tool resolution"
	StageAuth            Stage = "authentication"
	StageInputTransform  Stage = "input transform"
	StageValidation      Stage = "input validation"
	StageEnv             Stage = "env substitution"
	StageExecution       Stage = "execution"
	StageOutputTransform Stage = "output transform"
	StageResponse        Stage = "response"
)

// Error is a pipeline failure as the caller sees it: a JSON-RPC code, the
// stage that failed and a message that is safe to show. Cause holds the
// internal error (driver error, stack trace) for debug logs only; it never
// reaches the wire.
type Error struct {
	Code    int
	Stage   Stage
	Message string
	Cause   error
	// Upstream marks the JSON-RPC error of a proxied MCP server, passed on
	// as the server sent it (docs/caddyfile.md, Errors): its code, its message without
	// the stage, and its Data.
	Upstream bool
	Data     json.RawMessage
}

func (e *Error) Error() string {
	if e.Upstream {
		return e.Message
	}
	return fmt.Sprintf("%s: %s", e.Stage, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// Fail builds a -32000 stage failure.
func Fail(stage Stage, cause error, format string, args ...any) *Error {
	return &Error{Code: CodeStageFailed, Stage: stage, Message: fmt.Sprintf(format, args...), Cause: cause}
}

// SafeError is implemented by errors whose message is safe to show to a
// caller (connectors wrap driver errors in one, dropping hosts, users and
// connection strings). Anything else is reported by stage only.
type SafeError interface {
	error
	SafeMessage() string
}

// safeMessage returns what of err may be shown to the caller.
func safeMessage(err error, fallback string) string {
	var se SafeError
	if errors.As(err, &se) {
		return se.SafeMessage()
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Message
	}
	return fallback
}

// MetaError is implemented by errors that carry facts for the result's
// _meta (an upstream's HTTP status): under error_mode result they are
// added to the isError result.
type MetaError interface {
	error
	ErrorMeta() map[string]any
}

// PublicError is a ready-made SafeError: Public is shown, Cause is kept for
// the debug log.
type PublicError struct {
	Public string
	Cause  error
	// Code is set when Public carries the server's own text (a database's
	// error message): the server's code for it, such as "SQLSTATE 22012",
	// "error 1062, SQLSTATE 23000", "SQLITE_CONSTRAINT_UNIQUE" or
	// "WRONGTYPE". With `error_detail safe` (README, Errors) the caller sees
	// this code instead of Public. Texts of our own ("timed out",
	// "database unavailable") leave it empty: they are shown either way.
	Code string
}

func (e *PublicError) Error() string {
	if e.Cause != nil {
		return e.Public + ": " + e.Cause.Error()
	}
	return e.Public
}
func (e *PublicError) SafeMessage() string { return e.Public }
func (e *PublicError) Unwrap() error       { return e.Cause }

// SafeText is what of err may be shown outside the process (callers, logs
// at info): the SafeMessage of a SafeError, else fallback.
func SafeText(err error, fallback string) string { return safeMessage(err, fallback) }

// serverCode finds the PublicError in err's chain that carries server text.
func serverCode(err error) (*PublicError, bool) {
	for ; err != nil; err = errors.Unwrap(err) {
		if pe, ok := err.(*PublicError); ok && pe.Code != "" {
			return pe, true
		}
	}
	return nil, false
}

// WithoutServerText is the error as `error_detail safe` shows it (README,
// Errors): when the message carries a server's own text, that text is
// replaced by the server's code and the request id, under which the full
// text is in the debug log; "execution: query failed: division by zero
// (SQLSTATE 22012)" becomes "execution: query failed (SQLSTATE 22012,
// request_id 6f1c…)". Code and Stage stay; Cause stays for the log. Any
// other error is returned unchanged.
func (e *Error) WithoutServerText(requestID string) *Error {
	pub, ok := serverCode(e.Cause)
	if !ok {
		return e
	}
	// The message is "<our words>: <Public>" (QueryFailure, CommandExecutor) or
	// Public alone (stageError); keep our words, never anything of Public.
	msg := "failed"
	if i := strings.LastIndex(e.Message, pub.Public); i > 0 {
		if head := strings.TrimRight(e.Message[:i], ": "); head != "" {
			msg = head
		}
	}
	detail := pub.Code
	if requestID != "" {
		detail += ", request_id " + requestID
	}
	out := *e
	out.Message = msg + " (" + detail + ")"
	return &out
}
