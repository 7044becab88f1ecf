package caddymodule

import (
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/caddymodule/approval"
	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
	"github.com/edgemcp/edgemcp/caddymodule/upstreams"
)

const defaultSessionIdleTimeout = 30 * time.Minute

// newMCPServer registers every tool of the engine with an mcp-go server,
// wraps it in the streamable HTTP transport and gives both to the fast
// path (h.fast), which answers what it can and relays the rest to them.
func (h *Handler) newMCPServer(ctx caddy.Context) (*server.MCPServer, *server.StreamableHTTPServer) {
	h.fast = h.newFastPath()
	opts := append([]server.ServerOption{
		server.WithToolCapabilities(true), // sources may change their tools (swapTools)
		server.WithLogging(),
		server.WithRecovery(),
		server.WithToolFilter(h.toolFilter),
		server.WithPaginationLimit(fastpath.PageSize),
		server.WithToolHandlerMiddleware(approval.WithRoundTrip),
		fastpath.ListCacheHints(len(h.providers) > 0), // 2026-07-28's ttlMs and cacheScope
	}, h.resourcePromptOptions()...)
	hooks := &server.Hooks{}
	h.resources.Hooks(hooks, upstreams.CatchAllTemplate)
	h.upstreams.Hooks(hooks)       // instructions, subscriptions
	h.fast.Sessions().Hooks(hooks) // the sessions a direct call may talk to
	fastpath.ReadCacheHints(hooks) // a read's ttlMs and cacheScope: the result cache's, an upstream's
	if h.taskRunner != nil {
		fastpath.TaskHooks(hooks, h.runsTasks) // the tasks capability of each protocol version
		fastpath.TaskListHook(hooks, func() bool { return len(h.taskListing()) > 0 })
	}
	opts = append(opts, server.WithHooks(hooks))
	srv := server.NewMCPServer(h.ServerName, h.ServerVersion, opts...)
	srv.AddTools(h.serverTools(h.tools())...)
	h.upstreams.Attach(srv)

	idle := h.sessionIdleTimeout()
	// Signed session ids (session.IDs), held by the handler so the direct
	// path validates them exactly as mcp-go does. mcp-go's own
	// DNS-rebinding check (loopback listeners only) gives way to the gate
	// every request has passed before reaching it (gate.Gate).
	streamable := server.NewStreamableHTTPServer(srv,
		server.WithSessionIdManagerResolver(h.sessionIDs.Resolver()),
		server.WithDisableLocalhostProtection(true),
		server.WithSessionIdleTTL(idle),
		server.WithStreamableHTTPLogger(ctx.Slogger()),
	)
	h.fast.Attach(srv, streamable)
	return srv, streamable
}

// sessionIdleTimeout is session_idle_timeout or its default.
func (h *Handler) sessionIdleTimeout() time.Duration {
	if h.SessionIdleTimeout == 0 {
		return defaultSessionIdleTimeout
	}
	return time.Duration(h.SessionIdleTimeout)
}
