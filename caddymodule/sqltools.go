package caddymodule

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/caddymodule/cli"
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

// listings are the set's tools as `caddy mcp tools` shows them, read from
// the config alone (the descriptions the agent reads are written when the
// tools are built, so the listing says what the tool is for).
func (c SQLToolsConfig) listings(conn ConnectorConfig) []cli.Tool {
	str := func(name string, required bool, desc string) cli.Input {
		return cli.Input{Name: name, Type: "string", Required: required, Description: desc}
	}
	query := []cli.Input{str("sql", true, "one read-only query"), {Name: "params", Type: "array", Description: "its parameters' values"}}
	tools := []cli.Tool{
		{Name: c.prefix() + "_list_tables", Description: "The tables and views the agent may read", Inputs: []cli.Input{str("schema", false, "")}},
		{Name: c.prefix() + "_describe_table", Description: "A table's columns, keys, indexes and foreign keys", Inputs: []cli.Input{str("table", true, ""), str("schema", false, "")}},
		{Name: c.queryTool(), Description: "Runs a read-only query the agent writes", Inputs: query},
	}
	if c.Explain {
		tools = append(tools, cli.Tool{Name: c.prefix() + "_explain", Description: "The plan of a query the agent writes, not running it", Inputs: query})
	}
	for i := range tools {
		t := &tools[i]
		t.Connector, t.Type = c.Connector, conn.Type
		t.Annotations = []string{"read_only=true", "destructive=false", "idempotent=true", "open_world=false"}
		t.Auth = authSummary(c.Auth)
		t.FromIdentity = connectorIdentity(conn)
		t.Approval = declaredApproval(c.toolConfig(t.Name), ConnectorConfig{Approval: conn.Approval, ReadOnly: true})
		if t.Name == c.queryTool() && len(c.Requires) > 0 {
			raw, _ := json.Marshal(c.Requires)
			t.Settings = map[string]json.RawMessage{"requires": raw}
		}
	}
	return tools
}
