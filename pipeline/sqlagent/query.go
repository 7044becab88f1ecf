package sqlagent

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/edgemcp/edgemcp/pipeline"
)

// query is the execution stage of <prefix>_query.
func (ts *toolset) query(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
	q, err := ts.statement(ctx, call)
	if err != nil {
		return nil, err
	}
	qctx, end := ts.observe(ctx, call)
	rows, err := ts.cfg.DB.AgentQuery(pipeline.WithCaller(qctx, call.Identity), ts.session, q)
	end(err)
	if err != nil {
		return nil, failure(err)
	}
	return &pipeline.Result{Value: answer{rows: rows.Rows, truncated: rows.Truncated}}, nil
}

// explain is the execution stage of <prefix>_explain.
func (ts *toolset) explain(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
	q, err := ts.statement(ctx, call)
	if err != nil {
		return nil, err
	}
	q.Admit = nil // the plan is the answer, whatever it costs
	qctx, end := ts.observe(ctx, call)
	plan, err := ts.cfg.DB.AgentExplain(pipeline.WithCaller(qctx, call.Identity), ts.session, q)
	end(err)
	if err != nil {
		return nil, failure(err)
	}
	out := map[string]any{"plan": plan.Plan}
	if e := plan.Estimate; e.HasCost || e.HasRows {
		est := map[string]any{}
		if e.HasCost {
			est["cost"] = e.Cost
		}
		if e.HasRows {
			est["rows"] = e.Rows
		}
		out["estimate"] = est
	}
	return &pipeline.Result{Value: out}, nil
}

// observe opens the outbound call's telemetry. The statement is the
// agent's own and may hold values, so it is not recorded.
func (ts *toolset) observe(ctx context.Context, call *pipeline.Call) (context.Context, func(error)) {
	return pipeline.ObserveQuery(ctx, call, pipeline.QueryInfo{System: ts.cfg.Dialect.String(), Statement: "(agent-written statement, not recorded)"})
}

// failure is the stage failure of a statement the database did not run:
// a refusal of the cost guard as it is, anything else as a query failure.
func failure(err error) error {
	if pe, ok := err.(*pipeline.Error); ok && pe.Stage == StageCost {
		return pe
	}
	return pipeline.QueryFailure(err)
}

// statement reads the call's sql and params, lets the interceptor rewrite
// or refuse them, and checks what it returns; with a cost limit, Admit
// holds the plan's estimate against it.
func (ts *toolset) statement(ctx context.Context, call *pipeline.Call) (pipeline.AgentStatement, error) {
	sql, params, err := readStatement(call.Inputs)
	if err != nil {
		return pipeline.AgentStatement{}, pipeline.Fail(pipeline.StageValidation, err, "%s", err.Error())
	}
	if ts.cfg.Interceptor != nil {
		if sql, params, err = ts.intercept(ctx, call, sql, params); err != nil {
			return pipeline.AgentStatement{}, err
		}
	}
	if err := ts.guard(sql); err != nil {
		return pipeline.AgentStatement{}, err
	}
	q := pipeline.AgentStatement{SQL: sql, Args: params, MaxRows: ts.cfg.MaxRows, MaxResultSize: ts.cfg.MaxResultSize}
	if ts.cfg.MaxCost > 0 || ts.cfg.MaxRowsEstimate > 0 {
		q.Admit = ts.admit
	}
	return q, nil
}

// admit is the cost guard: the plan's estimate against max_cost and
// max_rows_estimate, both said in the refusal so that the agent can
// narrow its query.
func (ts *toolset) admit(e pipeline.PlanEstimate) error {
	if ts.cfg.MaxCost > 0 {
		if !e.HasCost {
			return pipeline.Fail(StageCost, nil, "max_cost cannot be checked: this server's EXPLAIN gives no cost estimate (MariaDB before 11.0); the operator should use max_rows_estimate")
		}
		if e.Cost > ts.cfg.MaxCost {
			return pipeline.Fail(StageCost, nil, "the planner estimates a cost of %s, over max_cost %s: narrow the query (WHERE on indexed columns, fewer joins) and try again", number(e.Cost), number(ts.cfg.MaxCost))
		}
	}
	if ts.cfg.MaxRowsEstimate > 0 {
		if !e.HasRows {
			return pipeline.Fail(StageCost, nil, "max_rows_estimate cannot be checked: this server's EXPLAIN gives no row estimate")
		}
		if e.Rows > ts.cfg.MaxRowsEstimate {
			return pipeline.Fail(StageCost, nil, "the planner estimates %s rows for a step of the plan, over max_rows_estimate %s: narrow the query (WHERE on indexed columns, fewer joins) and try again", number(e.Rows), number(ts.cfg.MaxRowsEstimate))
		}
	}
	return nil
}

func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// intercept runs the interceptor on {sql, params, caller, tool}: nothing
// returned keeps the statement, a string replaces the SQL, {sql, params}
// both (params left out keeps them); a throw refuses the statement.
func (ts *toolset) intercept(ctx context.Context, call *pipeline.Call, sql string, params []any) (string, []any, error) {
	var caller any
	if id := call.Identity; id != nil {
		caller = map[string]any{"subject": id.Subject, "claims": id.Claims}
	}
	out, err := ts.cfg.Interceptor.Transform(ctx, map[string]any{"sql": sql, "params": params, "caller": caller, "tool": call.Tool.Name})
	if err != nil {
		return "", nil, pipeline.Fail(StageInterceptor, err, "refused: %s", pipeline.SafeText(err, "the interceptor failed"))
	}
	switch v := out.(type) {
	case nil:
		return sql, params, nil
	case string:
		return v, params, nil
	case map[string]any:
		s, ok := v["sql"].(string)
		if !ok {
			return "", nil, pipeline.Fail(StageInterceptor, nil, "the interceptor returned an object without a string sql")
		}
		if p, ok := v["params"]; ok && p != nil {
			if params, err = readParams(p); err != nil {
				return "", nil, pipeline.Fail(StageInterceptor, err, "the interceptor returned bad params: %v", err)
			}
		}
		return s, params, nil
	}
	return "", nil, pipeline.Fail(StageInterceptor, nil, "the interceptor must return a string, {sql, params} or nothing")
}

// readStatement reads and bounds the call's sql and params.
func readStatement(in map[string]any) (string, []any, error) {
	for k := range in {
		if k != "sql" && k != "params" {
			return "", nil, fmt.Errorf("unknown input %q (the inputs are sql and params)", k)
		}
	}
	sql, ok := in["sql"].(string)
	if !ok || sql == "" {
		return "", nil, fmt.Errorf("sql: a statement (string) is required")
	}
	if len(sql) > maxSQLSize {
		return "", nil, fmt.Errorf("sql: longer than %s", pipeline.SizeText(maxSQLSize))
	}
	params, err := readParams(in["params"])
	return sql, params, err
}

// readParams reads params: numbers become int64, or float64 when not
// whole (what every driver binds); arrays and objects stay as they are.
func readParams(v any) ([]any, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("params: an array is required")
	}
	if len(list) > maxParams {
		return nil, fmt.Errorf("params: more than %d values", maxParams)
	}
	out := make([]any, len(list))
	for i, e := range list {
		n, err := paramValue(e)
		if err != nil {
			return nil, fmt.Errorf("params[%d]: %w", i, err)
		}
		out[i] = n
	}
	return out, nil
}

func paramValue(v any) (any, error) {
	switch v := v.(type) {
	case nil, bool, string, int64, map[string]any:
		return v, nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("not a finite number")
		}
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v), nil
		}
		return v, nil
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n, nil
		}
		f, err := v.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s out of range", v)
		}
		return f, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			n, err := paramValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported value %T", v)
}
