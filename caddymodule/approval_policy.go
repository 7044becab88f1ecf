package caddymodule

import (
	"fmt"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Approval policies (README, Approvals), read here and applied at
// provision; the approver asks the client.
//
//	tool <name> { approval required|off }
//	connector <name> <type> <dsn> { approval required|writes }
//	source <name> <type> ... { approval required|writes }
//	approval_timeout <duration>
//
// required asks before every call; writes before every call of a tool that
// is not read-only (its readOnlyHint is not true: a source's non-GET
// operation, GraphQL mutation, upstream MCP tool without readOnlyHint; a
// declared tool on a connector that is not read_only, unless annotated
// read_only); off exempts one tool from its connector's policy.
const (
	approvalRequired = "required"
	approvalWrites   = "writes"
	approvalOff      = "off"
)

// declaredApproval is applyApproval's decision for a declared tool, read
// from the config alone (for `caddy mcp tools`).
func declaredApproval(tc ToolConfig, conn ConnectorConfig) bool {
	policy := conn.Approval
	if tc.Approval != "" {
		policy = tc.Approval
	}
	switch policy {
	case approvalRequired:
		return true
	case approvalWrites:
		annotated := tc.Annotations != nil && tc.Annotations.ReadOnly != nil && *tc.Annotations.ReadOnly
		return !annotated && !conn.ReadOnly
	}
	return false
}

// applyApproval puts the approval stage on t when policy asks for it.
// A tool whose approval is its own (a tool block's required|off) passes
// override; otherwise policy is its connector's or source's.
func (h *Handler) applyApproval(t *pipeline.Tool, override, policy string) error {
	switch override {
	case "":
	case approvalRequired, approvalOff:
		policy = override
	default:
		return fmt.Errorf("tool %q: approval must be %q or %q, got %q", t.Name, approvalRequired, approvalOff, override)
	}
	var ask bool
	switch policy {
	case "", approvalOff:
	case approvalRequired:
		ask = true
	case approvalWrites:
		ask = t.Annotations.ReadOnly == nil || !*t.Annotations.ReadOnly
	default:
		return fmt.Errorf("tool %q: approval must be %q or %q, got %q", t.Name, approvalRequired, approvalWrites, policy)
	}
	if ask {
		t.Approval = h.approver
	}
	return nil
}
