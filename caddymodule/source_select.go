package caddymodule

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
)

// What the gateway itself reads in any source's block (README, Sources:
// one registry), whatever the source's type:
//
//	prefix <namespace>|off   name the tools <namespace>_<tool> instead of
//	                         <source>_<tool>, or by their own names
//	disable <tool...>        leave these tools out
//	include <glob...>        keep only tools whose name matches
//	exclude <glob...>        leave out tools whose name matches
//
// A source whose own block reads include and exclude with richer patterns
// (OpenAPI: tags, methods, paths) implements pipeline.SelectsTools and keeps
// them. Every source tool also answers to <source>.<original>,
// <source>/<original> and its original name (sourceAliases).

// SourceSelection is the gateway's part of a source's config.
type SourceSelection struct {
	// Prefix replaces the source's name as its tools' namespace; PrefixOff
	// drops the namespace.
	Prefix    string   `json:"prefix,omitempty"`
	PrefixOff bool     `json:"prefix_off,omitempty"`
	Disable   []string `json:"disable,omitempty"`
	Include   []string `json:"include,omitempty"`
	Exclude   []string `json:"exclude,omitempty"`
}

// validate checks a selection that did not come from a Caddyfile.
func (sel *SourceSelection) validate(source string) error {
	if sel.Prefix != "" && (sel.PrefixOff || !sourceName.MatchString(sel.Prefix)) {
		return fmt.Errorf("source %q: prefix %q: a namespace must match %s (or prefix_off alone)", source, sel.Prefix, sourceName)
	}
	for _, g := range append(slices.Clone(sel.Include), sel.Exclude...) {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("source %q: bad include/exclude pattern %q", source, g)
		}
	}
	return nil
}

// namespace is what the source's tools are named into.
func (c *SourceConfig) namespace() string {
	switch {
	case c.PrefixOff:
		return ""
	case c.Prefix != "":
		return c.Prefix
	}
	return c.Name
}

// original is a source tool's own name: what the source says, else its
// name without the namespace.
func original(t *pipeline.Tool, namespace string) string {
	if t.Original != "" {
		return t.Original
	}
	if namespace != "" {
		if o, ok := strings.CutPrefix(t.Name, pipeline.ToolName(namespace, "")+"_"); ok {
			return o
		}
	}
	return t.Name
}

// names are the names a selection matches a tool by: its name, its
// original name, and the original under the source's name.
func selectionNames(t *pipeline.Tool, source, orig string) []string {
	return []string{t.Name, orig, source + "." + orig, source + "/" + orig}
}

// selectTools applies disable, include and exclude to a source's tools and
// adds the aliases every source tool answers to. A disable naming no tool
// is logged: the source may bring it later (a refreshed document).
func (h *Handler) selectTools(cfg *SourceConfig, tools []*pipeline.Tool) []*pipeline.Tool {
	ns := cfg.namespace()
	used := make(map[string]bool, len(cfg.Disable))
	kept := tools[:0]
	for _, t := range tools {
		orig := original(t, ns)
		names := selectionNames(t, cfg.Name, orig)
		if d := slices.IndexFunc(cfg.Disable, func(n string) bool { return slices.Contains(names, n) }); d >= 0 {
			used[cfg.Disable[d]] = true
			continue
		}
		if len(cfg.Include) > 0 && !matchAny(cfg.Include, t.Name, orig) || matchAny(cfg.Exclude, t.Name, orig) {
			continue
		}
		t.Aliases = sourceAliases(t, cfg, orig)
		kept = append(kept, t)
	}
	for _, d := range cfg.Disable {
		if !used[d] && h.logger != nil {
			h.logger.Warn("disable names no tool of the source", zap.String("source", cfg.Name), zap.String("tool", d))
		}
	}
	return kept
}

func matchAny(globs []string, names ...string) bool {
	for _, g := range globs {
		for _, n := range names {
			if ok, _ := path.Match(g, n); ok {
				return true
			}
		}
	}
	return false
}

// sourceAliases are the source's own aliases plus <source>.<original>,
// <source>/<original> and <original> (and the same under a prefix), never
// the tool's own name. An alias two tools claim is dropped by the engine.
func sourceAliases(t *pipeline.Tool, cfg *SourceConfig, orig string) []string {
	out := slices.Clone(t.Aliases)
	add := func(a string) {
		if a != t.Name && a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	add(cfg.Name + "." + orig)
	add(cfg.Name + "/" + orig)
	add(orig)
	if ns := cfg.namespace(); ns != "" && ns != cfg.Name {
		add(ns + "." + orig)
		add(ns + "/" + orig)
	}
	return out
}
