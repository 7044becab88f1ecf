package caddymodule

import (
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/script"
	"github.com/edgemcp/edgemcp/pipeline/sqlagent"
)

// SQLToolsConfig is `sql_tools <connector> { ... }`: the tools with which
// an agent explores a connector's schema and runs read-only SQL it writes
// (pipeline/sqlagent; docs/sql-agent.md). They are ordinary tools: auth,
// approval, rate limits, guardrails, discovery and the catalog apply.
type SQLToolsConfig struct {
	// Connector names the connector; its driver must run agent-written
	// SQL (pipeline.AgentSQL: postgres, mysql, sqlite).
	Connector string `json:"connector"`
	// Prefix starts every tool name (default: the connector's name).
	Prefix string `json:"prefix,omitempty"`
	// Include and Exclude are table patterns (sqlagent.Config).
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
	// MaxRows, MaxResultSize and StatementTimeout bound each statement
	// (0: sqlagent's defaults, 100 rows, 256 KiB, 10s).
	MaxRows          int            `json:"max_rows,omitempty"`
	MaxResultSize    int64          `json:"max_result_size,omitempty"`
	StatementTimeout caddy.Duration `json:"statement_timeout,omitempty"`
	// MaxCost and MaxRowsEstimate refuse a query whose plan estimates
	// more (the cost guard).
	MaxCost         float64 `json:"max_cost,omitempty"`
	MaxRowsEstimate float64 `json:"max_rows_estimate,omitempty"`
	// Role runs every statement as this role (Postgres).
	Role string `json:"role,omitempty"`
	// Interceptor is a script (path/to/file.js[#export]) that sees each
	// statement first and may rewrite or refuse it.
	Interceptor string `json:"interceptor,omitempty"`
	// Explain adds <prefix>_explain.
	Explain bool `json:"explain,omitempty"`

	// What every tool of the set gets, as a declared tool would.
	Auth          *AuthPolicyConfig `json:"auth,omitempty"`
	Approval      string            `json:"approval,omitempty"`
	RateLimit     *RateLimitConfig  `json:"rate_limit,omitempty"`
	MaxConcurrent int               `json:"max_concurrent,omitempty"`
	// Requires are the guardrails of <prefix>_query.
	Requires []RequiresConfig `json:"requires,omitempty"`
}

// prefix is the tools' prefix: the configured one, else the connector's
// name.
func (c SQLToolsConfig) prefix() string {
	if c.Prefix != "" {
		return c.Prefix
	}
	return c.Connector
}

// queryTool is the name of the set's query tool.
func (c SQLToolsConfig) queryTool() string { return c.prefix() + "_query" }

// agentConnector is a provisioned connector that can run agent-written
// SQL (connguard.Guard).
type agentConnector interface {
	Agent() (pipeline.AgentSQL, bool)
}

// provisionSQLTools builds each sql_tools set on its connector and gives
// every tool of it the auth, approval and limits a declared tool gets.
// They join the declared tools.
func (h *Handler) provisionSQLTools(p *provisioning) error {
	for _, sc := range h.SQLTools {
		tools, err := h.buildSQLTools(p, sc)
		if err != nil {
			return err
		}
		p.tools = append(p.tools, tools...)
	}
	h.declared = p.tools
	return nil
}

func (h *Handler) buildSQLTools(p *provisioning, sc SQLToolsConfig) ([]*pipeline.Tool, error) {
	where := fmt.Sprintf("sql_tools %s", sc.Connector)
	ref, ok := p.conns[sc.Connector]
	if !ok {
		return nil, fmt.Errorf("%s: no connector of that name", where)
	}
	var db pipeline.AgentSQL
	if a, ok := ref.conn.(agentConnector); ok {
		db, _ = a.Agent()
	}
	if db == nil {
		return nil, fmt.Errorf("%s: connector %q (%s) cannot run SQL an agent writes (postgres, mysql and sqlite can)", where, sc.Connector, ref.config.Type)
	}
	cfg := sqlagent.Config{
		Prefix:           sc.prefix(),
		Connector:        sc.Connector,
		DB:               db,
		Dialect:          ref.conn.Dialect(),
		Include:          sc.Include,
		Exclude:          sc.Exclude,
		MaxRows:          sc.MaxRows,
		MaxResultSize:    sc.MaxResultSize,
		StatementTimeout: time.Duration(sc.StatementTimeout),
		MaxCost:          sc.MaxCost,
		MaxRowsEstimate:  sc.MaxRowsEstimate,
		Role:             p.repl.ReplaceKnown(sc.Role, ""),
		Explain:          sc.Explain,
		BlockFunctions:   ref.config.BlockFunctions,
	}
	if sc.Interceptor != "" {
		opts := h.scriptOptions(p.ctx, ToolConfig{Name: sc.queryTool()})
		s, err := p.scripts.Load(p.repl.ReplaceKnown(sc.Interceptor, ""), opts)
		if err != nil {
			return nil, fmt.Errorf("%s: interceptor: %v", where, err)
		}
		cfg.Interceptor = script.InputMapper{Script: s}
	}
	tools, err := sqlagent.Build(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", where, err)
	}
	identity := connectorIdentity(ref.config)
	for _, t := range tools {
		tc := sc.toolConfig(t.Name)
		t.FromIdentity = identity
		if t.Auth, err = h.toolAuth(tc); err != nil {
			return nil, err
		}
		if err := checkIdentityValues(t); err != nil {
			return nil, err
		}
		if err := h.applyApproval(t, sc.Approval, ref.config.Approval); err != nil {
			return nil, err
		}
		p.configs[t.Name] = tc
	}
	return tools, nil
}

// toolConfig is what a tool of the set shares with a declared tool's
// config: its auth and limits.
func (c SQLToolsConfig) toolConfig(name string) ToolConfig {
	tc := ToolConfig{Name: name, Auth: c.Auth, RateLimit: c.RateLimit, MaxConcurrent: c.MaxConcurrent, Approval: c.Approval}
	if name == c.queryTool() {
		tc.Requires = c.Requires
	}
	return tc
}
