package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// Connector runs statements on a database/sql pool of SQLite connections.
// It is safe for concurrent use.
type Connector struct {
	db       *sql.DB
	readOnly bool
	timeout  time.Duration
	path     string // only to scrub it from error messages
	maxRows  int
	maxSize  int64 // max_result_size
	// resetSessions closes the connection of a statement that may change
	// its session (changesSession): read-write, not in memory.
	resetSessions bool
	// agent is the read-only pool of agent-written statements, opened on
	// first use (agentDB).
	agent agentPool
}

// errStatementTimeout is the cause of a context ended by StatementTimeout,
// telling it apart from the caller's own deadline.
var errStatementTimeout = errors.New("statement timeout")

// Close closes the pools.
func (c *Connector) Close() {
	_ = c.db.Close()
	c.agent.close()
}

// DB exposes the pool for statistics (Stats).
func (c *Connector) DB() *sql.DB { return c.db }

// Dialect is SQLite's: ? parameters.
func (c *Connector) Dialect() sqltemplate.Dialect { return sqltemplate.SQLite }

// ReadOnly reports whether the database was opened read-only.
func (c *Connector) ReadOnly() bool { return c.readOnly }

// Query runs one statement with bound args and returns normalized rows.
// Canceling ctx interrupts the statement. Errors are *pipeline.PublicError.
func (c *Connector) Query(ctx context.Context, query string, args []any) (*pipeline.Rows, error) {
	qctx := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		qctx, cancel = context.WithTimeoutCause(ctx, c.timeout, errStatementTimeout)
		defer cancel()
	}
	bound, err := bindArgs(args)
	if err != nil {
		return nil, &pipeline.PublicError{Public: "cannot bind arguments", Cause: err}
	}
	var rows *sql.Rows
	if c.resetSessions && changesSession(query) {
		sc, cerr := c.db.Conn(qctx)
		if cerr != nil {
			return nil, c.publicError(ctx, qctx, cerr)
		}
		// Registered first, so it runs last: after the rows are closed.
		defer func() { _ = sc.Raw(discardConn); _ = sc.Close() }()
		rows, err = sc.QueryContext(qctx, query, bound...)
	} else {
		rows, err = c.db.QueryContext(qctx, query, bound...)
	}
	if err != nil {
		return nil, c.publicError(ctx, qctx, err)
	}
	res, _, err := collect(rows, limits{Rows: c.maxRows, Size: c.maxSize})
	if err != nil {
		return nil, c.publicError(ctx, qctx, err)
	}
	return res, nil
}
