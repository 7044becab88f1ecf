package pipeline

import "context"

// StageGuardrail is the stage of guardrails across calls
// (pipeline/guardrail; docs/sql-agent.md, Guardrails): after input
// validation, before approval, so that a person is never asked about a
// call that would be refused.
const StageGuardrail Stage = "guardrail"

// Sequencer holds each call against what ran before it in the same
// conversation (an MCP session; on a protocol without sessions, the
// verified caller and the conversation id the client sends:
// RequestInfo.Session, RequestInfo.Conversation). The engine calls Admit
// before a tool runs and Record once it has succeeded; every path to a
// tool (a direct call, an alias, a search's call_tool) goes through the
// engine, so through both.
type Sequencer interface {
	// Admit returns an error that refuses the call (an *Error names its
	// stage; anything else is reported as the guardrail's refusal).
	Admit(ctx context.Context, call *Call) error
	// Record notes that the call succeeded. An error withholds the
	// result: a rule that depends on the call having run (after ...
	// deny) could not hold otherwise.
	Record(ctx context.Context, call *Call) error
}

// EngineOption configures an Engine.
type EngineOption func(*Engine)

// WithSequencer makes s the guardrail stage of every call.
func WithSequencer(s Sequencer) EngineOption {
	return func(e *Engine) { e.sequencer = s }
}
