package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// rollbackTimeout bounds the cleanup of a failed read-only statement; it
// runs even when the caller's context is gone.
const rollbackTimeout = 2 * time.Second

// queryReadOnly sends BEGIN READ ONLY, the statement, COMMIT and the
// session reset (readOnlyReset) as one pipelined batch: one round trip (plus,
// the first time a connection sees a statement, the Parse/Describe pgx's
// statement cache needs), and the server refuses any write with SQLSTATE
// 25006.
//
// If the statement fails, PostgreSQL skips the rest of the pipeline up to
// its Sync, so neither COMMIT nor the reset runs and the connection is
// left inside an aborted transaction; resetSession ends it and resets the
// session (a session advisory lock survives a rollback) so that the
// connection goes back to the pool clean instead of being destroyed by
// pgxpool.
func (c *Connector) queryReadOnly(ctx context.Context, conn *pgx.Conn, sql string, args []any) (res *result, err error) {
	b := &pgx.Batch{}
	b.Queue("BEGIN READ ONLY")
	b.Queue(sql, args...)
	b.Queue("COMMIT")
	queueReset(b)

	br := conn.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			res, err = nil, cerr
		}
		if err != nil {
			resetSession(ctx, conn, readOnlyResetQuery)
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
	if err := readReset(br); err != nil {
		// Committed: the caller gets its rows, the connection is dropped.
		_ = conn.Close(context.WithoutCancel(ctx))
	}
	return res, nil
}
