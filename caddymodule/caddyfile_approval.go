package caddymodule

import (
	"fmt"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Approval policies (README, Approvals), read here and applied at
// provision; approval.Approver asks the client.
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

// parseApproval reads `approval <policy>` in the block of owner ("tool
// x", "connector y", "source z"), allowing the given policies.
func parseApproval(d *caddyfile.Dispenser, owner string, allowed ...string) (string, error) {
	if !d.NextArg() {
		return "", d.Errf("%s: approval needs one of %s", owner, strings.Join(allowed, ", "))
	}
	p := d.Val()
	if d.NextArg() {
		return "", d.Errf("%s: approval takes one value, got another: %q", owner, d.Val())
	}
	if d.NextBlock(d.Nesting()) {
		return "", d.Errf("%s: approval takes no block", owner)
	}
	for _, a := range allowed {
		if p == a {
			return p, nil
		}
	}
	return "", d.Errf("%s: approval must be one of %s, got %q", owner, strings.Join(allowed, ", "), p)
}

// takeSourceApproval removes the `approval` line from the block of a
// source segment (which starts at the source's type) and reads it: the
// policy belongs to the gateway, so every source type has it, and the
// source module never sees it.
func takeSourceApproval(seg caddyfile.Segment, source string) (caddyfile.Segment, string, error) {
	owner := fmt.Sprintf("source %q", source)
	rest := make(caddyfile.Segment, 0, len(seg))
	policy := ""
	nesting := 0
	for i := 0; i < len(seg); i++ {
		t := seg[i]
		if nesting == 1 && startsLine(seg, i) && t.Text == "approval" && !t.Quoted() {
			end := i + 1
			for end < len(seg) && !startsLine(seg, end) {
				end++
			}
			line := caddyfile.NewDispenser(seg[i:end])
			line.Next()
			if policy != "" {
				return nil, "", line.Errf("%s: approval declared twice", owner)
			}
			if end > i+1 && seg[end-1].Text == "{" && !seg[end-1].Quoted() {
				return nil, "", line.Errf("%s: approval takes no block", owner)
			}
			p, err := parseApproval(line, owner, approvalRequired, approvalWrites)
			if err != nil {
				return nil, "", err
			}
			policy = p
			i = end - 1
			continue
		}
		if !t.Quoted() {
			switch t.Text {
			case "{":
				nesting++
			case "}":
				nesting--
			}
		}
		rest = append(rest, t)
	}
	return rest, policy, nil
}

// startsLine reports whether seg[i] is the first token on its line, as the
// Dispenser decides it.
func startsLine(seg caddyfile.Segment, i int) bool {
	if i == 0 {
		return true
	}
	prev, t := seg[i-1], seg[i]
	return prev.File != t.File || prev.Line+prev.NumLineBreaks() < t.Line
}

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
