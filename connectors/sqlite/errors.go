package sqlite

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/edgemcp/edgemcp/pipeline"
	"modernc.org/sqlite"
)

// publicError shapes a Query error: the caller's cancellation or deadline,
// our statement timeout, else SQLite's message with the database path
// scrubbed (it is configuration, not the caller's business).
func (c *Connector) publicError(ctx, qctx context.Context, err error) error {
	var pe *pipeline.PublicError
	if errors.As(err, &pe) {
		return pe // already shaped (max_rows)
	}
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &pipeline.PublicError{Public: "timed out", Cause: err}
	case ctx.Err() != nil:
		return &pipeline.PublicError{Public: "canceled", Cause: err}
	case errors.Is(context.Cause(qctx), errStatementTimeout):
		return &pipeline.PublicError{Public: "statement timed out", Cause: err}
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return &pipeline.PublicError{Public: c.scrub(se.Error()), Cause: err, Code: resultCode(se.Code())}
	}
	return &pipeline.PublicError{Public: "query failed", Cause: err}
}

// codeName finds the result code's name in the driver's description of it,
// "Abort due to constraint violation (SQLITE_CONSTRAINT)".
var codeName = regexp.MustCompile(`\((SQLITE_[A-Z0-9_]+)\)`)

// resultCode names a SQLite result code as `error_detail safe` shows it:
// "SQLITE_ERROR", or for an extended code the driver has no name for, the
// primary code's name and the number: "SQLITE_CONSTRAINT, extended code
// 1555".
func resultCode(code int) string {
	if m := codeName.FindStringSubmatch(sqlite.ErrorCodeString[code]); m != nil {
		return m[1]
	}
	if m := codeName.FindStringSubmatch(sqlite.ErrorCodeString[code&0xff]); m != nil {
		return fmt.Sprintf("%s, extended code %d", m[1], code)
	}
	return fmt.Sprintf("SQLite result code %d", code)
}

func (c *Connector) scrub(msg string) string { return scrubPath(msg, c.path) }

// scrubPath removes the database path (as configured, and as a file path)
// from a message.
func scrubPath(msg, path string) string {
	if path == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, path, "<database>")
	if fp, err := filePath(path); err == nil && fp != "" {
		msg = strings.ReplaceAll(msg, fp, "<database>")
	}
	return msg
}
