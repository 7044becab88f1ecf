package pipeline

import (
	"context"
	"encoding/json"
	"time"
)

// AgentSQL is implemented by SQL connectors that can run statements an
// agent writes at run time (pipeline/sqlagent builds the tools;
// docs/sql-agent.md). Whatever the connector's own settings, every method
// runs on the database's terms: in a READ ONLY transaction that is rolled
// back (SQLite: a read-only connection whose authorizer admits reads
// only), under s.Timeout, as s.Role when set, with the caller in ctx
// (WithCaller) handed to the database as for declared tools, and the
// session reset afterwards. Errors are *PublicError, or a *Error of the
// authentication stage when the caller does not fit the connector.
type AgentSQL interface {
	// AgentTables lists the tables and views the session can read, in
	// schema ("" for every schema but the system ones).
	AgentTables(ctx context.Context, s AgentSession, schema string) ([]TableInfo, error)
	// AgentDescribe describes schema.name; nil when the session cannot
	// read it.
	AgentDescribe(ctx context.Context, s AgentSession, schema, name string) (*TableDetail, error)
	// AgentQuery runs q and returns its rows, cut at q's limits.
	AgentQuery(ctx context.Context, s AgentSession, q AgentStatement) (*AgentRows, error)
	// AgentExplain plans q without running it.
	AgentExplain(ctx context.Context, s AgentSession, q AgentStatement) (*AgentPlan, error)
}

// AgentSession is how an agent's statements run.
type AgentSession struct {
	// Role is the role the transaction runs as (Postgres SET LOCAL ROLE),
	// after any role the caller's claims chose; "" keeps the connector's.
	Role string
	// Timeout bounds each statement on the server (Postgres
	// statement_timeout) or from the client (KILL QUERY, interrupt).
	Timeout time.Duration
}

// Bound returns ctx bounded by the session's timeout (fallback when it
// has none) plus grace, ending with cause: the client-side deadline of
// connectors that enforce the timeout themselves. Without either
// timeout, ctx is returned as is.
func (s AgentSession) Bound(ctx context.Context, fallback, grace time.Duration, cause error) (context.Context, context.CancelFunc) {
	d := s.Timeout
	if d <= 0 {
		d = fallback
	}
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, d+grace, cause)
}

// AgentStatement is one statement an agent wrote.
type AgentStatement struct {
	SQL string
	// Args are bound to the statement's parameters ($n, ?), in order:
	// nil, bool, int64, float64, string, or []any and map[string]any
	// (sent as an array or JSON text).
	Args []any
	// MaxRows and MaxResultSize cut the answer (counted as in
	// ValueSize): AgentRows.Truncated then says why.
	MaxRows       int
	MaxResultSize int64
	// Admit, when set, is given the planner's estimate for the statement
	// (EXPLAIN, in the statement's own transaction, as its role) before
	// it runs; its error refuses the statement, which then never runs.
	Admit func(PlanEstimate) error
}

// AgentRows is a statement's answer.
type AgentRows struct {
	Rows *Rows
	// Truncated is "" for a whole answer, else why rows were left out:
	// "max_rows 100", "max_result_size 256 KiB".
	Truncated string
}

// AgentPlan is a statement's plan as the database writes it (Postgres
// and MySQL: their JSON; SQLite: the rows of EXPLAIN QUERY PLAN), and the
// estimate read from it.
type AgentPlan struct {
	Plan     json.RawMessage
	Estimate PlanEstimate
}

// PlanEstimate is what a plan says a statement will cost. A database
// that gives no figure leaves its Has flag false.
type PlanEstimate struct {
	// Cost is the planner's total cost, in the database's own units.
	Cost    float64
	HasCost bool
	// Rows is the largest number of rows any step of the plan is
	// expected to produce (or, in MySQL, to examine).
	Rows    float64
	HasRows bool
}

// TableInfo is one table or view as list_tables shows it.
type TableInfo struct {
	Schema string `json:"schema"`
	Name   string `json:"name"`
	// Type is "table", "view", "materialized view", "foreign table" or
	// "sequence" (MariaDB).
	Type string `json:"type"`
	// RowsEstimate is the database's statistics, nil when it has none.
	RowsEstimate *int64 `json:"rows_estimate,omitempty"`
	Comment      string `json:"comment,omitempty"`
}

// TableDetail is one table as describe_table shows it.
type TableDetail struct {
	TableInfo
	Columns     []ColumnInfo     `json:"columns"`
	PrimaryKey  []string         `json:"primary_key,omitempty"`
	Indexes     []IndexInfo      `json:"indexes,omitempty"`
	ForeignKeys []ForeignKeyInfo `json:"foreign_keys,omitempty"`
}

// ColumnInfo is one column of a table.
type ColumnInfo struct {
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	Nullable bool    `json:"nullable"`
	Default  *string `json:"default,omitempty"`
	Comment  string  `json:"comment,omitempty"`
}

// IndexInfo is one index of a table.
type IndexInfo struct {
	Name    string   `json:"name"`
	Columns []string `json:"columns"`
	Unique  bool     `json:"unique,omitempty"`
	// Definition is the database's own statement for it, where it has one.
	Definition string `json:"definition,omitempty"`
}

// ForeignKeyInfo is one foreign key of a table.
type ForeignKeyInfo struct {
	Name       string   `json:"name,omitempty"`
	Columns    []string `json:"columns"`
	RefSchema  string   `json:"references_schema"`
	RefTable   string   `json:"references_table"`
	RefColumns []string `json:"references_columns"`
}
