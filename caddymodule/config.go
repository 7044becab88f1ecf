package caddymodule

import (
	"encoding/json"

	"github.com/caddyserver/caddy/v2"
)

// The JSON configuration of the mcp handler. The Caddyfile adapter produces
// exactly this model, so `caddy adapt` output round-trips.

// ConnectorConfig declares a named database connection. Its JSON is one
// flat object shared by the gateway and the connector's driver: the
// fields below are the gateway's, every other key belongs to the guest
// module mcp.connectors.<type> (DriverRaw; a Postgres connector's roles,
// an SQLite connector's seed).
type ConnectorConfig struct {
	Name string `json:"name"`
	// Type is the driver: postgres, mysql, sqlite, redis or one added
	// with xcaddy.
	Type string `json:"type"`
	// DSN is the connection string (postgres, mysql), URL (redis) or
	// file path (sqlite).
	// Caddy placeholders such as {env.DATABASE_URL} are expanded at provision.
	DSN              string         `json:"dsn"`
	MaxConns         int            `json:"max_conns,omitempty"`
	ReadOnly         bool           `json:"read_only,omitempty"`
	StatementTimeout caddy.Duration `json:"statement_timeout,omitempty"`
	// MaxRows caps the rows of one result (default 10000); a statement
	// returning more fails instead of exhausting memory.
	MaxRows int `json:"max_rows,omitempty"`
	// MaxResultSize caps the bytes of one result, counted while its rows
	// are collected (default 4 MiB, pipeline.DefaultMaxResultSize); a
	// result counting more fails.
	MaxResultSize int64 `json:"max_result_size,omitempty"`

	// Database safety and resilience (README "Database safety").

	// MaxWaiting bounds the calls waiting for a connection while the pool
	// is exhausted; a call beyond it fails at once with "connector busy".
	// nil: no bound; 0: no call waits.
	MaxWaiting *int `json:"max_waiting,omitempty"`
	// QueueTimeout is how long a call waits for a connection of an
	// exhausted pool before failing with "connector busy" (default 10s).
	QueueTimeout caddy.Duration `json:"queue_timeout,omitempty"`
	// Required fails the config load (and `caddy validate`) when the
	// database cannot be reached. Without it the connector's tools answer
	// "connector unavailable" until it can, and then serve without a reload.
	Required bool `json:"required,omitempty"`
	// BlockFunctions are functions no statement on this connector may call
	// ("*" in a name stands for any characters). On a read_only connector
	// they add to sqltemplate.ReadOnlyBlockList.
	BlockFunctions []string `json:"block_functions,omitempty"`
	// NoDefaultBlocks drops a read_only connector's default block list
	// (Caddyfile block_functions none, or only <name...>).
	NoDefaultBlocks bool `json:"no_default_block_functions,omitempty"`

	// Approval is "required" or "writes": its tools ask the caller's
	// client before they run (parseApproval).
	Approval string `json:"approval,omitempty"`
	// Task is the default of its tools for running as a task (TaskConfig).
	Task *TaskConfig `json:"task,omitempty"`

	// DriverRaw is the driver's part of the object, its "type" included;
	// MarshalJSON and UnmarshalJSON merge and split the two.
	DriverRaw json.RawMessage `json:"-" caddy:"namespace=mcp.connectors inline_key=type"`

	// driver is the module of DriverRaw: loaded by Provision, or read from
	// the Caddyfile while it is adapted.
	driver any
}

// ToolConfig declares one tool.
type ToolConfig struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Use names the connector a DB-backed tool runs on.
	Use string `json:"use,omitempty"`
	// Statement is the SQL template (docs/architecture.md, Templates).
	Statement   string             `json:"statement,omitempty"`
	Inputs      []InputConfig      `json:"inputs,omitempty"`
	Annotations *AnnotationsConfig `json:"annotations,omitempty"`
	// Auth is the tool's auth provider and policy (replaces default_auth).
	Auth  *AuthPolicyConfig `json:"auth,omitempty"`
	Cache *ToolCacheConfig  `json:"cache,omitempty"`
	// RateLimit and MaxConcurrent bound the tool's calls (limits.Limiter).
	RateLimit     *RateLimitConfig `json:"rate_limit,omitempty"`
	MaxConcurrent int              `json:"max_concurrent,omitempty"`
	// Approval is "required" (ask the caller's client before every call)
	// or "off" (not even under its connector's policy).
	Approval string `json:"approval,omitempty"`
	// Task says the tool runs as a task when the client asks (TaskConfig);
	// nil: its connector's default, else never.
	Task *TaskConfig `json:"task,omitempty"`
	// Requires are the tool's guardrails across calls (RequiresConfig).
	Requires []RequiresConfig `json:"requires,omitempty"`
	// ToolScripts: handler, mappers and script settings (parseToolScripts).
	ToolScripts

	statementAt string // Caddyfile file:line of the statement, for adapt-time errors
}

// InputConfig declares one input of a tool.
type InputConfig struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required,omitempty"`
	// Default is the literal as written: verbatim for strings and
	// datetimes, JSON for the other types.
	Default     *string  `json:"default,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Description string   `json:"description,omitempty"`
}

// AnnotationsConfig are the MCP behaviour hints of a tool.
type AnnotationsConfig struct {
	ReadOnly    *bool `json:"read_only,omitempty"`
	Destructive *bool `json:"destructive,omitempty"`
	Idempotent  *bool `json:"idempotent,omitempty"`
	OpenWorld   *bool `json:"open_world,omitempty"`
}

// ScriptSettings are the endpoint-wide script settings (embedded in
// Handler): defaults for every tool's scripts.
type ScriptSettings struct {
	// ScriptTimeout bounds one script call (default 1s).
	ScriptTimeout caddy.Duration `json:"script_timeout,omitempty"`
	// FetchAllow lists the hosts scripts may fetch() from; empty: scripts
	// have no fetch.
	FetchAllow []string `json:"fetch_allow,omitempty"`
	// ScriptMaxInput and ScriptMaxOutput bound the JSON size of what a
	// script receives and returns, in bytes (default 1 MiB each).
	ScriptMaxInput  int64 `json:"script_max_input,omitempty"`
	ScriptMaxOutput int64 `json:"script_max_output,omitempty"`
	// ScriptMaxMemory is the memory budget of one script call for the
	// builtins that allocate much from a short expression (README,
	// Scripts), in bytes (default 64 MiB).
	ScriptMaxMemory int64 `json:"script_max_memory,omitempty"`
}

// ToolScripts are a tool's scripts (embedded in ToolConfig).
type ToolScripts struct {
	// Handler is path/to/file.js[#export]: a script-backed tool.
	Handler string `json:"handler,omitempty"`
	// Mappers transform the inputs before and the results after execution.
	Mappers *MappersConfig `json:"mappers,omitempty"`
	// ScriptSettings override the endpoint's for this tool's scripts.
	ScriptSettings

	// noExecution is the Caddyfile error for a tool with neither use nor
	// handler; it stands unless scripts_dir (possibly declared after the
	// tool) may provide a handler.
	noExecution error
}

// MappersConfig names a tool's mapper scripts (path/to/file.js[#export]).
type MappersConfig struct {
	Input  string `json:"input,omitempty"`
	Output string `json:"output,omitempty"`
}
