package caddymodule

import (
	"context"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/caddymodule/access"
	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
	"github.com/edgemcp/edgemcp/caddymodule/session"
	"github.com/edgemcp/edgemcp/pipeline"
)

// newEndpointAuth is the endpoint layer of auth (access.Endpoint); nil
// when no auth provider is declared. The providers, default_auth and the
// metadata document are provisioned first.
func (h *Handler) newEndpointAuth() *access.Endpoint {
	if len(h.providers) == 0 {
		return nil
	}
	opts := access.Options{Default: h.defaultAuth, Logger: h.logger,
		ServeLocked: func(w http.ResponseWriter, r *http.Request) bool { return h.catalog.Serve(w, r, true) }}
	if h.DefaultAuth != nil {
		opts.Scopes = h.DefaultAuth.Scopes
	}
	if m := h.metadata; m != nil {
		opts.ServeMetadata = func(w http.ResponseWriter, r *http.Request) bool { return m.serve(w, r, "") }
		opts.MetadataURL = m.metadataURL
	}
	return access.New(opts)
}

// toolFilter shows a caller, in tools/list, only the tools it may call: the
// same provider and policy check as the auth stage. mcp-go also applies the
// filter to tools/call, where it would answer "tool not found"; calls are
// let through so the auth stage refuses them with the documented -32000.
//
// Aliases (serverTools) are never listed: each tool appears once, under
// its own name.
func (h *Handler) toolFilter(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	if c := fastpath.CallFrom(ctx); c != nil && c.List == nil {
		return tools // a tools/call; a tools/list whose entries are passed on (Call.List) is filtered
	}
	r := h.tools() // one version for the whole list
	if r.search != nil {
		return h.listSearch(ctx, r, tools) // discovery search (discovery.List)
	}
	engine := r.engine
	aliases := engine.Aliases()
	if len(h.providers) == 0 && len(aliases) == 0 {
		return tools
	}
	out := make([]mcp.Tool, 0, len(tools))
	for _, t := range tools {
		if _, alias := aliases[t.Name]; alias {
			continue
		}
		if pt := engine.Lookup(t.Name); pt != nil && h.callable(ctx, pt) {
			out = append(out, t)
		}
	}
	return out
}

// callable reports whether the caller of ctx passes t's auth check: the
// tools/list filter and the catalog page show only such tools
// (access.Allowed).
func (h *Handler) callable(ctx context.Context, t *pipeline.Tool) bool {
	return access.Allowed(ctx, t.Auth, t.Name)
}

// endpointOwner is the owner a request's sessions get (session.Owner):
// its endpoint identity (access.Identity).
func endpointOwner(ctx context.Context) session.Owner {
	id := access.Identity(ctx)
	if id == nil {
		return session.Owner{}
	}
	return session.Owner{Provider: id.Provider, Subject: id.Subject}
}
