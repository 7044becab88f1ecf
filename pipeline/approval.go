package pipeline

import (
	"context"
	"encoding/json"
)

// StageApproval is the approval stage: between input validation and
// execution, a person confirms the call through the client
// (docs/architecture.md, Stages).
const StageApproval Stage = "approval"

// Approver is the approval stage of a tool that needs a person's consent
// before it runs (README, Approvals). It sees the call as it will execute:
// the verified identity and the validated inputs. It returns nil when the
// call is approved; an error stops the call before execution (an *Error
// names its stage and message; anything else is reported as "not
// approved"). The transport implements it (asking the client is protocol
// work); the pipeline only fixes where it runs.
type Approver interface {
	Approve(ctx context.Context, call *Call) error
}

// AskClient is what an Approver returns when the question travels in the
// call's own answer and the client repeats the call with its reply (MCP
// 2026-07-28's multi round-trip requests): the call ends without executing,
// and the transport sends Native, a complete MCP CallToolResult that asks
// for input. It is an error only so that it can leave Approve; the engine
// turns it into that result.
type AskClient struct {
	Native json.RawMessage
}

func (a *AskClient) Error() string { return "approval: waiting for the client's answer" }
