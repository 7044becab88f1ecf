package caddymodule

import (
	"fmt"
	"path"
	"slices"
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
