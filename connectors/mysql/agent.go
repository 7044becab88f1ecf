package mysql

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Statements an agent writes (pipeline.AgentSQL, docs/sql-agent.md) run
// on the server's terms, whatever the connector's read_only says: inside
// START TRANSACTION READ ONLY, which the server holds against any write
// (error 1792, stored routines included), ended by ROLLBACK, never
// COMMIT. A prepared statement (the form every statement with values
// takes) holds one statement, and the connector never enables
// multi-statements. A statement that may leave state in its session (a
// user variable, a named lock: changesSession) has its connection closed
// afterwards. The statement timeout is the client's (KILL QUERY when it
// passes), besides the session's max_statement_time on MariaDB. An
// answer cut at its limits abandons the rest: the statement is killed
// and its connection closed.

// maxPlanSize bounds an EXPLAIN's answer.
const maxPlanSize = 4 << 20

// catalogLimits bound a catalog statement's answer.
var catalogLimits = limits{Rows: 10000, Size: 16 << 20, Cut: true}

// AgentQuery implements pipeline.AgentSQL.
func (c *Connector) AgentQuery(ctx context.Context, s pipeline.AgentSession, q pipeline.AgentStatement) (*pipeline.AgentRows, error) {
	args, err := bindArgs(q.Args)
	if err != nil {
		return nil, &pipeline.PublicError{Public: "cannot bind params: " + err.Error()}
	}
	var out *pipeline.AgentRows
	err = c.agentTx(ctx, s, q.SQL, func(tx *agentTx) error {
		if q.Admit != nil {
			plan, err := tx.explain(q.SQL, args)
			if err != nil {
				return err
			}
			if err := q.Admit(plan.Estimate); err != nil {
				return &refusal{err}
			}
		}
		rows, truncated, err := tx.query(q.SQL, args, limits{Rows: q.MaxRows, Size: q.MaxResultSize, Cut: true}, true)
		if err != nil {
			return err
		}
		out = &pipeline.AgentRows{Rows: rows, Truncated: truncated}
		return nil
	})
	return out, err
}

// AgentExplain implements pipeline.AgentSQL: EXPLAIN FORMAT=JSON, which
// plans the statement without running it.
func (c *Connector) AgentExplain(ctx context.Context, s pipeline.AgentSession, q pipeline.AgentStatement) (*pipeline.AgentPlan, error) {
	args, err := bindArgs(q.Args)
	if err != nil {
		return nil, &pipeline.PublicError{Public: "cannot bind params: " + err.Error()}
	}
	var plan *pipeline.AgentPlan
	err = c.agentTx(ctx, s, q.SQL, func(tx *agentTx) (err error) {
		plan, err = tx.explain(q.SQL, args)
		return err
	})
	return plan, err
}

// refusal carries Admit's error through agentTx untouched: the cost
// guard's verdict, not a server error.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// agentTx is an agent transaction in progress on one connection.
type agentTx struct {
	c   *Connector
	ctx context.Context
	tx  *sql.Tx
	cn  *conn
}

// agentTx runs run in a READ ONLY transaction on one connection, rolled
// back afterwards, under the session's timeout (the connector's when it
// sets none). agentSQL, the agent's statement ("" for the catalog's),
// decides whether the connection is closed afterwards (changesSession).
// An attempt that never reached the server is retried, as Query does.
func (c *Connector) agentTx(ctx context.Context, s pipeline.AgentSession, agentSQL string, run func(*agentTx) error) error {
	if s.Role != "" {
		return &pipeline.PublicError{Public: "role applies to PostgreSQL connectors"}
	}
	qctx, cancel := s.Bound(ctx, c.timeout, killGrace, errStatementTimeout)
	defer cancel()
	attempt := func() error {
		sc, err := c.db.Conn(qctx)
		if err != nil {
			return err
		}
		defer sc.Close()
		var cn *conn
		if err := sc.Raw(func(dc any) error { cn = dc.(*conn); return nil }); err != nil {
			return err
		}
		defer c.watch(qctx, cn)()
		if agentSQL != "" && changesSession(agentSQL) {
			cn.dirty.Store(true)
		}
		tx, err := sc.BeginTx(qctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		return run(&agentTx{c: c, ctx: qctx, tx: tx, cn: cn})
	}
	err := attempt()
	for retry := 0; unsent(err) && qctx.Err() == nil && retry < c.maxConns; retry++ {
		err = attempt()
	}
	var r *refusal
	if errors.As(err, &r) {
		return r.err
	}
	if err != nil {
		return publicError(ctx, qctx, err)
	}
	return nil
}

// query runs one statement of the transaction. An agent's statement is
// not kept in the connection's cache of prepared statements: it rarely
// repeats, and would push out the declared tools' statements.
func (tx *agentTx) query(q string, args []any, lim limits, agents bool) (*pipeline.Rows, string, error) {
	if agents && len(args) > 0 {
		defer tx.cn.evict(q)
	}
	rs, err := tx.tx.QueryContext(tx.ctx, q, args...)
	if err != nil {
		return nil, "", err
	}
	return collect(rs, lim, func() { tx.c.abandon(tx.cn) })
}

// explain reads EXPLAIN FORMAT=JSON. The estimate's cost is MySQL's
// query_cost (or MariaDB 11's cost; MariaDB 10 gives none); its rows are
// the most rows any table of a nested loop is expected to examine: the
// product of the rows of the tables before it (filtered) and its own.
func (tx *agentTx) explain(q string, args []any) (*pipeline.AgentPlan, error) {
	rows, _, err := tx.query("EXPLAIN FORMAT=JSON "+q, args, limits{Rows: 1, Size: maxPlanSize}, true)
	if err != nil {
		return nil, err
	}
	if len(rows.Values) != 1 || len(rows.Values[0]) != 1 {
		return nil, &pipeline.PublicError{Public: "EXPLAIN gave no plan"}
	}
	text, _ := rows.Values[0][0].(string)
	var doc map[string]any
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return nil, &pipeline.PublicError{Public: "EXPLAIN's plan cannot be read", Cause: err}
	}
	plan := &pipeline.AgentPlan{Plan: json.RawMessage(text)}
	block, _ := doc["query_block"].(map[string]any)
	if info, ok := block["cost_info"].(map[string]any); ok {
		plan.Estimate.Cost, plan.Estimate.HasCost = planNumber(info["query_cost"])
	} else if _, ok := block["cost"]; ok {
		plan.Estimate.Cost, plan.Estimate.HasCost = planNumber(block["cost"])
	}
	walkPlan(doc, &plan.Estimate.Rows)
	plan.Estimate.HasRows = true
	return plan, nil
}

// walkPlan raises *most to the rows examined by any table of the plan.
func walkPlan(v any, most *float64) {
	switch v := v.(type) {
	case map[string]any:
		if loop, ok := v["nested_loop"].([]any); ok {
			produced := 1.0
			for _, step := range loop {
				if t := firstTable(step); t != nil {
					rows, filtered := tableRows(t)
					examined := produced * rows
					*most = max(*most, examined)
					produced = examined * filtered / 100
				}
			}
		} else if t, ok := v["table"].(map[string]any); ok {
			rows, _ := tableRows(t)
			*most = max(*most, rows)
		}
		for _, e := range v {
			walkPlan(e, most)
		}
	case []any:
		for _, e := range v {
			walkPlan(e, most)
		}
	}
}

// firstTable finds the table of a nested loop's step, which MariaDB
// wraps (block-nl-join, ...).
func firstTable(v any) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if t, ok := m["table"].(map[string]any); ok {
		return t
	}
	for _, e := range m {
		if t := firstTable(e); t != nil {
			return t
		}
	}
	return nil
}

// tableRows reads a table's rows per scan (MySQL rows_examined_per_scan,
// MariaDB rows) and the percentage its condition keeps.
func tableRows(t map[string]any) (rows, filtered float64) {
	rows, ok := planNumber(t["rows_examined_per_scan"])
	if !ok {
		rows, _ = planNumber(t["rows"])
	}
	filtered, ok = planNumber(t["filtered"])
	if !ok {
		filtered = 100
	}
	return rows, filtered
}

// planNumber reads a number MySQL may write as a string ("1234.50").
func planNumber(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case string:
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil
	}
	return 0, false
}

var _ pipeline.AgentSQL = (*Connector)(nil)
