package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"

	mysqldrv "github.com/go-sql-driver/mysql"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Public texts of the failures that are not the statement's own fault;
// the same words as the postgres connector's.
const (
	msgCanceled    = "canceled"
	msgTimedOut    = "timed out"
	msgStmtTimeout = "statement timed out"
	msgUnavailable = "database unavailable"
	msgFailed      = "query failed"
)

// Server error numbers the connector recognizes.
const (
	errStatementTimeoutMB = 1969 // MariaDB ER_STATEMENT_TIMEOUT (max_statement_time)
	errQueryTimeoutMySQL  = 3024 // MySQL ER_QUERY_TIMEOUT (max_execution_time)
	errTooManyConns       = 1040 // ER_CON_COUNT_ERROR
	errServerShutdown     = 1053 // ER_SERVER_SHUTDOWN
	errConnKilled         = 1927 // MariaDB ER_CONNECTION_KILLED
)

// userAtHost matches the 'user'@'host' that privilege errors quote.
var userAtHost = regexp.MustCompile(`'[^']*'@'[^']*'`)

// publicError shapes any error of a Query into a *pipeline.PublicError.
// Order matters: a canceled caller is reported as such whatever the
// driver then saw (a closed socket, the KILL's 1317); a failure to open a
// connection is "database unavailable" because connect-time messages name
// users, hosts and databases.
func publicError(ctx, qctx context.Context, err error) error {
	var pub *pipeline.PublicError
	if errors.As(err, &pub) {
		return err // already shaped (max_rows, decoding)
	}
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &pipeline.PublicError{Public: msgTimedOut, Cause: err}
	case ctx.Err() != nil:
		return &pipeline.PublicError{Public: msgCanceled, Cause: err}
	case errors.Is(context.Cause(qctx), errStatementTimeout):
		return &pipeline.PublicError{Public: msgStmtTimeout, Cause: err}
	}
	var connErr *errConnect
	if errors.As(err, &connErr) {
		return &pipeline.PublicError{Public: msgUnavailable, Cause: err}
	}
	var me *mysqldrv.MySQLError
	if errors.As(err, &me) {
		text, server := serverErrorText(me)
		pub := &pipeline.PublicError{Public: text, Cause: err}
		if server {
			pub.Code = serverCode(me)
		}
		return pub
	}
	if isConnectionLost(err) {
		return &pipeline.PublicError{Public: msgUnavailable, Cause: err}
	}
	return &pipeline.PublicError{Public: msgFailed, Cause: err}
}

// serverErrorText is the server's message with its error number and
// SQLSTATE, privilege errors' 'user'@'host' replaced (server is true), or
// one of our own texts.
func serverErrorText(e *mysqldrv.MySQLError) (text string, server bool) {
	switch e.Number {
	case errStatementTimeoutMB, errQueryTimeoutMySQL:
		return msgStmtTimeout, false
	case errTooManyConns, errServerShutdown, errConnKilled:
		return msgUnavailable, false
	}
	msg := userAtHost.ReplaceAllString(e.Message, "<user>")
	return fmt.Sprintf("%s (%s)", msg, serverCode(e)), true
}

// serverCode is the error number and, when the server sent one, the
// SQLSTATE: "error 1062, SQLSTATE 23000".
func serverCode(e *mysqldrv.MySQLError) string {
	if e.SQLState != [5]byte{} {
		return fmt.Sprintf("error %d, SQLSTATE %s", e.Number, e.SQLState[:])
	}
	return fmt.Sprintf("error %d", e.Number)
}

// isConnectionLost recognizes a connection that broke, whatever layer
// noticed it.
func isConnectionLost(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) ||
		errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, mysqldrv.ErrInvalidConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed)
}
