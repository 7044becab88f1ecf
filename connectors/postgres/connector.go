package postgres

import (
	"context"
	"errors"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Connector runs statements on a pgx pool. It is safe for concurrent use.
type Connector struct {
	pool     *pgxpool.Pool
	readOnly bool
	maxRows  int
	maxSize  int64 // max_result_size
	ext      extTypes
	caller   *callerSession // nil unless claims_setting or role_claim (newCallerSession)
	verbs    pipelinableMemo
	proofs   resetProofs // statements that need no reset (proveQuery)
}

// Close closes the pool, waiting for acquired connections to be released.
func (c *Connector) Close() { c.pool.Close() }

// Pool exposes the pool for statistics (Stat) and health checks.
func (c *Connector) Pool() *pgxpool.Pool { return c.pool }

// Dialect is PostgreSQL's: $n parameters.
func (c *Connector) Dialect() sqltemplate.Dialect { return sqltemplate.Postgres }

// ReadOnly reports whether statements run in READ ONLY transactions.
func (c *Connector) ReadOnly() bool { return c.readOnly }

// Query runs one statement with bound args and returns normalized rows.
// Canceling ctx cancels the statement on the server. Errors are
// *pipeline.PublicError.
func (c *Connector) Query(ctx context.Context, sql string, args []any) (*pipeline.Rows, error) {
	var pre []any
	if c.caller != nil {
		var err error
		if pre, err = c.caller.args(ctx); err != nil {
			return nil, err // an authentication failure, before any round trip
		}
	}
	bound := bindArgs(args)
	rows, err := c.query(ctx, sql, bound, pre)
	if err != nil && isStalePlan(err) && ctx.Err() == nil {
		// pgx has dropped the stale cached statement; the failed attempt
		// was rejected before running, so one retry is safe. What the
		// statement reads changed: its proof goes with it.
		c.proofs.forget(sql)
		rows, err = c.query(ctx, sql, bound, pre)
	}
	for retry := 0; err != nil && isUnsent(err) && ctx.Err() == nil && retry < int(c.pool.Config().MaxConns); retry++ {
		// The statement never reached the server (isUnsent); the
		// connection it got is gone, the next attempt takes another.
		rows, err = c.query(ctx, sql, bound, pre)
	}
	if err != nil {
		return nil, publicError(ctx, err)
	}
	return rows, nil
}

func (c *Connector) query(ctx context.Context, sql string, args, pre []any) (rows *pipeline.Rows, err error) {
	var proven bool
	err = c.onConn(ctx, func(conn *pgx.Conn) error {
		// Asked once the connection is ours: a call that waited for the
		// connection a proof held sees that proof.
		proven = c.proofs.holds(sql)
		rows, err = c.attempt(ctx, conn, sql, args, pre, proven)
		return err
	}, func(pc *pgxpool.Conn) bool {
		if proven || !c.proofs.due(sql) {
			return false
		}
		go c.proofs.prove(ctx, pc, sql) // on this connection, reset by the call; it releases it
		return true
	})
	return rows, err
}

// onConn runs one attempt on a pooled connection; its error is marked
// when the attempt provably never reached the server (markUnsent). After
// an attempt that succeeded, keep (if not nil) may take the connection
// over: it reports whether it did, and then releases it itself.
func (c *Connector) onConn(ctx context.Context, attempt func(*pgx.Conn) error, keep func(*pgxpool.Conn) bool) error {
	pc, err := c.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	kept := false
	defer func() {
		if !kept {
			pc.Release()
		}
	}()
	conn := pc.Conn()
	w := watchOf(conn.PgConn())
	if w != nil {
		w.arm()
	}
	if err := attempt(conn); err != nil {
		return markUnsent(err, w)
	}
	kept = keep != nil && keep(pc)
	return nil
}

// attempt runs the statement once on conn; proven, it is not followed by
// the session reset (resetProofs).
func (c *Connector) attempt(ctx context.Context, conn *pgx.Conn, sql string, args, pre []any, proven bool) (*pipeline.Rows, error) {
	var err error

	var res *result
	switch {
	case c.caller != nil:
		// The caller's settings live in the statement's transaction, in
		// the same round trip (callerSession).
		p := batchPlan{begin: "BEGIN", prelude: c.caller.sql, preArgs: pre, reset: pipelinedReset}
		if c.readOnly {
			p.begin, p.reset = "BEGIN READ ONLY", readOnlyReset
		} else if !c.verbs.of(sql) {
			p.reset = sessionReset
		}
		p.proven = proven
		res, err = c.runBatch(ctx, conn, sql, args, p)
	case c.readOnly:
		res, err = c.queryPipelined(ctx, conn, sql, args, true, proven)
	case proven || c.verbs.of(sql):
		res, err = c.queryPipelined(ctx, conn, sql, args, false, proven)
	default:
		// Not pipelined with the reset: the statement may be one that
		// cannot run inside the implicit transaction a pipeline is (VACUUM,
		// CREATE INDEX CONCURRENTLY). The reset costs a round trip.
		defer resetSession(ctx, conn, sessionResetQuery)
		rows, qerr := conn.Query(ctx, sql, args...)
		if qerr != nil {
			return nil, qerr
		}
		res, err = c.collect(conn, rows, c.limits())
	}
	if err != nil {
		return nil, err
	}
	if err := c.finish(ctx, conn, res); err != nil {
		return nil, err
	}
	return res.rows, nil
}

// isStalePlan recognizes the error PostgreSQL gives when a cached prepared
// statement's result type changed under it (ALTER TABLE, a recreated view).
func isStalePlan(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "0A000" &&
		pgErr.Message == "cached plan must not change result type"
}
