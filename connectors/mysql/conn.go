package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// driverConn is everything the go-sql-driver connection implements that
// database/sql looks for; conn embeds it so that wrapping hides nothing.
type driverConn interface {
	driver.Conn
	driver.ConnPrepareContext
	driver.ConnBeginTx
	driver.QueryerContext
	driver.ExecerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	driver.NamedValueChecker
}

// conn is one server connection with what the connector learnt when it
// was opened (server flavour, connection id for KILL QUERY) and a cache of
// its prepared statements.
type conn struct {
	driverConn
	id      uint64
	mariadb bool
	// killed is set once a KILL QUERY may be on its way to this
	// connection: it is then closed instead of going back to the pool,
	// where the KILL could hit the next caller's statement.
	killed atomic.Bool
	// dirty is set after a statement that may have left state in the
	// session (changesSession): the connection is closed instead of reused.
	dirty atomic.Bool

	mu    sync.Mutex
	stmts map[string]driver.Stmt
}

// maxCachedStmts bounds the prepared statements kept per connection; the
// server's max_prepared_stmt_count is shared by all its clients.
const maxCachedStmts = 64

// connector opens conns: the driver's connection plus one-time session
// setup, so that every statement on it runs with the same settings.
type connector struct {
	inner   driver.Connector
	timeout time.Duration
	// readOnly also sets the session's default access mode, a second
	// guard behind the per-statement START TRANSACTION READ ONLY.
	readOnly bool
}

// errConnect marks a failure to open a connection: its message may name
// the user, host or database, so it is only ever "database unavailable".
type errConnect struct{ err error }

func (e *errConnect) Error() string { return "connect: " + e.err.Error() }
func (e *errConnect) Unwrap() error { return e.err }

func (c *connector) Driver() driver.Driver { return c.inner.Driver() }

func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, &errConnect{err}
	}
	full, ok := dc.(driverConn)
	if !ok {
		dc.Close()
		return nil, &errConnect{fmt.Errorf("driver connection %T lacks a context interface", dc)}
	}
	cn := &conn{driverConn: full}
	if err := c.setup(ctx, cn); err != nil {
		cn.Close()
		return nil, &errConnect{err}
	}
	return cn, nil
}

// setup learns the server flavour and connection id, then sets the
// session: UTC for TIMESTAMP values, the statement timeout in the variable
// this server has, and the read-only default. Two or three round trips,
// once per connection.
func (c *connector) setup(ctx context.Context, cn *conn) error {
	vals, err := queryRow(ctx, cn, "SELECT VERSION(), CONNECTION_ID(), @@SESSION.sql_mode")
	if err != nil {
		return err
	}
	if err := checkSQLMode(vals[2]); err != nil {
		return err
	}
	cn.mariadb = strings.Contains(strings.ToLower(vals[0]), "mariadb")
	if cn.id, err = strconv.ParseUint(vals[1], 10, 64); err != nil {
		return fmt.Errorf("connection id %q: %w", vals[1], err)
	}
	set := []string{"time_zone = '+00:00'"}
	if c.timeout > 0 {
		if cn.mariadb {
			// Seconds, fractional; applies to every statement.
			set = append(set, "max_statement_time = "+strconv.FormatFloat(c.timeout.Seconds(), 'f', 3, 64))
		} else {
			// Milliseconds; MySQL applies it to SELECT only, the client
			// deadline (Connector.Query) covers the rest.
			set = append(set, "max_execution_time = "+strconv.FormatInt(max(c.timeout.Milliseconds(), 1), 10))
		}
	}
	if _, err = cn.driverConn.ExecContext(ctx, "SET SESSION "+strings.Join(set, ", SESSION "), nil); err != nil || !c.readOnly {
		return err
	}
	// The statement form, not the variable: the variable's name differs
	// between servers and versions (tx_read_only, transaction_read_only).
	_, err = cn.driverConn.ExecContext(ctx, "SET SESSION TRANSACTION READ ONLY", nil)
	return err
}

// checkSQLMode refuses sql_modes under which the server reads strings
// differently from the template compiler (pipeline/sqltemplate's MySQL
// dialect): with backslashes as plain characters, or "..." as an
// identifier, a statement's parameters could be miscounted.
func checkSQLMode(mode string) error {
	for m := range strings.SplitSeq(mode, ",") {
		if m == "NO_BACKSLASH_ESCAPES" || m == "ANSI_QUOTES" {
			return &pipeline.PublicError{Public: "the server's sql_mode has " + m + ", which edgemcp's MySQL statement templates do not support; remove it for this user or in the DSN (sql_mode=...)"}
		}
	}
	return nil
}

// queryRow reads the first row of a text query as strings.
func queryRow(ctx context.Context, cn driver.QueryerContext, q string) ([]string, error) {
	rows, err := cn.QueryContext(ctx, q, nil)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(dest); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: no row", q)
		}
		return nil, err
	}
	out := make([]string, len(dest))
	for i, v := range dest {
		switch v := v.(type) {
		case []byte:
			out[i] = string(v)
		default:
			out[i] = fmt.Sprint(v)
		}
	}
	return out, nil
}

// QueryContext runs statements with arguments through a cached prepared
// statement: one round trip instead of prepare, execute and close.
func (cn *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if len(args) == 0 {
		return cn.driverConn.QueryContext(ctx, query, args)
	}
	st, err := cn.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := st.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		// A statement that failed may be stale (the server can drop it):
		// prepare afresh next time.
		cn.evict(query)
	}
	return rows, err
}

func (cn *conn) stmt(ctx context.Context, query string) (driver.Stmt, error) {
	// database/sql uses a connection from one goroutine at a time; the
	// mutex only keeps Close (pool cleaner) and use apart.
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if st, ok := cn.stmts[query]; ok {
		return st, nil
	}
	st, err := cn.driverConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if _, ok := st.(driver.StmtQueryContext); !ok {
		st.Close()
		return nil, fmt.Errorf("driver statement %T lacks QueryContext", st)
	}
	if cn.stmts == nil || len(cn.stmts) >= maxCachedStmts {
		for _, old := range cn.stmts {
			old.Close()
		}
		cn.stmts = make(map[string]driver.Stmt)
	}
	cn.stmts[query] = st
	return st, nil
}

func (cn *conn) evict(query string) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if st, ok := cn.stmts[query]; ok {
		st.Close()
		delete(cn.stmts, query)
	}
}

func (cn *conn) Close() error {
	cn.mu.Lock()
	for _, st := range cn.stmts {
		st.Close()
	}
	cn.stmts = nil
	cn.mu.Unlock()
	return cn.driverConn.Close()
}

func (cn *conn) IsValid() bool {
	return !cn.killed.Load() && !cn.dirty.Load() && cn.driverConn.IsValid()
}

func (cn *conn) ResetSession(ctx context.Context) error {
	if cn.killed.Load() || cn.dirty.Load() {
		return driver.ErrBadConn
	}
	return cn.driverConn.ResetSession(ctx)
}

// Interface guards: database/sql finds these by type assertion.
var (
	_ driverConn             = (*conn)(nil)
	_ driver.Connector       = (*connector)(nil)
	_ driver.Validator       = (*conn)(nil)
	_ driver.SessionResetter = (*conn)(nil)
)
