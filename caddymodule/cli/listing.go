package cli

import "encoding/json"

// Endpoint is one mcp handler of a config, as `caddy mcp tools` lists it.
type Endpoint struct {
	Server     string                     `json:"server"`
	Listen     []string                   `json:"listen,omitempty"`
	Hosts      []string                   `json:"hosts,omitempty"`
	Paths      []string                   `json:"paths,omitempty"`
	Name       string                     `json:"name"`
	Version    string                     `json:"version,omitempty"`
	ErrorMode  string                     `json:"error_mode,omitempty"`
	Catalog    bool                       `json:"catalog"`
	Connectors []Connector                `json:"connectors,omitempty"`
	Settings   map[string]json.RawMessage `json:"settings,omitempty"`
	Tools      []Tool                     `json:"tools"`
	// Resources and Prompts declared.
	Resources []Resource `json:"resources,omitempty"`
	Prompts   []Prompt   `json:"prompts,omitempty"`
	// Sources, with who shares their upstream's state.
	Sources []Source `json:"sources,omitempty"`
	// Toolsets, each a curated endpoint at its own paths over these tools.
	Toolsets []Toolset `json:"toolsets,omitempty"`
}

// Toolset is a toolset as the operator wrote it: what it selects, and
// the auth and rate limit it has in place of the endpoint's ("" for the
// endpoint's own).
type Toolset struct {
	Name      string   `json:"name"`
	Paths     []string `json:"paths"`
	Tools     []string `json:"tools,omitempty"`
	Sources   []string `json:"sources,omitempty"`
	Auth      string   `json:"auth,omitempty"`
	RateLimit string   `json:"rate_limit,omitempty"`
}

// Source is a source by name and type; State says who shares the
// upstream's state, for a source that keeps any (pipeline.StateSharer).
type Source struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	State string `json:"state,omitempty"`
}

// Connector is a connector without its DSN.
type Connector struct {
	Name             string `json:"name"`
	Type             string `json:"type"`
	ReadOnly         bool   `json:"read_only,omitempty"`
	MaxConns         int    `json:"max_conns,omitempty"`
	MaxRows          int    `json:"max_rows,omitempty"`
	MaxResultSize    int64  `json:"max_result_size,omitempty"`
	StatementTimeout string `json:"statement_timeout,omitempty"`
}

// Tool is one tool of an endpoint.
type Tool struct {
	Name        string   `json:"name"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description"`
	Connector   string   `json:"connector,omitempty"`
	Type        string   `json:"connector_type,omitempty"`
	Inputs      []Input  `json:"inputs"`
	Annotations []string `json:"annotations,omitempty"`
	Cache       string   `json:"cache,omitempty"`
	Auth        string   `json:"auth,omitempty"`
	// FromIdentity is what the statement takes from the caller's verified
	// identity rather than from the arguments (README, Statement templates).
	FromIdentity []string `json:"from_identity,omitempty"`
	// Approval: a person confirms every call in the client (README,
	// Approvals), by the tool's own policy or its connector's.
	Approval bool                       `json:"approval,omitempty"`
	Settings map[string]json.RawMessage `json:"settings,omitempty"`
}

// Resource is a declared resource in `caddy mcp tools`.
type Resource struct {
	URI         string  `json:"uri"`
	Name        string  `json:"name"`
	Title       string  `json:"title,omitempty"`
	Description string  `json:"description,omitempty"`
	MimeType    string  `json:"mime_type"`
	Connector   string  `json:"connector,omitempty"`
	Type        string  `json:"connector_type,omitempty"`
	Handler     string  `json:"handler,omitempty"`
	Inputs      []Input `json:"inputs,omitempty"`
	Auth        string  `json:"auth,omitempty"`
}

// Prompt is a declared prompt in `caddy mcp tools`.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Messages    int              `json:"messages"`
	Auth        string           `json:"auth,omitempty"`
}

// Input is a tool's input (or a resource's variable) as declared. It
// mirrors the shell's input config field for field: the shell converts
// one into the other, so the compiler keeps the two alike.
type Input struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required,omitempty"`
	// Default is the literal as written: verbatim for strings and
	// datetimes, JSON for the other types.
	Default     *string  `json:"default,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Description string   `json:"description,omitempty"`
}

// PromptArgument is a prompt's argument as declared (as Input, a mirror
// of the shell's config).
type PromptArgument struct {
	Name        string   `json:"name"`
	Required    bool     `json:"required,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Description string   `json:"description,omitempty"`
}
