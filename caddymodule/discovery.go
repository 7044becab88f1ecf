package caddymodule

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Tool discovery (README, Tool search): how tools/list presents the
// registry. With thousands of tools a client cannot be shown them all (the
// list alone fills a model's context), so in search mode tools/list returns
// three meta-tools, search_tools, describe_tool and call_tool
// (metatools.go), and the pinned tools. Every tool stays callable under
// its own name; only the listing changes.

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
