package caddymodule

import (
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// The statement checks of database safety (README "Database safety"):
// `caddy adapt` runs them (checkStatementsAtAdapt) and Provision runs them
// again on the compiled statement, for JSON configs.

// sqlDialect is the lexer dialect the checks read a connector's
// statements in; ok is false for connectors whose tools are not SQL.
func sqlDialect(c ConnectorConfig) (sqltemplate.Dialect, bool) {
	drv, ok := c.sqlDriver()
	if !ok {
		return 0, false
	}
	return drv.Dialect(), true
}

// statementRules are the load-time checks for statements on connector c:
// a read_only one also refuses its dialect's default block list unless
// block_functions none/only dropped it.
func statementRules(c ConnectorConfig, readOnly bool) sqltemplate.Rules {
	r := sqltemplate.Rules{OneStatement: true, ReadOnly: readOnly, BlockFunctions: c.BlockFunctions}
	if d, ok := sqlDialect(c); ok && readOnly && !c.NoDefaultBlocks {
		r.DefaultBlocked = sqltemplate.ReadOnlyBlockList(d)
	}
	return r
}
