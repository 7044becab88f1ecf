package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// rollbackTimeout bounds the cleanup of a failed read-only statement; it
// runs even when the caller's context is gone.
const rollbackTimeout = 2 * time.Second

// queryReadOnly sends BEGIN READ ONLY, the statement and COMMIT as one
// pipelined batch: one round trip (plus, the first time a connection sees
// a statement, the Parse/Describe pgx's statement cache needs), and the
// server refuses any write with SQLSTATE 25006.
//
// If the statement fails, PostgreSQL skips the rest of the pipeline up to
// its Sync, so COMMIT never runs and the connection is left inside an
// aborted transaction; rollbackIfOpen ends it so that the connection goes
// back to the pool clean instead of being destroyed by pgxpool.
func (c *Connector) queryReadOnly(ctx context.Context, conn *pgx.Conn, sql string, args []any) (res *result, err error) {
	b := &pgx.Batch{}
	b.Queue("BEGIN READ ONLY")
	b.Queue(sql, args...)
	b.Queue("COMMIT")

	br := conn.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			res, err = nil, cerr
		}
		if err != nil {
			rollbackIfOpen(ctx, conn)
		}
	}()

	if _, err := br.Exec(); err != nil { // BEGIN, or a failed Parse of sql
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	if res, err = c.collect(conn, rows); err != nil {
		return nil, err
	}
	if _, err := br.Exec(); err != nil { // COMMIT
		return nil, err
	}
	return res, nil
}

// rollbackIfOpen ends a transaction left open on conn. It uses its own
// short deadline: after a cancellation ctx is already done, and the
// connection is still worth saving.
func rollbackIfOpen(ctx context.Context, conn *pgx.Conn) {
	if conn.IsClosed() || conn.PgConn().TxStatus() == 'I' {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	// A failure closes the connection, and pgxpool then discards it.
	_, _ = conn.Exec(rctx, "ROLLBACK")
}
