package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/discovery"
	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/pipeline"
)

// Tool discovery (README, Tool search): how tools/list presents the
// registry. The config and its parsing are the shell's; the search index
// and the meta-tools are discovery.Index and discovery.Meta.

const (
	discoveryList   = "list"   // tools/list lists every tool (default)
	discoverySearch = "search" // tools/list lists the meta-tools and the pins
	discoveryAuto   = "auto"   // search once the registry holds more than Auto tools
)

// DiscoveryConfig is `discovery list|search|auto <n> { pin <tool...> }`.
type DiscoveryConfig struct {
	Mode string `json:"mode"`
	// Auto is the number of tools above which auto mode searches.
	Auto int `json:"auto,omitempty"`
	// Pin lists tools listed directly in search mode (names or aliases).
	Pin []string `json:"pin,omitempty"`
}

// Validate checks a discovery config that did not come from a Caddyfile.
func (c *DiscoveryConfig) validate() error {
	switch {
	case c == nil:
		return nil
	case c.Mode != discoveryList && c.Mode != discoverySearch && c.Mode != discoveryAuto:
		return fmt.Errorf("discovery: mode must be %q, %q or %q, got %q", discoveryList, discoverySearch, discoveryAuto, c.Mode)
	case c.Mode == discoveryAuto && c.Auto < 1:
		return fmt.Errorf("discovery auto: the number of tools must be positive, got %d", c.Auto)
	case c.Mode == discoveryList && len(c.Pin) > 0:
		return fmt.Errorf("discovery list: pins apply to search and auto")
	}
	return nil
}

// searching reports whether a registry of n tools is served in search mode.
func (c *DiscoveryConfig) searching(n int) bool {
	return c != nil && (c.Mode == discoverySearch || (c.Mode == discoveryAuto && n > c.Auto))
}

// checkPins refuses, at load, a pin that names no tool, unless a source
// can still bring it (a source whose tools change, or one not up yet).
func (h *Handler) checkPins(engine *pipeline.Engine) error {
	if h.Discovery == nil {
		return nil
	}
	for _, p := range h.Discovery.Pin {
		if engine.Lookup(p) != nil {
			continue
		}
		if len(h.sources) > 0 {
			h.logger.Warn("pinned tool not found; it is pinned when a source brings it", zap.String("pin", p))
			continue
		}
		return fmt.Errorf("discovery: pin %q: no such tool", p)
	}
	return nil
}

// metaTools are the mcp-go entries of the meta-tools.
func (h *Handler) metaTools() []server.ServerTool {
	return discovery.NewMeta(metaHost{h}, h.ErrorMode == errorModeResult).Tools()
}

// listSearch is tools/list in search mode: the meta-tools and the pinned
// tools the caller may call.
func (h *Handler) listSearch(ctx context.Context, r *registry, tools []mcp.Tool) []mcp.Tool {
	return discovery.List(ctx, r.engine, r.search, tools, h.callable)
}

// metaHost is what the meta-tools (discovery.Meta) need of the handler.
type metaHost struct{ h *Handler }

func (m metaHost) Current(ctx context.Context) (*pipeline.Engine, *discovery.Index) {
	r := m.h.registryOf(ctx)
	return r.engine, r.search
}

func (m metaHost) Callable(ctx context.Context, t *pipeline.Tool) bool { return m.h.callable(ctx, t) }

// Arguments are decoded with UseNumber when the HTTP layer read them
// (fastpath.Call).
func (metaHost) Arguments(ctx context.Context, req mcp.CallToolRequest) map[string]any {
	if st := fastpath.CallFrom(ctx); st != nil && st.Name == req.Params.Name && st.Args != nil {
		return st.Args
	}
	return req.GetArguments()
}

func (m metaHost) Fail(ctx context.Context, perr *pipeline.Error) { requestAccess{m.h}.Fail(ctx, perr) }

func (m metaHost) Run(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, *pipeline.Error) {
	return m.h.runTool(ctx, name, args, fastpath.RequestInfo(ctx, fastpath.CallFrom(ctx)))
}

func (metaHost) Describe(t *pipeline.Tool) (json.RawMessage, error) { return jsonrpc.ToolEntry(t) }
