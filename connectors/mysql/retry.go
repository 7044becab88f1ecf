package mysql

import (
	"database/sql/driver"
	"errors"
)

// A statement that never reached the server is retried on another
// connection (Query). go-sql-driver returns driver.ErrBadConn only when
// that is known: the liveness check of a connection taken from the pool
// found it dead (pin turns the check on), or the first write of the
// statement failed with nothing written. database/sql already retries the
// former when it hands out the connection; a failed first write reaches
// Query and is retried there. Any other failure (the statement was sent,
// the answer did not come) may mean the server ran it: it fails with
// "database unavailable" and is never retried.
//
// Retries are bounded by the pool size: each failed attempt discarded one
// stale connection, so after that many the next one was opened since.

// unsent reports whether err proves that nothing was written.
func unsent(err error) bool { return errors.Is(err, driver.ErrBadConn) }
