// Package caddymodule is the Caddy glue of edgemcp: module registration,
// Caddyfile parsing, provisioning of connectors and tools, and the HTTP
// handler that serves MCP over streamable HTTP.
package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/approval"
	"github.com/edgemcp/edgemcp/caddymodule/catalog"
	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
	"github.com/edgemcp/edgemcp/caddymodule/limits"
	"github.com/edgemcp/edgemcp/caddymodule/prompts"
	"github.com/edgemcp/edgemcp/caddymodule/redact"
	"github.com/edgemcp/edgemcp/caddymodule/resources"
	"github.com/edgemcp/edgemcp/caddymodule/session"
	"github.com/edgemcp/edgemcp/caddymodule/sourcetools"
	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/caddymodule/upstreams"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/cache"
	"github.com/edgemcp/edgemcp/pipeline/tasks"
)

func init() {
	caddy.RegisterModule(Handler{})
}

const (
	errorModeJSONRPC = "jsonrpc"
	errorModeResult  = "result"

	errorDetailSafe = "safe"
	errorDetailFull = "full"

	defaultMaxBodySize = 1 << 20
	defaultServerName  = "edgemcp"
)

// Version is the module version, the default serverInfo.version.
var Version = "0.1.0"

// Handler serves an MCP endpoint whose tools are declared in the config.
type Handler struct {
	// ServerName is serverInfo.name (default "edgemcp").
	ServerName string `json:"name,omitempty"`
	// ServerVersion is serverInfo.version (default: the module version).
	ServerVersion string `json:"version,omitempty"`
	// ErrorMode is "jsonrpc" (default: failures are JSON-RPC errors) or
	// "result" (failures are tool results with isError: true).
	ErrorMode string `json:"error_mode,omitempty"`
	// ErrorDetail is "safe" (default: a failure that carries a database's
	// own error text shows its code, SQLSTATE or error number, and the
	// request id instead) or "full" (the text itself). The debug log has
	// the full text either way (README, Errors).
	ErrorDetail string `json:"error_detail,omitempty"`
	// ScriptsDir is where per-tool scripts are discovered.
	ScriptsDir string `json:"scripts_dir,omitempty"`
	// MaxBodySize bounds a request body in bytes (default 1 MiB).
	MaxBodySize int64 `json:"max_body_size,omitempty"`
	// SessionIdleTimeout forgets MCP sessions idle this long (default 30m).
	SessionIdleTimeout caddy.Duration `json:"session_idle_timeout,omitempty"`
	// MaxSessions bounds the sessions this node keeps state for; past it
	// the one idle the longest is ended (session.Limit). 0: unbounded.
	MaxSessions int `json:"max_sessions,omitempty"`
	// HostGate: allowed_origins and allowed_hosts, checked before anything
	// else on every request (gate.Gate).
	HostGate
	// SessionKeys sign MCP session ids (session.IDs): the first signs, all
	// verify. Nodes that share them accept each other's sessions. Default:
	// a random key per process.
	SessionKeys []string `json:"session_keys,omitempty"`
	// ScriptSettings: script_timeout, fetch_allow, script_max_input,
	// script_max_output and script_max_memory for every tool
	// (parseScriptSetting).
	ScriptSettings
	// CatalogOff disables the HTML tool catalog served to browsers (catalog.Catalog).
	CatalogOff bool `json:"catalog_off,omitempty"`
	// ApprovalTimeout is how long a call waits for a person's approval
	// (approval.Approver; default 45s).
	ApprovalTimeout caddy.Duration `json:"approval_timeout,omitempty"`

	Connectors []ConnectorConfig `json:"connectors,omitempty"`
	Tools      []ToolConfig      `json:"tools,omitempty"`
	// Sources bring their own tools (SourceConfig).
	Sources []SourceConfig `json:"sources,omitempty"`
	// Resources and Prompts declared in the Caddyfile (resources.Set, prompts.Set).
	Resources []ResourceConfig `json:"resources,omitempty"`
	Prompts   []PromptConfig   `json:"prompts,omitempty"`
	// RateLimit bounds the endpoint's requests; RateLimitStore shares the
	// counters of every limit through Redis (limits.Limiter).
	RateLimit      *RateLimitConfig      `json:"rate_limit,omitempty"`
	RateLimitStore *RateLimitStoreConfig `json:"rate_limit_redis,omitempty"`
	// MaxConcurrent bounds the endpoint's POST requests served at once on
	// this node; one beyond is answered 503 (session.InFlight). 0: unbounded.
	MaxConcurrent int `json:"max_concurrent,omitempty"`
	// Cache is the result cache (CacheConfig).
	Cache *CacheConfig `json:"cache,omitempty"`
	// Discovery is how tools/list presents the tools (DiscoveryConfig).
	Discovery *DiscoveryConfig `json:"discovery,omitempty"`
	// SQLTools are the toolsets of agent-written SQL (SQLToolsConfig).
	SQLTools []SQLToolsConfig `json:"sql_tools,omitempty"`
	// After and Guardrails: guardrails across calls (a tool's requires is
	// in its ToolConfig).
	After      []AfterConfig     `json:"after,omitempty"`
	Guardrails *GuardrailsConfig `json:"guardrails,omitempty"`
	// Toolsets are curated views over the tools, each at its own path
	// (ToolsetConfig).
	Toolsets []ToolsetConfig `json:"toolsets,omitempty"`

	authConfig // auth providers, default_auth (run by access.Endpoint)

	live       *liveTools            // the tools now (registry)
	declared   []*pipeline.Tool      // the Caddyfile's tools, as provisioned
	sources    []*sourcetools.Source // the provisioned source modules
	connTypes  map[string]string     // connector name → type, for telemetry
	sessionIDs *session.IDs
	sessions   *session.Limit     // nil without max_sessions
	approver   *approval.Approver // asks a person before a tool runs
	mcp        *server.MCPServer
	streamable *server.StreamableHTTPServer
	poolKeys   []string
	logger     *zap.Logger
	cache      *cache.Cache
	cacheKey   string
	redisKey   string

	limits    *limits.Limiter    // rate limits over their counters
	sequencer pipeline.Sequencer // guardrails across calls; nil without any
	inFlight  *session.InFlight  // nil without max_concurrent

	calls   *telemetry.Recorder // opens each call's telemetry
	catalog *catalog.Catalog    // the page for browsers; nil with `catalog off`
	// errorRoutes: the server has handle_errors routes, which answer the
	// requests the handler refuses (refused).
	errorRoutes bool

	fast *fastpath.Server // the direct path, and the relay to mcp-go

	taskRunner  *tasks.Runner // the gateway's tasks; nil when no tool runs as one
	taskPoolKey string        // its key in taskRunners

	resources *resources.Set // the declared resources
	prompts   *prompts.Set   // the declared prompts
	upstreams *upstreams.Set // the sources' resources and prompts, and subscriptions

	toolset  *ToolsetConfig      // the toolset this handler is the view of; nil: the endpoint
	views    map[string]*Handler // the toolsets' views, by request path (provisionToolsets)
	viewList []*Handler          // the same, in declaration order
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.mcp",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision opens (or reuses) the connectors, compiles every tool and
// builds the MCP server. Anything wrong in the config fails here, before a
// client sees it. The error, and every line the handler logs, is scrubbed
// of the config's secrets (redact.Scrubber).
func (h *Handler) Provision(ctx caddy.Context) error {
	var scrub *redact.Scrubber
	if raw, err := json.Marshal(h); err == nil {
		scrub = redact.Provisioned(raw, caddy.NewReplacer()).Scrubber()
	}
	h.logger = scrub.Logger(ctx.Logger())
	return scrub.Err(h.provision(ctx))
}

// Validate checks settings that have a fixed set of values.
func (h *Handler) Validate() error {
	if h.ErrorMode != errorModeJSONRPC && h.ErrorMode != errorModeResult {
		return fmt.Errorf("error_mode must be %q or %q, got %q", errorModeJSONRPC, errorModeResult, h.ErrorMode)
	}
	if h.ErrorDetail != errorDetailSafe && h.ErrorDetail != errorDetailFull {
		return fmt.Errorf("error_detail must be %q or %q, got %q", errorDetailSafe, errorDetailFull, h.ErrorDetail)
	}
	if h.MaxConcurrent < 0 {
		return fmt.Errorf("max_concurrent must not be negative, got %d (0 or absent: unbounded)", h.MaxConcurrent)
	}
	if h.MaxBodySize < 0 {
		return fmt.Errorf("max_body_size must not be negative, got %d (0 or absent means the default, 1 MiB)", h.MaxBodySize)
	}
	if err := h.Discovery.validate(); err != nil {
		return err
	}
	return h.HostGate.validate()
}

// provisionSessionKeys expands the session keys (usually {env.X}) and checks
// their length. An error never quotes a key.
func (h *Handler) provisionSessionKeys(repl *caddy.Replacer) error {
	keys := make([][]byte, 0, len(h.SessionKeys))
	for i, k := range h.SessionKeys {
		k = repl.ReplaceKnown(k, "")
		if len(k) < session.MinKeyLen {
			return fmt.Errorf("session_key %d of %d: %d bytes, want at least %d (is the environment variable set?)", i+1, len(h.SessionKeys), len(k), session.MinKeyLen)
		}
		keys = append(keys, []byte(k))
	}
	h.sessionIDs = session.NewIDs(keys, endpointOwner)
	return nil
}

// Cleanup releases this config's share of the connector pools. Caddy runs it
// after the next config is provisioned (pools whose settings did not change
// survive) and also after a failed Provision.
func (h *Handler) Cleanup() error {
	for _, v := range h.viewList {
		v.shutdownTransport() // the toolsets' own MCP servers; all else is shared
		v.upstreams.Close()
	}
	h.shutdownTransport()
	h.upstreams.Close()
	h.cleanupCache()
	h.cleanupTasks()
	telemetry.Unexpose(h)
	for _, key := range h.poolKeys {
		releaseConnector(key)
	}
	h.poolKeys = nil
	return nil
}

// shutdownTransport stops the transport of the handler's MCP server.
func (h *Handler) shutdownTransport() {
	if h.streamable != nil {
		// Stops the idle-session sweeper and ends this config's GET streams;
		// clients reconnect to the new config with the same session id.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = h.streamable.Shutdown(ctx)
		cancel()
	}
}

// Interface guards.
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
