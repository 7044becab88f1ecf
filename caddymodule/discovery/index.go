// Package discovery is tool search (README, Tool search): with thousands
// of tools a client cannot be shown them all (the list alone fills a
// model's context), so in search mode tools/list returns three meta-tools,
// search_tools, describe_tool and call_tool, and the pinned tools. Every
// tool stays callable under its own name; only the listing changes. The
// shell decides when a registry version searches and builds its Index
// with it.
package discovery

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/toolsearch"
)

const (
	MetaSearch   = "search_tools"
	MetaDescribe = "describe_tool"
	MetaCall     = "call_tool"
)

var metaNames = []string{MetaSearch, MetaDescribe, MetaCall}

// Index is a registry version's search side, built with it (once per
// version, not per call).
type Index struct {
	index *toolsearch.Index
	tools []*pipeline.Tool // index doc → tool
	pins  map[string]bool  // canonical names of the pinned tools
}

// Reserve refuses a tool named like a meta-tool and leaves such names out
// of the aliases (an upstream's own "search_tools" must not shadow the
// gateway's). The tools' alias slices are replaced, not edited; declared
// are the Caddyfile's own tools, for the message.
func Reserve(tools, declared []*pipeline.Tool) error {
	for _, t := range tools {
		if slices.Contains(metaNames, t.Name) {
			origin := "a declared tool"
			if !slices.Contains(declared, t) {
				origin = fmt.Sprintf("a tool of source %q", t.Source)
			}
			return fmt.Errorf("discovery search: %s is named %q, the name of a meta-tool; rename it (a source's prefix) or use discovery list", origin, t.Name)
		}
		if slices.ContainsFunc(t.Aliases, func(a string) bool { return slices.Contains(metaNames, a) }) {
			t.Aliases = slices.DeleteFunc(slices.Clone(t.Aliases), func(a string) bool { return slices.Contains(metaNames, a) })
		}
	}
	return nil
}

// NewIndex indexes the engine's tools and resolves the pins (a pin may be
// an alias; one naming no tool in this version pins nothing).
func NewIndex(engine *pipeline.Engine, pins []string) *Index {
	tools := engine.Tools()
	docs := make([]toolsearch.Doc, len(tools))
	for i, t := range tools {
		docs[i] = toolsearch.Doc{Name: t.Name, Title: t.Title, Description: t.Description,
			Source: t.Source, Inputs: inputNames(t.Schema()), Aliases: t.Aliases}
	}
	x := &Index{index: toolsearch.New(docs), tools: tools, pins: map[string]bool{}}
	for _, p := range pins {
		if t := engine.Lookup(p); t != nil {
			x.pins[t.Name] = true
		}
	}
	return x
}

// IsMeta reports whether name is a meta-tool of this version (none
// without an Index: tools/list lists every tool).
func (x *Index) IsMeta(name string) bool {
	return x != nil && slices.Contains(metaNames, name)
}

// inputNames are the top-level property names of an input schema.
func inputNames(schema json.RawMessage) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
