package pipeline

import (
	"context"

	"github.com/edgemcp/edgemcp/pipeline/cmdtemplate"
)

// CommandConnector is what a command connector (redis) offers the
// pipeline: one command, already split into arguments, per call.
type CommandConnector interface {
	ReadOnly() bool
	// CheckCommand refuses, at load, a command the connector will not run
	// (a write on a read-only connector, a command that changes the
	// pooled connection's state).
	CheckCommand(cmd *cmdtemplate.Command) error
	// Do runs one command and returns its reply as JSON-ready values.
	// Cancelling ctx abandons the call.
	Do(ctx context.Context, args []string) (any, error)
}

// CommandExecutor is the execution stage of a tool backed by a command
// connector: the validated inputs are substituted, each inside its own
// argument, and the command is run.
type CommandExecutor struct {
	Connector CommandConnector
	Command   *cmdtemplate.Command
}

func (e *CommandExecutor) Execute(ctx context.Context, call *Call) (*Result, error) {
	args, err := e.Command.RenderAs(call.Inputs, TemplateIdentity(call.Identity))
	if err != nil {
		return nil, renderFailure(err)
	}
	qctx, end := ObserveQuery(ctx, call, QueryInfo{System: "redis", Statement: e.Command.Text()})
	reply, err := e.Connector.Do(qctx, args)
	end(err)
	if err != nil {
		return nil, Fail(StageExecution, err, "command failed: %s", safeMessage(err, "database error"))
	}
	return &Result{Value: reply}, nil
}
