// Package upstreams serves the resources, resource templates and prompts of
// the sources that have them (pipeline.CatalogSource: upstream MCP
// servers) beside the declared ones (resources.Set, prompts.Set):
// resources under the upstream's URIs, prompts named into the source's
// namespace like its tools; reads, gets, completions and subscriptions are
// forwarded to the source. A source's URI that is also a declared
// resource's fails the load, naming both; one that an earlier source
// already lists (two sources in front of the same kind of server) is left
// out with a warning naming both, so that a URI always reads from one
// origin.
package upstreams

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/prompts"
	"github.com/edgemcp/edgemcp/caddymodule/resources"
	"github.com/edgemcp/edgemcp/pipeline"
)

// Source is a source that brings resources or prompts, as the shell
// loaded it.
type Source struct {
	Name string
	// Namespace is what its prompts are named into, as its tools are.
	Namespace string
	Src       pipeline.CatalogSource
}

// Access is what the shell knows of the request being served.
type Access interface {
	// Fail puts perr on the request's call state, so that the wire
	// answer carries its code.
	Fail(ctx context.Context, perr *pipeline.Error)
	// PassUpstream has raw, the upstream's own result of the request,
	// written in place of mcp-go's encoding of it.
	PassUpstream(ctx context.Context, raw json.RawMessage)
	// Caller is ctx for a source: with the caller the endpoint verified
	// and the request's headers, so that a source with an upstream
	// session per caller sends the request on that caller's session.
	Caller(ctx context.Context) context.Context
	// CacheHint records the ttlMs and cacheScope of the answer.
	CacheHint(ctx context.Context, h *pipeline.CacheHint)
}

// Options are what a Set is built from.
type Options struct {
	Sources   []Source
	Resources *resources.Set
	Prompts   *prompts.Set
	Access    Access
	Logger    *zap.Logger
}

// Set holds the current catalog of the sources and the subscriptions
// to their resources.
type Set struct {
	Options
	cur          atomic.Pointer[Catalog]
	subscribable bool
	srv          *server.MCPServer // set by Attach
	subs         *subscribers      // nil unless StartSubscriptions ran
	listens      listens           // open subscriptions/listen streams with resources
}

// New reads every source's catalog as it is now.
func New(o Options) (*Set, error) {
	r := &Set{Options: o}
	for _, s := range o.Sources {
		if rs, ok := s.Src.(pipeline.ResourceSubscriber); ok && rs.Subscribable() {
			r.subscribable = true
		}
	}
	cat, err := r.build()
	if err != nil {
		return nil, err
	}
	r.cur.Store(cat)
	return r, nil
}

// Catalog is the current catalog.
func (r *Set) Catalog() *Catalog { return r.cur.Load() }

// Changing: some source may change its lists (a list_changed upstream).
func (r *Set) Changing() bool { return len(r.Sources) > 0 }

// ServesResources: resources are declared, or a source may bring some.
func (r *Set) ServesResources() bool {
	return len(r.Resources.All()) > 0 || len(r.Sources) > 0
}

// ServesPrompts: prompts are declared, or a source may bring some.
func (r *Set) ServesPrompts() bool {
	return len(r.Prompts.All()) > 0 || len(r.Sources) > 0
}

// Completable: some prompt has an argument or some template a variable,
// or a source may have them (its completions are forwarded).
func (r *Set) Completable() bool {
	return len(r.Sources) > 0 || r.Prompts.Completable() || r.Resources.Completable()
}

// Attach registers the declared resources and prompts and the sources'
// on srv; registering is what declares the capability in mcp-go, so
// nothing is registered where nothing is served.
func (r *Set) Attach(srv *server.MCPServer) {
	r.srv = srv
	r.set(r.cur.Load())
}

// set puts the declared and the sources' resources and prompts on the
// mcp-go server.
func (r *Set) set(cat *Catalog) {
	res, tmpl := r.Resources.ServerEntries()
	prompts := r.Prompts.ServerEntries()
	if cat != nil {
		res = append(res, cat.resources...)
		tmpl = append(tmpl, cat.templates...)
		prompts = append(prompts, cat.prompts...)
		if len(cat.sources) > 0 {
			tmpl = append(tmpl, r.catchAll())
		}
	}
	if r.ServesResources() {
		r.srv.SetResources(res...)
		r.srv.SetResourceTemplates(tmpl...)
	}
	if r.ServesPrompts() {
		r.srv.SetPrompts(prompts...)
	}
}

// Refresh follows a source's change (its list_changed, a reconnect): a
// catalog that no longer loads (a URI collision) keeps the previous one,
// as the tools keep theirs.
func (r *Set) Refresh() {
	if len(r.Sources) == 0 || r.srv == nil {
		return
	}
	cat, err := r.build()
	if err != nil {
		r.Logger.Warn("resources and prompts not updated: the new set does not load; the previous one stays", zap.Error(err))
		return
	}
	r.cur.Store(cat)
	r.set(cat)
}

// Hooks give the initialize (and, on 2026-07-28, server/discover) result
// the sources' servers' instructions, each under its source's name
// (docs/sources.md, MCP servers), as they are when the client asks; and
// do the work of resources/subscribe and unsubscribe.
func (r *Set) Hooks(hooks *server.Hooks) {
	instructions := func() string {
		if cat := r.cur.Load(); cat != nil {
			return cat.instructions
		}
		return ""
	}
	hooks.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		if text := instructions(); text != "" {
			res.Instructions = text
		}
	})
	hooks.AddAfterDiscover(func(_ context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
		if text := instructions(); text != "" {
			res.Instructions = text
		}
	})
	r.subscribeHooks(hooks)
	r.listenHooks(hooks)
}
