package caddymodule

import (
	"fmt"
	"path"
	"slices"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

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

// splitSourceBlock reads the gateway's sub-directives out of the segment
// `<type> <args...> { ... }` and returns a dispenser over the rest,
// positioned for caddyfile.UnmarshalModule. Tokens keep their file and
// line, so the module's errors still point at the Caddyfile.
func splitSourceBlock(seg caddyfile.Segment, name, typ string, sel *SourceSelection) (*caddyfile.Dispenser, error) {
	mod, err := caddy.GetModule("mcp.sources." + typ)
	if err != nil {
		return nil, fmt.Errorf("source %q: unknown type %q", name, typ)
	}
	_, ownSelection := mod.New().(pipeline.SelectsTools)
	rest := make([]caddyfile.Token, 0, len(seg))
	depth := 0
	for i := 0; i < len(seg); i++ {
		tok := seg[i]
		lineStart := i == 0 || seg[i-1].Line != tok.Line || seg[i-1].File != tok.File
		if depth == 1 && lineStart && isSelectionDirective(tok.Text, ownSelection) {
			j := i + 1
			for j < len(seg) && seg[j].Line == tok.Line && seg[j].File == tok.File && seg[j].Text != "}" {
				j++
			}
			if err := sel.parse(name, tok, seg[i+1:j]); err != nil {
				return nil, err
			}
			i = j - 1
			continue
		}
		switch tok.Text {
		case "{":
			depth++
		case "}":
			depth--
		}
		rest = append(rest, tok)
	}
	nd := caddyfile.NewDispenser(rest)
	nd.Next()
	return nd, nil
}

func isSelectionDirective(text string, ownSelection bool) bool {
	switch text {
	case "prefix", "disable":
		return true
	case "include", "exclude":
		return !ownSelection
	}
	return false
}

// parse reads one sub-directive; errors name the file and line.
func (sel *SourceSelection) parse(source string, dir caddyfile.Token, args []caddyfile.Token) error {
	errf := func(format string, a ...any) error {
		return fmt.Errorf("source %q: %s, at %s:%d", source, fmt.Sprintf(format, a...), dir.File, dir.Line)
	}
	vals := make([]string, len(args))
	for i, a := range args {
		vals[i] = a.Text
	}
	switch dir.Text {
	case "prefix":
		if len(vals) != 1 {
			return errf("usage: prefix <namespace>|off")
		}
		if sel.Prefix != "" || sel.PrefixOff {
			return errf("prefix given twice")
		}
		if vals[0] == "off" {
			sel.PrefixOff = true
		} else if !sourceName.MatchString(vals[0]) {
			return errf("prefix %q: a namespace must match %s", vals[0], sourceName)
		} else {
			sel.Prefix = vals[0]
		}
	case "disable":
		if len(vals) == 0 {
			return errf("disable needs at least one tool name")
		}
		sel.Disable = append(sel.Disable, vals...)
	case "include", "exclude":
		if len(vals) == 0 {
			return errf("%s needs at least one tool name pattern (with * and ?)", dir.Text)
		}
		for _, g := range vals {
			if _, err := path.Match(g, ""); err != nil {
				return errf("%s: bad pattern %q", dir.Text, g)
			}
		}
		if dir.Text == "include" {
			sel.Include = append(sel.Include, vals...)
		} else {
			sel.Exclude = append(sel.Exclude, vals...)
		}
	}
	return nil
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
