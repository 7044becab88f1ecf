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

// queryPipelined sends the statement and the session reset (pipelinedReset) as
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
// pgxpool. A proven statement (resetProofs) has no reset after it.
func (c *Connector) queryPipelined(ctx context.Context, conn *pgx.Conn, sql string, args []any, readOnly, proven bool) (res *result, err error) {
	b := batchPlan{reset: pipelinedReset, proven: proven}
	if readOnly {
		b.reset = readOnlyReset
		if !proven || !sessionReadOnly(conn) {
			b.begin = "BEGIN READ ONLY"
		}
	}
	return c.runBatch(ctx, conn, sql, args, b)
}

// sessionReadOnly says whether conn's session makes every transaction
// read-only: default_transaction_read_only, which a read_only connector
// sets at connect (config.go) and every reset's RESET ALL restores. The
// server reports the setting whenever it changes (ParameterStatus, from
// PostgreSQL 14 on), so reading it costs nothing. A proven statement
// cannot change its session (resetProofs), so on such a session it needs
// no BEGIN READ ONLY and COMMIT around it: its implicit transaction is
// read-only and the server refuses a write in it with the same SQLSTATE
// 25006, for two statements' worth of the server's CPU less per call.
// Where the setting is not reported as on (an older server, a pooler
// that dropped the startup parameter), the statement keeps its explicit
// read-only transaction.
func sessionReadOnly(conn *pgx.Conn) bool {
	return conn.PgConn().ParameterStatus("default_transaction_read_only") == "on"
}

// batchPlan is what surrounds the statement in its pipelined batch.
type batchPlan struct {
	begin   string   // BEGIN or BEGIN READ ONLY; "" runs the statement in the batch's implicit transaction
	prelude string   // run after begin, before the statement (callerSession)
	preArgs []any    // prelude's arguments
	reset   []string // after the transaction
	proven  bool     // the statement needs no reset (resetProofs): reset only if the batch fails
}

func (c *Connector) runBatch(ctx context.Context, conn *pgx.Conn, sql string, args []any, p batchPlan) (res *result, err error) {
	b := &pgx.Batch{}
	if p.begin != "" {
		b.Queue(p.begin)
	}
	if p.prelude != "" {
		b.Queue(p.prelude, p.preArgs...)
	}
	b.Queue(sql, args...)
	if p.begin != "" {
		b.Queue("COMMIT")
	}
	queued := p.reset
	if p.proven {
		queued = nil
	}
	for _, q := range queued {
		b.Queue(q)
	}

	br := conn.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			res, err = nil, cerr
		}
		if err != nil {
			resetSession(ctx, conn, strings.Join(p.reset, "; "))
		}
	}()

	if p.begin != "" {
		if _, err := br.Exec(); err != nil { // BEGIN, or a failed Parse of sql
			return nil, err
		}
	}
	if p.prelude != "" {
		if _, err := br.Exec(); err != nil {
			return nil, err
		}
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	if res, err = c.collect(conn, rows, c.limits()); err != nil {
		return nil, err
	}
	if p.begin != "" {
		if _, err := br.Exec(); err != nil { // COMMIT
			return nil, err
		}
	}
	for range queued {
		if _, err := br.Exec(); err != nil {
			// The statement is done: the caller gets its rows, the
			// connection is dropped rather than reused unreset.
			_ = conn.Close(context.WithoutCancel(ctx))
			break
		}
	}
	return res, nil
}
