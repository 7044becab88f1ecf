package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
)

// Engine holds the compiled tools of one configuration and runs tools/call
// through the fixed stage sequence of docs/architecture.md, Stages. It is immutable after
// NewEngine and safe for concurrent use.
type Engine struct {
	tools     []*Tool
	byName    map[string]*Tool
	aliases   map[string]*Tool
	sequencer Sequencer // nil: no guardrails across calls
}

// NewEngine checks the tools and indexes them by name and by their
// aliases. An alias that is a tool's name, or that two tools claim, is
// left out: a name always means one tool.
func NewEngine(tools []*Tool, opts ...EngineOption) (*Engine, error) {
	e := &Engine{byName: make(map[string]*Tool, len(tools)), aliases: map[string]*Tool{}}
	for _, o := range opts {
		o(e)
	}
	for _, t := range tools {
		if err := t.Check(); err != nil {
			return nil, err
		}
		if _, dup := e.byName[t.Name]; dup {
			return nil, fmt.Errorf("tool %q declared twice", t.Name)
		}
		e.byName[t.Name] = t
		e.tools = append(e.tools, t)
	}
	claimed := map[string]int{}
	for _, t := range tools {
		for _, a := range t.Aliases {
			claimed[a]++
		}
	}
	for _, t := range tools {
		for _, a := range t.Aliases {
			if _, isName := e.byName[a]; !isName && claimed[a] == 1 {
				e.aliases[a] = t
			}
		}
	}
	return e, nil
}

// Aliases returns the names that resolve to a tool besides its own.
func (e *Engine) Aliases() map[string]*Tool { return e.aliases }

// Tools returns the tools in declaration order.
func (e *Engine) Tools() []*Tool { return e.tools }

// Lookup is the tool resolution stage.
func (e *Engine) Lookup(name string) *Tool {
	if t, ok := e.byName[name]; ok {
		return t
	}
	return e.aliases[name]
}

// Call runs one tools/call: resolution → auth → input transform → input
// validation → guardrail → approval → execution → output transform →
// guardrail record. The first
// failing stage stops the call; its *Error carries the wire code and a
// message safe to show. The response stage (encoding the result for the
// client's protocol version) belongs to the transport.
func (e *Engine) Call(ctx context.Context, name string, args map[string]any, req *RequestInfo) (*Result, *Error) {
	call, res, perr := e.Prepare(ctx, name, args, req)
	if call == nil {
		return res, perr
	}
	return e.Run(ctx, call)
}

// Prepare runs the stages before the execution: resolution, auth, input
// transform, input validation, guardrail and approval. It returns the
// call ready to Run, or, with a nil call, what ends it already: the
// failure, or the approval's question to the client. A task (docs/tasks.md) is made
// between Prepare and Run, so that what refuses a call refuses it before
// a task exists, and only the work runs in the background.
func (e *Engine) Prepare(ctx context.Context, name string, args map[string]any, req *RequestInfo) (call *Call, res *Result, perr *Error) {
	tool := e.Lookup(name)
	if tool == nil {
		return nil, nil, &Error{Code: CodeToolNotFound, Stage: StageResolution, Message: fmt.Sprintf("tool %q not found", name)}
	}
	call = &Call{Tool: tool, Inputs: args, Request: req}
	stage := StageAuth
	defer func() {
		if r := recover(); r != nil {
			call, res, perr = nil, nil, panicked(stage, r)
		}
	}()

	if tool.Auth != nil {
		sctx, end := observeStage(ctx, call, StageAuth)
		id, err := tool.Auth.Authorize(sctx, call)
		end(err)
		if err != nil {
			return nil, nil, stageError(StageAuth, err, "not authorized")
		}
		call.Identity = id
	}

	stage = StageInputTransform
	if tool.InputMapper != nil {
		sctx, end := observeStage(ctx, call, stage)
		out, err := tool.InputMapper.Transform(sctx, payload(call, "inputs", call.Inputs))
		end(err)
		if err != nil {
			return nil, nil, stageError(stage, err, "script failed")
		}
		m, ok := out.(map[string]any)
		if !ok {
			return nil, nil, Fail(stage, nil, "input mapper must return an object, got %s", describe(out))
		}
		call.Inputs = m
	}

	stage = StageValidation
	if tool.Inputs != nil {
		_, end := observeStage(ctx, call, stage)
		in, err := tool.Inputs.Validate(call.Inputs)
		end(err)
		if err != nil {
			return nil, nil, Fail(stage, err, "%s", err.Error())
		}
		call.Inputs = in
	}

	stage = StageGuardrail
	if e.sequencer != nil {
		sctx, end := observeStage(ctx, call, stage)
		err := e.sequencer.Admit(sctx, call)
		end(err)
		if err != nil {
			return nil, nil, stageError(stage, err, "refused")
		}
	}

	stage = StageApproval
	if tool.Approval != nil {
		sctx, end := observeStage(ctx, call, stage)
		err := tool.Approval.Approve(sctx, call)
		var ask *AskClient
		if errors.As(err, &ask) {
			// Not a failure: the client answers and calls again.
			end(nil)
			return nil, &Result{Native: ask.Native}, nil
		}
		end(err)
		if err != nil {
			return nil, nil, stageError(stage, err, "not approved")
		}
	}
	return call, nil, nil
}

// Run runs the execution and output transform stages of a call Prepare
// returned, and the guardrail's record of its success.
func (e *Engine) Run(ctx context.Context, call *Call) (res *Result, perr *Error) {
	stage := StageExecution
	defer func() {
		if r := recover(); r != nil {
			res, perr = nil, panicked(stage, r)
		}
	}()
	tool := call.Tool
	sctx, end := observeStage(ctx, call, stage)
	res, err := tool.Executor.Execute(sctx, call)
	end(err)
	if err != nil {
		return nil, stageError(stage, err, "failed")
	}

	stage = StageOutputTransform
	if tool.OutputMapper != nil && res.Native == nil {
		sctx, end := observeStage(ctx, call, stage)
		out, err := tool.OutputMapper.Transform(sctx, payload(call, "results", res.Value))
		end(err)
		if err != nil {
			return nil, stageError(stage, err, "script failed")
		}
		// Meta (a stale cache serve's notice) and the cache's hint belong
		// to the call, not to the value the mapper replaced.
		res = &Result{Value: out, Meta: res.Meta, CacheHint: res.CacheHint}
	}

	stage = StageGuardrail
	if e.sequencer != nil {
		if err := e.sequencer.Record(ctx, call); err != nil {
			return nil, stageError(stage, err, "the call's success could not be recorded, so its result is withheld")
		}
	}
	return res, nil
}

// panicked is a panic in a stage: a bug. The caller gets a stage failure,
// the stack goes to the debug log through Cause.
func panicked(stage Stage, r any) *Error {
	return Fail(stage, fmt.Errorf("panic: %v\n%s", r, debug.Stack()), "internal error")
}

// stageError keeps an *Error raised inside a stage (it already names its
// stage and code) and wraps anything else as a failure of this stage.
func stageError(stage Stage, err error, fallback string) *Error {
	if pe, ok := err.(*Error); ok {
		return pe
	}
	return Fail(stage, err, "%s", safeMessage(err, fallback))
}

// payload is the object scripts receive (docs/architecture.md, Stages).
func payload(call *Call, key string, value any) map[string]any {
	var auth any
	if call.Identity != nil {
		auth = map[string]any{"subject": call.Identity.Subject, "claims": call.Identity.Claims}
	}
	return map[string]any{
		key:    value,
		"tool": map[string]any{"name": call.Tool.Name, "description": call.Tool.Description},
		"auth": auth,
	}
}
