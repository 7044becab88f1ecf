package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"sync"

	"modernc.org/sqlite"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// Statements an agent writes (pipeline.AgentSQL, docs/sql-agent.md) run
// on a pool of their own, whatever the connector's read_only says: the
// file opened read-only (mode=ro), PRAGMA query_only on, and an
// authorizer that lets SQLite compile nothing but reads. SQLite asks it
// about every table and column a statement reads, every function it
// calls and every other action, while it compiles the statement, so a
// write, an ATTACH, a PRAGMA that sets anything, a temporary table or a
// transaction is refused by the database whatever the text looks like,
// as is a function of sqltemplate.ReadOnlyBlockList. Such a connection
// cannot change its session, so nothing needs resetting. The statement
// timeout interrupts the statement.

// agentPool is the connector's read-only pool for agents.
type agentPool struct {
	once sync.Once
	db   *sql.DB
	err  error
}

// errInMemory: a second pool of an in-memory database would see another,
// empty database.
var errInMemory = &pipeline.PublicError{Public: "agent-written SQL needs a database file: an in-memory database cannot be opened a second time, read-only"}

// agentDB opens the agent pool on first use.
func (c *Connector) agentDB() (*sql.DB, error) {
	c.agent.once.Do(func() {
		file, err := filePath(c.path)
		if err != nil || file == "" {
			c.agent.err = errInMemory
			return
		}
		busy := defaultBusyTimeout
		if c.timeout > 0 {
			busy = c.timeout
		}
		dsn, err := buildDSN(c.path, true, busy)
		if err != nil {
			c.agent.err = &pipeline.PublicError{Public: "sqlite: invalid database path", Cause: err}
			return
		}
		db := sql.OpenDB(roConnector{dsn: dsn, drv: agentDriver})
		n := c.db.Stats().MaxOpenConnections
		db.SetMaxOpenConns(n)
		db.SetMaxIdleConns(n)
		c.agent.db = db
	})
	return c.agent.db, c.agent.err
}

func (p *agentPool) close() {
	p.once.Do(func() {}) // no pool may open after Close
	if p.db != nil {
		_ = p.db.Close()
	}
}

// agentDriver is a private modernc driver whose connections all get
// agentAuthorizer (unregistered, like roDriver).
var agentDriver = authorizedDriver(agentAuthorizer)

// agentBlocked are the functions agentAuthorizer refuses.
var agentBlocked = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range sqltemplate.ReadOnlyBlockList(sqltemplate.SQLite) {
		m[f] = true
	}
	return m
}()

// introspection are the pragmas that only read the schema, which the
// catalog's table-valued functions (pragma_table_info(...)) use.
var introspection = map[string]bool{
	"table_info": true, "table_xinfo": true, "index_list": true, "index_info": true,
	"index_xinfo": true, "foreign_key_list": true,
}

// agentAuthorizer admits reads: SELECT, reading a column, a recursive
// CTE, a function not blocked, a schema-reading pragma. Everything else
// (every write, DDL, ATTACH, a transaction, any other pragma) is denied.
func agentAuthorizer(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRead, sqlite.AuthRecursive:
		return sqlite.AuthorizerOK
	case sqlite.AuthFunction:
		if !agentBlocked[strings.ToLower(arg2)] {
			return sqlite.AuthorizerOK
		}
	case sqlite.AuthPragma:
		if introspection[strings.ToLower(arg1)] {
			return sqlite.AuthorizerOK
		}
	}
	return sqlite.AuthorizerDeny
}

// agentQuery runs one statement on the agent pool under the session's
// timeout (the connector's when it sets none).
func (c *Connector) agentQuery(ctx context.Context, s pipeline.AgentSession, query string, args []any, lim limits) (*pipeline.Rows, string, error) {
	if s.Role != "" {
		return nil, "", &pipeline.PublicError{Public: "role applies to PostgreSQL connectors"}
	}
	db, err := c.agentDB()
	if err != nil {
		return nil, "", err
	}
	qctx, cancel := s.Bound(ctx, c.timeout, 0, errStatementTimeout)
	defer cancel()
	bound, err := bindArgs(args)
	if err != nil {
		return nil, "", &pipeline.PublicError{Public: "cannot bind params: " + err.Error()}
	}
	rows, err := db.QueryContext(qctx, query, bound...)
	if err != nil {
		return nil, "", c.publicError(ctx, qctx, err)
	}
	res, truncated, err := collect(rows, lim)
	if err != nil {
		return nil, "", c.publicError(ctx, qctx, err)
	}
	return res, truncated, nil
}

// AgentQuery implements pipeline.AgentSQL. SQLite's planner gives no
// estimate, so a statement with Admit is refused.
func (c *Connector) AgentQuery(ctx context.Context, s pipeline.AgentSession, q pipeline.AgentStatement) (*pipeline.AgentRows, error) {
	if q.Admit != nil {
		return nil, &pipeline.PublicError{Public: "SQLite's planner gives no cost estimate to check"}
	}
	rows, truncated, err := c.agentQuery(ctx, s, q.SQL, q.Args, limits{Rows: q.MaxRows, Size: q.MaxResultSize, Cut: true})
	if err != nil {
		return nil, err
	}
	return &pipeline.AgentRows{Rows: rows, Truncated: truncated}, nil
}

// AgentExplain implements pipeline.AgentSQL: the rows of EXPLAIN QUERY
// PLAN ({id, parent, detail}: SCAN or SEARCH ... USING INDEX), which
// carry no estimate.
func (c *Connector) AgentExplain(ctx context.Context, s pipeline.AgentSession, q pipeline.AgentStatement) (*pipeline.AgentPlan, error) {
	rows, _, err := c.agentQuery(ctx, s, "EXPLAIN QUERY PLAN "+q.SQL, q.Args, limits{Rows: 10000, Size: 4 << 20})
	if err != nil {
		return nil, err
	}
	steps := make([]map[string]any, len(rows.Values))
	for i, r := range rows.Values {
		steps[i] = map[string]any{"id": r[0], "parent": r[1], "detail": r[3]}
	}
	plan, err := json.Marshal(steps)
	if err != nil {
		return nil, err
	}
	return &pipeline.AgentPlan{Plan: plan}, nil
}

var _ pipeline.AgentSQL = (*Connector)(nil)
