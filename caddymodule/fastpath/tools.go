package fastpath

import (
	"bytes"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Registry is one version of the tool set (the shell's registry, swapped
// whole when a source's tools change). A request resolves it once, when
// it is inspected, and carries it to its end in its Call, so that one call
// sees one consistent set from resolution to response.
type Registry interface {
	// Tools is the fast path's share of the version.
	Tools() *Tools
}

// Tools is what the fast path keeps of one version of the tool set.
type Tools struct {
	Engine *pipeline.Engine
	// searching: discovery search, whose tools/list shows meta-tools
	// (mcp-go's); meta reports whether a name is one of them.
	searching bool
	meta      func(name string) bool
	list      encodedTools // tools/list entries, encoded on the first list
	// headerBound: tools whose sessionless call is left to mcp-go
	// (headerBoundTools).
	headerBound map[string]bool
	// listings: some tool has a Listing of its own, which replaces mcp-go's
	// entry in a tools/list answer (ListingOf).
	listings bool
}

// NewTools is the fast path's share of a version of engine's tools. With
// discovery search, meta reports the meta-tools' names; nil without.
func NewTools(engine *pipeline.Engine, meta func(name string) bool) *Tools {
	t := &Tools{Engine: engine, searching: meta != nil, meta: meta, headerBound: headerBoundTools(engine.Tools())}
	for _, tool := range engine.Tools() {
		t.listings = t.listings || tool.Listing != nil
	}
	return t
}

// resolves reports whether a tools/call of name finds a tool (or a
// meta-tool).
func (t *Tools) resolves(name string) bool {
	return t.Engine.Lookup(name) != nil || (t.meta != nil && t.meta(name))
}

// headerBoundTools are the tools whose input schema binds inputs to
// headers (x-mcp-header), which mcp-go checks against the arguments of a
// sessionless call; found once per version.
func headerBoundTools(tools []*pipeline.Tool) map[string]bool {
	var bound map[string]bool
	for _, t := range tools {
		if bytes.Contains(t.InputSchema, []byte("x-mcp-header")) {
			if bound == nil {
				bound = make(map[string]bool)
			}
			bound[t.Name] = true
		}
	}
	return bound
}
