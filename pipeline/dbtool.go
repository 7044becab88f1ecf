package pipeline

import (
	"context"
	"errors"

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
	sql, args, err := d.Statement.RenderAs(call.Inputs, TemplateIdentity(call.Identity))
	if err != nil {
		return nil, renderFailure(err)
	}
	qctx, end := ObserveQuery(ctx, call, QueryInfo{System: d.Connector.Dialect().String(), Statement: d.Statement.Text()})
	rows, err := d.Connector.Query(WithCaller(qctx, call.Identity), sql, args)
	end(err)
	if err != nil {
		return nil, QueryFailure(err)
	}
	return &Result{Value: rows}, nil
}

// QueryFailure is the stage failure of a statement a connector could not
// run: the execution stage's, with the database's safe message, unless
// the connector found the caller unfit (an authentication failure of a
// connector that hands the caller to the database: Postgres
// claims_setting, role_claim).
func QueryFailure(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) && pe.Stage == StageAuth {
		return pe
	}
	return Fail(StageExecution, err, "query failed: %s", safeMessage(err, "database error"))
}

// TemplateIdentity is the verified caller as statement templates read it
// ({{ auth.subject }}, {{ auth.claims.NAME }}); nil when the call has none.
func TemplateIdentity(id *Identity) *sqltemplate.Identity {
	if id == nil {
		return nil
	}
	return &sqltemplate.Identity{Subject: id.Subject, Claims: id.Claims}
}

// renderFailure is the stage failure of a statement that could not be
// rendered: an identity value the caller's identity lacks is an
// authentication failure (README, Statement templates), anything else an
// input the caller got wrong.
func renderFailure(err error) *Error {
	var miss *sqltemplate.MissingIdentityError
	if errors.As(err, &miss) {
		return Fail(StageAuth, err, "%s", err.Error())
	}
	return Fail(StageValidation, err, "%s", err.Error())
}

type callerKey struct{}

// WithCaller gives the connector the verified caller of the call, for
// connectors that pass it to the database (README, Database safety:
// claims_setting, role_claim). id may be nil.
func WithCaller(ctx context.Context, id *Identity) context.Context {
	if id == nil {
		return ctx
	}
	return context.WithValue(ctx, callerKey{}, id)
}

// Caller is the verified caller WithCaller put in ctx, or nil.
func Caller(ctx context.Context) *Identity {
	id, _ := ctx.Value(callerKey{}).(*Identity)
	return id
}
