package fastpath

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/pipeline"
)

// The caching hints of 2026-07-28 (SEP-2549, docs/tasks.md, Caching
// hints): ttlMs and cacheScope at the top level of the list and read
// results, and of server/discover's. mcp-go writes them on every such
// result of a 2026-07-28 request, from its options unless the result has
// its own; on earlier versions, which do not have them, it writes none,
// and neither does the direct path (AnswerList answers only sessions,
// which 2026-07-28 does not have), so both paths keep writing the same
// bytes.

// ListCacheHints are the hints of the lists and of server/discover: 0 ms,
// since a list changes with every reload and every list_changed of a
// source, which a 2026-07-28 client learns only on a subscriptions/listen
// stream (the TypeScript client evicts its cached list on list_changed,
// but a client that does not listen must ask again to see the change).
// The scope is public only where no caller is verified, so that no list
// is the same for everyone: with an auth provider, tools/list shows each
// caller the tools it may call, and default_auth keeps even the names from
// a caller it does not verify.
func ListCacheHints(callersVerified bool) server.ServerOption {
	scope := mcp.CacheScopePublic
	if callersVerified {
		scope = mcp.CacheScopePrivate
	}
	return server.WithCacheHints(0, scope)
}

// ReadCacheHints has the hints a resources/read handler recorded
// (Call.SetCacheHint) written on mcp-go's result of a 2026-07-28 request:
// the result cache's for a declared resource, an upstream's within the
// gateway's for a source's. A read that recorded none keeps
// ListCacheHints'.
func ReadCacheHints(hooks *server.Hooks) {
	hooks.AddAfterReadResource(func(ctx context.Context, _ any, _ *mcp.ReadResourceRequest, res *mcp.ReadResourceResult) {
		c := CallFrom(ctx)
		if c == nil || res == nil || !mcp.IsModernProtocol(server.RequestProtocolVersion(ctx)) {
			return
		}
		if h := c.CacheHint(); h != nil {
			res.SetCacheHints(h.TTL.Milliseconds(), Scope(h))
		}
	})
}

// Scope is a hint's cacheScope.
func Scope(h *pipeline.CacheHint) mcp.CacheScope {
	if h.Private {
		return mcp.CacheScopePrivate
	}
	return mcp.CacheScopePublic
}

// SetCacheHint records the hints of the request's result.
func (c *Call) SetCacheHint(h *pipeline.CacheHint) {
	c.mu.Lock()
	c.cacheHint = h
	c.mu.Unlock()
}

// CacheHint is what SetCacheHint recorded, or nil.
func (c *Call) CacheHint() *pipeline.CacheHint {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cacheHint
}
