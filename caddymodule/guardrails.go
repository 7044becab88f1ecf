package caddymodule

import (
	"fmt"
	"path"
	"slices"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/guardrail"
)

// RequiresConfig is `requires <tool> [within <n> calls | within
// <duration>]` in a tool's block: the tool runs only once Tool has
// succeeded earlier in the same conversation (guardrail.Requires).
type RequiresConfig struct {
	Tool string `json:"tool"`
	// WithinCalls: Tool is among the conversation's last n successful
	// calls; Within: it succeeded no longer ago. At most one is set.
	WithinCalls int            `json:"within_calls,omitempty"`
	Within      caddy.Duration `json:"within,omitempty"`
}

// AfterConfig is `after <tool> deny <tool...>`: once Tool (a name or a
// pattern) has succeeded in a conversation, the Deny tools are refused in
// it (guardrail.After).
type AfterConfig struct {
	Tool string   `json:"tool"`
	Deny []string `json:"deny"`
}

// GuardrailsConfig is `guardrails { store ...; ttl ... }`: where the
// record of conversations lives.
type GuardrailsConfig struct {
	// Redis, when set, is the Redis the gateway nodes share
	// (mcp.stores.redis), so that a rule holds across nodes; without it
	// the record is in this process's memory.
	Redis string `json:"redis,omitempty"`
	// TTL is how long a conversation's record lasts after its last
	// recorded call (default guardrail.DefaultTTL, 24h).
	TTL caddy.Duration `json:"ttl,omitempty"`
}

// guardrailMemory is the record of conversations without a shared store.
// It is the process's, not one config's, so that a reload does not
// forget which conversation read what (an `after ... deny` rule would
// lapse at every reload otherwise).
var guardrailMemory = &guardrail.Memory{}

// provisionGuardrails builds the guardrails across calls from every
// tool's requires and the endpoint's after rules, once each named tool
// is known to exist. The engine of every version of the tools runs them
// (newRegistry).
func (h *Handler) provisionGuardrails(p *provisioning) error {
	var cfg guardrail.Config
	for _, t := range p.tools {
		for _, r := range p.configs[t.Name].Requires {
			cfg.Requires = append(cfg.Requires, guardrail.Requires{Tool: t.Name, Needs: r.Tool, WithinCalls: r.WithinCalls, Within: time.Duration(r.Within)})
		}
	}
	for _, a := range h.After {
		cfg.After = append(cfg.After, guardrail.After{Tool: a.Tool, Deny: a.Deny})
	}
	if len(cfg.Requires) == 0 && len(cfg.After) == 0 {
		if h.Guardrails != nil {
			h.logger.Warn("guardrails configured, but no tool has a requires and there is no after rule")
		}
		return nil
	}
	names := make([]string, 0, len(p.tools)+len(p.sourced))
	for _, t := range slices.Concat(p.tools, p.sourced) {
		names = append(names, t.Name)
	}
	for _, r := range cfg.Requires {
		if !slices.Contains(names, r.Needs) {
			return fmt.Errorf("tool %q: requires %s: no tool of that name", r.Tool, r.Needs)
		}
	}
	for _, a := range cfg.After {
		for _, pattern := range append([]string{a.Tool}, a.Deny...) {
			if !slices.ContainsFunc(names, func(n string) bool { ok, _ := path.Match(pattern, n); return ok }) {
				return fmt.Errorf("after %s deny %v: %q names no tool", a.Tool, a.Deny, pattern)
			}
		}
	}
	cfg.Store = guardrailMemory
	if g := h.Guardrails; g != nil {
		cfg.TTL = time.Duration(g.TTL)
		if g.Redis != "" {
			store, _, err := loadSharedStore(p.ctx, p.repl.ReplaceKnown(g.Redis, ""), 0)
			if err != nil {
				return fmt.Errorf("guardrails: store redis: %v", err)
			}
			if cfg.Store, err = guardrail.NewShared(store); err != nil {
				return fmt.Errorf("guardrails: %v", err)
			}
		}
	}
	g, err := guardrail.New(cfg)
	if err != nil {
		return fmt.Errorf("guardrails: %v", err)
	}
	h.sequencer = g
	return nil
}

// engineOptions are the options of every version's engine.
func (h *Handler) engineOptions() []pipeline.EngineOption {
	if h.sequencer == nil {
		return nil
	}
	return []pipeline.EngineOption{pipeline.WithSequencer(h.sequencer)}
}
