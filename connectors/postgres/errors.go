package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/jackc/pgx/v5/pgconn"
)

// Public texts of the failures that are not the statement's own fault.
const (
	msgCanceled    = "canceled"
	msgTimedOut    = "timed out"
	msgStmtTimeout = "statement timed out"
	msgUnavailable = "database unavailable"
	msgFailed      = "query failed"
)

// publicError shapes any error of a Query into a *pipeline.PublicError.
// Order matters: a canceled caller is reported as such even though pgx then
// sees the server's 57014 "canceling statement due to user request"; and a
// failure to connect is "database unavailable" even when it carries a
// server message, because connect-time messages name users and databases.
func publicError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var pub *pipeline.PublicError
	if errors.As(err, &pub) {
		return err
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return &pipeline.PublicError{Public: msgTimedOut, Cause: err}
		}
		return &pipeline.PublicError{Public: msgCanceled, Cause: err}
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return &pipeline.PublicError{Public: msgUnavailable, Cause: err}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		text, server := pgErrorText(pgErr)
		pub := &pipeline.PublicError{Public: text, Cause: err}
		if server {
			pub.Code = "SQLSTATE " + pgErr.Code
		}
		return pub
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err):
		return &pipeline.PublicError{Public: msgTimedOut, Cause: err}
	case errors.Is(err, context.Canceled):
		return &pipeline.PublicError{Public: msgCanceled, Cause: err}
	case isConnectionLost(err):
		return &pipeline.PublicError{Public: msgUnavailable, Cause: err}
	}
	return &pipeline.PublicError{Public: msgFailed, Cause: err}
}

// pgErrorText is the server's message and SQLSTATE (server is true), or
// one of our own texts. Detail and Hint are left out: a Detail can quote
// row values ("Key (email)=(...) already exists").
func pgErrorText(e *pgconn.PgError) (text string, server bool) {
	switch {
	case e.Code == "57014" && strings.Contains(e.Message, "statement timeout"):
		return msgStmtTimeout, false
	case strings.HasPrefix(e.Code, "08"), // connection exception
		e.Code == "57P01", e.Code == "57P02", e.Code == "57P03", // shutdown, crash, cannot connect now
		e.Code == "53300": // too many connections
		return msgUnavailable, false
	}
	return fmt.Sprintf("%s (SQLSTATE %s)", e.Message, e.Code), true
}

// isConnectionLost recognizes a connection that broke or never came up,
// whatever layer noticed it.
func isConnectionLost(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) ||
		errors.Is(err, pgconn.ErrConnClosed) ||
		strings.Contains(err.Error(), "closed pool") // puddle's ErrClosedPool, not re-exported by pgxpool
}
