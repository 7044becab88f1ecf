package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Statements an agent writes (pipeline.AgentSQL, docs/sql-agent.md) run
// on the database's terms, whatever the connector's read_only says: in
// one transaction per call,
//
//	BEGIN READ ONLY
//	[the caller's settings: claims_setting, role_claim (callerSession)]
//	[SELECT set_config('role', <role>, true), set_config('statement_timeout', <ms>, true)]
//	[EXPLAIN (FORMAT JSON) <sql>        -- the cost guard; its answer decides]
//	DECLARE edgemcp_agent NO SCROLL CURSOR FOR <sql>
//	FETCH FORWARD <max_rows + 1> FROM edgemcp_agent
//	ROLLBACK
//	<readOnlyReset>
//
// pipelined in one round trip (two with the cost guard). The server
// refuses any write (READ ONLY), anything but a query (a cursor is
// declared for SELECT, VALUES or TABLE only, and never for a data-modifying
// WITH), a second statement (a Parse takes one), and computes no more rows
// than the answer can hold (FETCH). The ROLLBACK undoes what a read-only
// transaction still lets through and is transactional (a large object, a
// set_config, a pg_notify); the reset clears what is not (a session
// advisory lock). Values are bound as text of no declared type, so the
// server infers each parameter's type from the statement, as it does for a
// literal.

// agentCursor is the cursor of an agent's query, one per transaction.
const agentCursor = "edgemcp_agent"

// maxPlanSize bounds an EXPLAIN's answer.
const maxPlanSize = 4 << 20

// catalogLimits bound a catalog statement's answer.
var catalogLimits = limits{rows: 10000, size: 16 << 20, cut: true}

// agentStmt is one statement of an agent transaction. lim, when set,
// means its rows are read (and bounded) into a result. A fixed statement
// (the gateway's own, the same text on every call) is prepared once per
// connection, so the server parses and plans it once, as pgx does for
// declared tools; an agent's statement is parsed anew each time (it
// rarely repeats, and would crowd the statement cache).
type agentStmt struct {
	sql   string
	args  [][]byte
	lim   *limits
	fixed bool
}

var (
	agentBegin    = agentStmt{sql: "BEGIN READ ONLY", fixed: true}
	agentRollback = agentStmt{sql: "ROLLBACK", fixed: true}
)

// AgentQuery implements pipeline.AgentSQL.
func (c *Connector) AgentQuery(ctx context.Context, s pipeline.AgentSession, q pipeline.AgentStatement) (*pipeline.AgentRows, error) {
	args, err := textParams(q.Args)
	if err != nil {
		return nil, err
	}
	lim := limits{rows: q.MaxRows, size: q.MaxResultSize, cut: true}
	query := []agentStmt{
		{sql: "DECLARE " + agentCursor + " NO SCROLL CURSOR FOR " + q.SQL, args: args},
		{sql: "FETCH FORWARD " + strconv.Itoa(q.MaxRows+1) + " FROM " + agentCursor, lim: &lim},
	}
	var out *pipeline.AgentRows
	err = c.agentTx(ctx, s, func(tx *agentTx) error {
		if q.Admit != nil {
			res, err := tx.send(false, explainStmt(q.SQL, args))
			if err != nil {
				return err
			}
			plan, err := readPlan(res[0])
			if err != nil {
				return err
			}
			if err := q.Admit(plan.Estimate); err != nil {
				return &refusal{err}
			}
		}
		res, err := tx.send(true, query...)
		if err != nil {
			return err
		}
		out = &pipeline.AgentRows{Rows: res[0].rows, Truncated: res[0].truncated}
		return nil
	})
	return out, err
}

// AgentExplain implements pipeline.AgentSQL: EXPLAIN (FORMAT JSON), never
// ANALYZE, so the statement does not run.
func (c *Connector) AgentExplain(ctx context.Context, s pipeline.AgentSession, q pipeline.AgentStatement) (*pipeline.AgentPlan, error) {
	args, err := textParams(q.Args)
	if err != nil {
		return nil, err
	}
	var plan *pipeline.AgentPlan
	err = c.agentTx(ctx, s, func(tx *agentTx) error {
		res, err := tx.send(true, explainStmt(q.SQL, args))
		if err != nil {
			return err
		}
		plan, err = readPlan(res[0])
		return err
	})
	return plan, err
}

func explainStmt(sql string, args [][]byte) agentStmt {
	return agentStmt{sql: "EXPLAIN (FORMAT JSON) " + sql, args: args, lim: &limits{rows: 1, size: maxPlanSize}}
}

// refusal carries Admit's error through agentTx untouched: it is the
// cost guard's verdict, not a database error.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// agentTx runs one agent transaction: run sends its statements through
// tx.send, the first batch opening the transaction, the last rolling it
// back and resetting the session. A transaction left open by a failure
// or a refusal is rolled back and the session reset before the
// connection goes back to the pool. An attempt that never reached the
// server is retried on another connection, as Query does.
func (c *Connector) agentTx(ctx context.Context, s pipeline.AgentSession, run func(*agentTx) error) error {
	pre, err := c.agentPrelude(ctx, s)
	if err != nil {
		return err
	}
	attempt := func(conn *pgx.Conn) (err error) {
		tx := &agentTx{c: c, ctx: ctx, conn: conn, pending: pre}
		defer func() {
			if err != nil || tx.open {
				resetSession(ctx, conn, strings.Join(readOnlyReset, "; "))
			}
		}()
		return run(tx)
	}
	err = c.onConn(ctx, attempt, nil)
	for retry := 0; err != nil && isUnsent(err) && ctx.Err() == nil && retry < int(c.pool.Config().MaxConns); retry++ {
		err = c.onConn(ctx, attempt, nil)
	}
	var r *refusal
	if errors.As(err, &r) {
		return r.err
	}
	return publicError(ctx, err)
}

// agentPrelude opens the transaction and sets the caller, the role and
// the timeout in it; SET LOCAL's effect (set_config's third argument)
// ends with the transaction.
func (c *Connector) agentPrelude(ctx context.Context, s pipeline.AgentSession) ([]agentStmt, error) {
	pre := []agentStmt{agentBegin}
	if c.caller != nil {
		args, err := c.caller.args(ctx)
		if err != nil {
			return nil, err
		}
		text, err := textParams(args)
		if err != nil {
			return nil, err
		}
		pre = append(pre, agentStmt{sql: c.caller.sql, args: text, fixed: true})
	}
	var sets []string
	var args [][]byte
	set := func(name, value string) {
		args = append(args, []byte(value))
		sets = append(sets, fmt.Sprintf("set_config('%s', $%d, true)", name, len(args)))
	}
	if s.Role != "" {
		set("role", s.Role)
	}
	if s.Timeout > 0 {
		set("statement_timeout", strconv.FormatInt(max(s.Timeout.Milliseconds(), 1), 10))
	}
	if len(sets) > 0 {
		pre = append(pre, agentStmt{sql: "SELECT " + strings.Join(sets, ", "), args: args, fixed: true})
	}
	return pre, nil
}

// agentTx is an agent transaction in progress on one connection.
type agentTx struct {
	c       *Connector
	ctx     context.Context
	conn    *pgx.Conn
	pending []agentStmt // sent before the next batch's own statements
	open    bool        // a batch began the transaction and none ended it
}

// send runs stmts, after what is pending, in one round trip; last ends
// the transaction (ROLLBACK) and resets the session. It returns the
// results of the statements that have limits, in order.
func (tx *agentTx) send(last bool, stmts ...agentStmt) ([]*result, error) {
	all := append(append([]agentStmt{}, tx.pending...), stmts...)
	tx.pending = nil
	if last {
		all = append(all, agentRollback)
		for _, q := range readOnlyReset {
			all = append(all, agentStmt{sql: q, fixed: true})
		}
	}
	b := &pgconn.Batch{}
	for _, st := range all {
		if !st.fixed {
			b.ExecParams(st.sql, st.args, nil, nil, nil)
			continue
		}
		// Named by pgx after its text: one round trip the first time
		// the connection sees it, none after.
		sd, err := tx.conn.Prepare(tx.ctx, st.sql, st.sql)
		if err != nil {
			return nil, err
		}
		b.ExecPrepared(sd.Name, st.args, nil, nil)
	}
	tx.open = true
	mrr := tx.conn.PgConn().ExecBatch(tx.ctx, b)
	var out []*result
	for _, st := range all {
		if !mrr.NextResult() {
			break
		}
		rr := mrr.ResultReader()
		if st.lim == nil {
			if _, err := rr.Close(); err != nil {
				_ = mrr.Close()
				return nil, err
			}
			continue
		}
		res, err := tx.c.collect(tx.conn, pgx.RowsFromResultReader(tx.conn.TypeMap(), rr), *st.lim)
		if err == nil {
			_, err = rr.Close()
		}
		if err != nil {
			_ = mrr.Close()
			return nil, err
		}
		out = append(out, res)
	}
	if err := mrr.Close(); err != nil {
		return nil, err
	}
	tx.open = !last
	for _, res := range out {
		if err := tx.c.finish(tx.ctx, tx.conn, res); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// textParams writes an agent's values as Postgres reads them in text
// form: an array as an array literal (for = ANY($1)), an object as JSON.
func textParams(args []any) ([][]byte, error) {
	out := make([][]byte, len(args))
	for i, a := range args {
		if a == nil {
			continue
		}
		b, err := appendText(nil, a, false)
		if err != nil {
			return nil, &pipeline.PublicError{Public: fmt.Sprintf("params[%d]: %v", i, err)}
		}
		out[i] = b
	}
	return out, nil
}

// appendText appends v's text form; inArray quotes strings and objects
// as array elements.
func appendText(b []byte, v any, inArray bool) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "NULL"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case float64:
		return strconv.AppendFloat(b, v, 'g', -1, 64), nil
	case json.Number:
		return append(b, v...), nil
	case string:
		if !inArray {
			return append(b, v...), nil
		}
		return appendArrayString(b, v), nil
	case []any:
		b = append(b, '{')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendText(b, e, true); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case map[string]any:
		j, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if inArray {
			return appendArrayString(b, string(j)), nil
		}
		return append(b, j...), nil
	}
	return nil, fmt.Errorf("unsupported value %T", v)
}

// appendArrayString quotes an array element: "..." with " and \ escaped.
func appendArrayString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// readPlan reads EXPLAIN (FORMAT JSON)'s one value: [{"Plan": {...}}].
// The estimate is the top node's total cost and the largest row count of
// any node.
func readPlan(res *result) (*pipeline.AgentPlan, error) {
	if len(res.rows.Values) != 1 || len(res.rows.Values[0]) != 1 {
		return nil, &pipeline.PublicError{Public: "EXPLAIN gave no plan"}
	}
	raw, ok := res.rows.Values[0][0].(json.RawMessage)
	if !ok {
		return nil, &pipeline.PublicError{Public: "EXPLAIN gave no JSON plan"}
	}
	var doc []struct{ Plan planNode }
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc) == 0 {
		return nil, &pipeline.PublicError{Public: "EXPLAIN's plan cannot be read", Cause: err}
	}
	top := doc[0].Plan
	return &pipeline.AgentPlan{Plan: raw, Estimate: pipeline.PlanEstimate{
		Cost: top.TotalCost, HasCost: true, Rows: top.maxRows(), HasRows: true,
	}}, nil
}

type planNode struct {
	TotalCost float64    `json:"Total Cost"`
	PlanRows  float64    `json:"Plan Rows"`
	Plans     []planNode `json:"Plans"`
}

func (n planNode) maxRows() float64 {
	m := n.PlanRows
	for _, p := range n.Plans {
		m = max(m, p.maxRows())
	}
	return m
}

var _ pipeline.AgentSQL = (*Connector)(nil)
