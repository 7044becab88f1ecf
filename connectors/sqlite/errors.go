package sqlite

import (
	"context"
	"errors"
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
		return &pipeline.PublicError{Public: c.scrub(se.Error()), Cause: err}
	}
	return &pipeline.PublicError{Public: "query failed", Cause: err}
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
