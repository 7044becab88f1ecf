package sqlagent

import (
	"fmt"
	"strings"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// Stages of the query tools' own checks, named in their errors.
const (
	StageInterceptor pipeline.Stage = "sql interceptor"
	StageGuard       pipeline.Stage = "sql guard"
	StageCost        pipeline.Stage = "cost guard"
)

// guard checks a statement before it reaches the database: the lexer's
// rules for agents (sqltemplate.CheckAgentQuery), then the names of
// excluded tables.
func (ts *toolset) guard(sql string) error {
	if err := sqltemplate.CheckAgentQuery(sql, ts.cfg.Dialect, ts.cfg.BlockFunctions); err != nil {
		return pipeline.Fail(StageGuard, err, "%s", err.Error())
	}
	if len(ts.hidden.exclude) == 0 {
		return nil
	}
	if name := ts.excludedIn(sql); name != "" {
		return pipeline.Fail(StageGuard, nil, "the statement names %s, a table this tool does not show", name)
	}
	return nil
}

// excludedIn returns the first name in sql that may stand for an
// excluded table, compared without regard to case (a server may fold or
// keep it): each name alone, and each qualified pair a.b as schema.table.
// It reads names only, so a view or function that reads an excluded
// table is the role's business (docs/sql-agent.md, Filters).
func (ts *toolset) excludedIn(sql string) string {
	toks, err := sqltemplate.Lex(sql, ts.cfg.Dialect)
	if err != nil {
		return "" // CheckAgentQuery has refused it already
	}
	name := func(t sqltemplate.Token) (string, bool) {
		n, ok := t.Name()
		return strings.ToLower(n), ok
	}
	def := defaultSchema(ts.cfg.Dialect)
	for i, t := range toks {
		n, ok := name(t)
		if !ok {
			continue
		}
		if ts.lowerHidden.excludedName("", n, def) {
			return t.Text
		}
		if i+2 < len(toks) && toks[i+1].IsPunct(".") {
			if m, ok := name(toks[i+2]); ok && ts.lowerHidden.excludedName(n, m, def) {
				return fmt.Sprintf("%s.%s", t.Text, toks[i+2].Text)
			}
		}
	}
	return ""
}

// defaultSchema is where an unqualified name is looked up first; "" when
// it depends on the connection (MySQL's current database).
func defaultSchema(d sqltemplate.Dialect) string {
	switch d {
	case sqltemplate.Postgres:
		return "public"
	case sqltemplate.SQLite:
		return "main"
	}
	return ""
}

// lower is f with its patterns lowercased, for names compared without
// regard to case.
func (f filter) lower() filter {
	low := func(l []string) []string {
		out := make([]string, len(l))
		for i, p := range l {
			out[i] = strings.ToLower(p)
		}
		return out
	}
	return filter{include: low(f.include), exclude: low(f.exclude)}
}
