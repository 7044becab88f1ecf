package pipeline

import (
	"context"

	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// SQLConnector is what a database connector offers the pipeline.
type SQLConnector interface {
	Dialect() sqltemplate.Dialect
	ReadOnly() bool
	// Query runs one statement with bound args and returns normalized rows.
	// Cancelling ctx (the client went away) cancels the query.
	Query(ctx context.Context, sql string, args []any) (*Rows, error)
}

// DBExecutor is the execution stage of a DB-backed tool: the inputs, already
// validated, are bound into the compiled statement and run on the connector.
type DBExecutor struct {
	Connector SQLConnector
	Statement *sqltemplate.Statement
}

func (d *DBExecutor) Execute(ctx context.Context, call *Call) (*Result, error) {
	sql, args, err := d.Statement.Render(call.Inputs)
	if err != nil {
		return nil, Fail(StageValidation, err, "%s", err.Error())
	}
	qctx, end := ObserveQuery(ctx, call, QueryInfo{System: d.Connector.Dialect().String(), Statement: d.Statement.Text()})
	rows, err := d.Connector.Query(qctx, sql, args)
	end(err)
	if err != nil {
		return nil, Fail(StageExecution, err, "query failed: %s", safeMessage(err, "database error"))
	}
	return &Result{Value: rows}, nil
}
