package sqlagent

import (
	"fmt"
	"strings"

	"github.com/edgemcp/edgemcp/pipeline"
)

// The tool descriptions tell the agent the dialect, the limits and that
// writes are refused, so that its first statement is a valid one.

func dialectName(d fmt.Stringer) string {
	switch d.String() {
	case "postgres":
		return "PostgreSQL"
	case "mysql":
		return "MySQL/MariaDB"
	case "sqlite":
		return "SQLite"
	}
	return d.String()
}

func (ts *toolset) describeList() string {
	return fmt.Sprintf("List the tables and views of the %s database that you can query, with their schema, an estimate of their rows and their comment. Start here, then call %s for a table's columns.",
		dialectName(ts.cfg.Dialect), ts.cfg.Prefix+toolDescribe)
}

func (ts *toolset) describeDescribe() string {
	return fmt.Sprintf("Describe one table or view of the %s database: its columns (name, type, nullable, default, comment), primary key, indexes and foreign keys. Call it before writing a query on the table with %s.",
		dialectName(ts.cfg.Dialect), ts.cfg.Prefix+toolQuery)
}

func (ts *toolset) describeQuery() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Run one read-only SQL query on the %s database and get its rows as {columns, rows, row_count, truncated}. ", dialectName(ts.cfg.Dialect))
	b.WriteString(ts.rules())
	return b.String()
}

func (ts *toolset) describeExplain() string {
	return fmt.Sprintf("Show the %s planner's plan for one read-only query without running it, with its estimated cost and rows; the same rules as %s apply. %s",
		dialectName(ts.cfg.Dialect), ts.cfg.Prefix+toolQuery, ts.limitsText())
}

// rules says what runs and what is refused.
func (ts *toolset) rules() string {
	var b strings.Builder
	if ts.cfg.Dialect.String() == "postgres" {
		b.WriteString("Write parameters as $1, $2 ... and pass their values in params. ")
	} else {
		b.WriteString("Write parameters as ? and pass their values in params, in order. ")
	}
	b.WriteString("Only a single SELECT, WITH, VALUES or TABLE statement runs, in a read-only transaction")
	if ts.cfg.Role != "" {
		fmt.Fprintf(&b, " as role %s", ts.cfg.Role)
	}
	b.WriteString(": writes, DDL, locking reads, several statements and functions with side effects are refused. ")
	b.WriteString(ts.limitsText())
	return b.String()
}

func (ts *toolset) limitsText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Limits: at most %d rows and %s per answer (a longer answer is cut and says truncated: true; add LIMIT or aggregate), %s per statement",
		ts.cfg.MaxRows, pipeline.SizeText(ts.cfg.MaxResultSize), ts.cfg.StatementTimeout)
	if ts.cfg.MaxCost > 0 {
		fmt.Fprintf(&b, ", a planner cost of at most %g", ts.cfg.MaxCost)
	}
	if ts.cfg.MaxRowsEstimate > 0 {
		fmt.Fprintf(&b, ", at most %g rows estimated for any step of the plan", ts.cfg.MaxRowsEstimate)
	}
	b.WriteString(".")
	if ts.cfg.MaxCost > 0 || ts.cfg.MaxRowsEstimate > 0 {
		b.WriteString(" A query over the estimate is refused before it runs: narrow it with WHERE on indexed columns.")
	}
	return b.String()
}
