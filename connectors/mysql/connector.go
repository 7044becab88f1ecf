package mysql

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"sync"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// Connector runs statements on a database/sql pool of MySQL or MariaDB
// connections. It is safe for concurrent use.
type Connector struct {
	db       *sql.DB
	maxConns int
	readOnly bool
	timeout  time.Duration
	maxRows  int
	maxSize  int64 // max_result_size

	// killDB is a one-connection pool used only for KILL QUERY: it must
	// not wait behind the very pool whose statement it cancels.
	killOnce sync.Once
	killDB   *sql.DB
	driverCf *driver.Config
}

// killGrace is how long after the statement timeout the client gives up
// on the server enforcing it (MySQL's max_execution_time covers SELECT
// only) and cancels the statement itself.
const killGrace = 500 * time.Millisecond

// killTimeout bounds a KILL QUERY.
const killTimeout = 2 * time.Second

// errStatementTimeout is the cause of a context ended by StatementTimeout,
// telling it apart from the caller's own deadline.
var errStatementTimeout = errors.New("statement timeout")

// Open builds the pool. Like the postgres connector it does not connect:
// a server that is down fails the first Query ("database unavailable"),
// not the configuration load.
func Open(_ context.Context, cfg Config) (*Connector, error) {
	dcfg, err := parseDSN(cfg.DSN)
	if err != nil {
		return nil, err
	}
	inner, err := driver.NewConnector(dcfg)
	if err != nil {
		return nil, &pipeline.PublicError{Public: "invalid mysql connection string", Cause: err}
	}
	db := sql.OpenDB(&connector{inner: inner, timeout: cfg.StatementTimeout, readOnly: cfg.ReadOnly})
	n := cfg.MaxConns
	if n <= 0 {
		n = defaultMaxConns
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxIdleTime(idleLifetime)
	c := &Connector{db: db, maxConns: n, readOnly: cfg.ReadOnly, timeout: cfg.StatementTimeout, maxRows: cfg.MaxRows, maxSize: cfg.MaxResultSize, driverCf: dcfg}
	if c.maxRows <= 0 {
		c.maxRows = pipeline.DefaultMaxRows
	}
	if c.maxSize <= 0 {
		c.maxSize = pipeline.DefaultMaxResultSize
	}
	return c, nil
}

// Close closes the pools.
func (c *Connector) Close() {
	_ = c.db.Close()
	c.killOnce.Do(func() {}) // no kill pool may open after Close
	if c.killDB != nil {
		_ = c.killDB.Close()
	}
}

// DB exposes the pool for statistics (Stats).
func (c *Connector) DB() *sql.DB { return c.db }

// Dialect is MySQL's: ? parameters, backtick identifiers.
func (c *Connector) Dialect() sqltemplate.Dialect { return sqltemplate.MySQL }

// ReadOnly reports whether statements run in READ ONLY transactions.
func (c *Connector) ReadOnly() bool { return c.readOnly }

// Query runs one statement with bound args and returns normalized rows.
// Canceling ctx (the client went away) or reaching the statement timeout
// kills the statement on the server. Errors are *pipeline.PublicError.
func (c *Connector) Query(ctx context.Context, query string, args []any) (*pipeline.Rows, error) {
	bound, err := bindArgs(args)
	if err != nil {
		return nil, &pipeline.PublicError{Public: "cannot bind arguments", Cause: err}
	}
	qctx := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		qctx, cancel = context.WithTimeoutCause(ctx, c.timeout+killGrace, errStatementTimeout)
		defer cancel()
	}
	rows, err := c.run(qctx, query, bound)
	for retry := 0; unsent(err) && qctx.Err() == nil && retry < c.maxConns; retry++ {
		// Nothing was written (unsent): another connection may serve.
		rows, err = c.run(qctx, query, bound)
	}
	if err != nil {
		return nil, publicError(ctx, qctx, err)
	}
	return rows, nil
}

// run is one attempt on one pooled connection.
func (c *Connector) run(qctx context.Context, query string, bound []any) (*pipeline.Rows, error) {
	sc, err := c.db.Conn(qctx)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	var cn *conn
	if err := sc.Raw(func(dc any) error { cn = dc.(*conn); return nil }); err != nil {
		return nil, err
	}
	defer c.watch(qctx, cn)()
	if changesSession(query) {
		// Marked before the call: it may fail after changing the session.
		cn.dirty.Store(true)
	}

	if c.readOnly {
		return c.queryReadOnly(qctx, sc, cn, query, bound)
	}
	return c.query(qctx, sc, cn, query, bound)
}

func (c *Connector) query(ctx context.Context, sc *sql.Conn, cn *conn, query string, args []any) (*pipeline.Rows, error) {
	rs, err := sc.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	rows, _, err := collect(rs, c.limits(), func() { c.abandon(cn) })
	return rows, err
}

// limits are the connector's max_rows and max_result_size.
func (c *Connector) limits() limits { return limits{Rows: c.maxRows, Size: c.maxSize} }

// queryReadOnly runs the statement inside START TRANSACTION READ ONLY, so
// the server refuses any write (error 1792), wherever it hides. Round trips:
// START TRANSACTION, the statement (its prepared form is cached per
// connection) and COMMIT; the driver cannot pipeline them.
func (c *Connector) queryReadOnly(ctx context.Context, sc *sql.Conn, cn *conn, query string, args []any) (*pipeline.Rows, error) {
	tx, err := sc.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	rs, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	rows, _, err := collect(rs, c.limits(), func() { c.abandon(cn) })
	if err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return rows, nil
}

// watch kills the statement running on cn when ctx ends before it does.
// The driver closes its socket at the same moment (the call returns at
// once), but the server would run the statement to its end: KILL QUERY
// stops it. The returned func must run before cn goes back to the pool:
// once a kill is decided, cn is marked so that database/sql discards it
// and a late KILL never reaches the next caller's statement.
func (c *Connector) watch(ctx context.Context, cn *conn) func() {
	marked := make(chan struct{})
	fire := func() {
		cn.killed.Store(true)
		close(marked)
		go c.kill(cn.id)
	}
	stop := context.AfterFunc(ctx, fire)
	return func() {
		switch {
		case !stop():
			<-marked // fire has started: wait for the mark
		case ctx.Err() != nil:
			// ctx ended but the driver noticed first and returned before
			// fire could start: the statement may still be running.
			fire()
		}
	}
}

// abandon drops cn in the middle of a result that max_rows or
// max_result_size refuses: the
// driver would otherwise read (and the server produce) every remaining row
// just to drain it. The server's statement is killed, the socket closed,
// and database/sql discards the connection.
func (c *Connector) abandon(cn *conn) {
	cn.killed.Store(true)
	go c.kill(cn.id)
	_ = cn.driverConn.Close()
}

// kill sends KILL QUERY for a connection id on the kill pool. Failures
// are ignored: the connection is discarded anyway, and the server notices
// the closed socket eventually.
func (c *Connector) kill(id uint64) {
	c.killOnce.Do(func() {
		cfg := c.driverCf.Clone()
		inner, err := driver.NewConnector(cfg)
		if err != nil {
			return
		}
		c.killDB = sql.OpenDB(inner)
		c.killDB.SetMaxOpenConns(1)
		c.killDB.SetMaxIdleConns(1)
		c.killDB.SetConnMaxIdleTime(idleLifetime)
	})
	if c.killDB == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
	defer cancel()
	_, _ = c.killDB.ExecContext(ctx, "KILL QUERY "+strconv.FormatUint(id, 10))
}
