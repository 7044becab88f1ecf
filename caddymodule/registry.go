package caddymodule

import (
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/discovery"
	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/caddymodule/sourcetools"
	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
)

// registry is one version of the tool set: the engine, each tool's
// telemetry, and the fast path's share. A source whose tools change (a
// refreshed document) makes a new version, swapped in whole (swapTools);
// a request resolves the version once (fastpath.Server.Inspect, else
// registryOf) and carries it to its end, so that a call sees one
// consistent set from resolution to response.
type registry struct {
	engine *pipeline.Engine
	obs    map[string]*telemetry.Tool // telemetry per tool
	search *discovery.Index           // discovery search; nil: tools/list lists every tool
	fast   *fastpath.Tools            // what the fast path keeps of the version
	held   []sourcetools.Held         // the sources' tools their pins hold back
}

// Tools implements fastpath.Registry.
func (r *registry) Tools() *fastpath.Tools { return r.fast }

// liveTools holds the current version; it is shared by pointer (a
// Handler is copied by value by Caddy's module machinery).
type liveTools struct {
	reg    atomic.Pointer[registry]
	swapMu sync.Mutex // one swapTools at a time
}

// tools is the current version.
func (h *Handler) tools() *registry { return h.live.reg.Load() }

// setTools makes r the current version.
func (h *Handler) setTools(r *registry) {
	if h.live == nil {
		h.live = new(liveTools)
	}
	h.live.reg.Store(r)
}

// newRegistry indexes tools and prepares their telemetry.
func (h *Handler) newRegistry(tools []*pipeline.Tool) (*registry, error) {
	searching := h.Discovery.searching(len(tools))
	if searching {
		if err := discovery.Reserve(tools, h.declared); err != nil {
			return nil, err
		}
	}
	engine, err := pipeline.NewEngine(tools, h.engineOptions()...)
	if err != nil {
		return nil, err
	}
	r := &registry{engine: engine, obs: make(map[string]*telemetry.Tool, len(tools))}
	var meta func(string) bool
	if searching {
		r.search = discovery.NewIndex(engine, h.Discovery.Pin)
		meta = r.search.IsMeta
	}
	r.fast = fastpath.NewTools(engine, meta)
	for _, t := range tools {
		r.obs[t.Name] = telemetry.NewTool(t.Name, t.Source, h.connTypes[t.Source])
	}
	return r, nil
}

// serverTools are the mcp-go entries of a version: every tool, and every
// alias registered as a tool of its own name so that mcp-go's dispatcher
// finds it; an alias runs the tool it stands for, and tools/list leaves it
// out (toolFilter).
func (h *Handler) serverTools(r *registry) []server.ServerTool {
	entries := make([]server.ServerTool, 0, len(r.engine.Tools())+len(r.engine.Aliases()))
	for _, t := range r.engine.Tools() {
		entries = append(entries, server.ServerTool{Tool: jsonrpc.Tool(t), Handler: h.fast.ToolHandler(t.Name)})
	}
	for alias, t := range r.engine.Aliases() {
		a := jsonrpc.Tool(t)
		a.Name = alias
		entries = append(entries, server.ServerTool{Tool: a, Handler: h.fast.ToolHandler(t.Name)})
	}
	if r.search != nil {
		entries = append(entries, h.metaTools()...)
	}
	return entries
}

// swapTools rebuilds the tool set after a source reported a change: the
// declared tools as provisioned, the sources' tools as they are now. The
// new version replaces the old one for every later call, and mcp-go sends
// notifications/tools/list_changed to the sessions with an open stream. A
// source that fails now keeps the version that works.
func (h *Handler) swapTools() {
	h.live.swapMu.Lock()
	defer h.live.swapMu.Unlock()
	sourced, held, err := h.sourceTools()
	if err == nil {
		err = sourcetools.CheckNames(h.declared, sourced)
	}
	if err == nil && h.cache != nil {
		for _, t := range sourced {
			t.Executor = h.cache.Wrap(t) // a tool without a policy keeps its executor
		}
	}
	var r *registry
	if err == nil {
		r, err = h.newRegistry(append(append([]*pipeline.Tool(nil), h.declared...), sourced...))
	}
	if err != nil {
		h.logger.Warn("tools not updated: the new set does not load; the previous one stays", zap.Error(err))
		return
	}
	r.held = held
	h.setTools(r)
	h.mcp.SetTools(h.serverTools(r)...)
	h.swapToolsets(sourced)
	h.upstreams.Refresh() // the sources' resources and prompts
	h.logger.Info("tools updated", zap.Int("tools", len(r.engine.Tools())))
}
