package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// rollbackTimeout bounds the cleanup of a failed read-only statement; it
// runs even when the caller's context is gone.
const rollbackTimeout = 2 * time.Second

// queryPipelined sends the statement and the session reset (reset.go) as
// one pipelined batch: one round trip (plus, the first time a connection
// sees a statement, the Parse/Describe pgx's statement cache needs).
// readOnly wraps the statement in BEGIN READ ONLY ... COMMIT, and the
// server refuses any write with SQLSTATE 25006.
//
// If the statement fails, PostgreSQL skips the rest of the pipeline up to
// its Sync, so neither COMMIT nor the reset runs and the connection may be
// left inside an aborted transaction; resetSession ends it and resets the
// session (a session advisory lock survives a rollback) so that the
// connection goes back to the pool clean instead of being destroyed by
// pgxpool.
func (c *Connector) queryPipelined(ctx context.Context, conn *pgx.Conn, sql string, args []any, readOnly bool) (res *result, err error) {
	reset := pipelinedReset
	if readOnly {
		reset = readOnlyReset
	}
	b := &pgx.Batch{}
	if readOnly {
		b.Queue("BEGIN READ ONLY")
	}
	b.Queue(sql, args...)
	if readOnly {
		b.Queue("COMMIT")
	}
	for _, q := range reset {
		b.Queue(q)
	}

	br := conn.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			res, err = nil, cerr
		}
		if err != nil {
			resetSession(ctx, conn, strings.Join(reset, "; "))
		}
	}()

	if readOnly {
		if _, err := br.Exec(); err != nil { // BEGIN, or a failed Parse of sql
			return nil, err
		}
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	if res, err = c.collect(conn, rows); err != nil {
		return nil, err
	}
	if readOnly {
		if _, err := br.Exec(); err != nil { // COMMIT
			return nil, err
		}
	}
	for range reset {
		if _, err := br.Exec(); err != nil {
			// The statement is done: the caller gets its rows, the
			// connection is dropped rather than reused unreset.
			_ = conn.Close(context.WithoutCancel(ctx))
			break
		}
	}
	return res, nil
}
