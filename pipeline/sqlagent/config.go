package sqlagent

import (
	"errors"
	"fmt"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// Config declares the toolset on one connector.
type Config struct {
	// Prefix starts every tool name: <prefix>_query, ...
	Prefix string
	// Connector names the connector, for operators (pipeline.Tool.Source).
	Connector string
	// DB runs the statements; Dialect is its SQL.
	DB      pipeline.AgentSQL
	Dialect sqltemplate.Dialect

	// Include and Exclude are patterns (path.Match) over "schema.table",
	// or over the table name alone when a pattern has no dot. With
	// Include, only matching tables are shown; Exclude hides tables, and
	// a query that names one is refused (docs/sql-agent.md, Filters).
	Include, Exclude []string

	// MaxRows and MaxResultSize cut a query's answer, which then says it
	// was truncated; 0: DefaultMaxRows, DefaultMaxResultSize.
	MaxRows       int
	MaxResultSize int64
	// StatementTimeout bounds each statement; 0: DefaultStatementTimeout.
	StatementTimeout time.Duration
	// MaxCost and MaxRowsEstimate, when set, refuse a query whose plan
	// (EXPLAIN, before it runs) estimates more: the planner's total cost,
	// or the most rows any step produces. Not for SQLite, whose planner
	// gives no estimate.
	MaxCost         float64
	MaxRowsEstimate float64
	// Role runs every statement as this role (Postgres SET LOCAL ROLE).
	Role string
	// Explain adds <prefix>_explain.
	Explain bool
	// BlockFunctions are the connector's block_functions; the dialect's
	// sqltemplate.ReadOnlyBlockList applies besides, always.
	BlockFunctions []string
	// Interceptor, when set, sees each statement first ({sql, params,
	// caller, tool}) and may return a rewritten one (a string, or {sql,
	// params}) or throw to refuse it (script.InputMapper is one).
	Interceptor pipeline.Transformer
}

// Defaults: an answer an agent can read, a statement that cannot hold a
// connection for long.
const (
	DefaultMaxRows          = 100
	DefaultMaxResultSize    = 256 << 10
	DefaultStatementTimeout = 10 * time.Second
)

// Bounds on what an agent sends.
const (
	maxSQLSize = 64 << 10
	maxParams  = 1000
)

func (c *Config) check() error {
	if c.DB == nil {
		return errors.New("the connector cannot run agent-written SQL")
	}
	if c.Prefix == "" {
		return errors.New("prefix is empty")
	}
	if name := c.Prefix + toolDescribe; !pipeline.ToolNamePattern.MatchString(name) {
		return fmt.Errorf("prefix %q makes tool names such as %q, which do not match %s", c.Prefix, name, pipeline.ToolNamePattern)
	}
	if c.MaxRows < 0 || c.MaxResultSize < 0 || c.StatementTimeout < 0 || c.MaxCost < 0 || c.MaxRowsEstimate < 0 {
		return errors.New("max_rows, max_result_size, statement_timeout, max_cost and max_rows_estimate cannot be negative")
	}
	if err := checkPatterns(c.Include, c.Exclude); err != nil {
		return err
	}
	switch c.Dialect {
	case sqltemplate.Postgres:
	case sqltemplate.MySQL, sqltemplate.SQLite:
		if c.Role != "" {
			return fmt.Errorf("role applies to PostgreSQL; on %s connect as a user that has only the grants the agent should have", c.Dialect)
		}
		if c.Dialect == sqltemplate.SQLite && (c.MaxCost > 0 || c.MaxRowsEstimate > 0) {
			return errors.New("max_cost and max_rows_estimate need a planner estimate, which SQLite's EXPLAIN QUERY PLAN does not give; bound SQLite statements with statement_timeout")
		}
	default:
		return fmt.Errorf("dialect %s is not supported", c.Dialect)
	}
	if c.MaxRows == 0 {
		c.MaxRows = DefaultMaxRows
	}
	if c.MaxResultSize == 0 {
		c.MaxResultSize = DefaultMaxResultSize
	}
	if c.StatementTimeout == 0 {
		c.StatementTimeout = DefaultStatementTimeout
	}
	return nil
}
