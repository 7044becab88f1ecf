package caddymodule

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
)

// passOnList prepares the rewrite of a list answer (tools/list,
// resources/list, resources/templates/list, prompts/list) when some entry
// of it comes from a source that gave its own text (fastpath.ListEntries).
func (h *Handler) passOnList(c *fastpath.Call, method string) {
	up := h.upstreams.Catalog()
	switch mcp.MCPMethod(method) {
	case mcp.MethodToolsList:
		c.List = h.tools().Tools().ToolListings()
	case mcp.MethodResourcesList:
		if len(up.ResourceText) > 0 {
			c.List = &fastpath.ListEntries{Key: "resources", IDField: "uri", Entry: mapEntry(up.ResourceText)}
		}
	case mcp.MethodResourcesTemplatesList:
		if len(up.TemplateText) > 0 {
			c.List = &fastpath.ListEntries{Key: "resourceTemplates", IDField: "uriTemplate", Entry: mapEntry(up.TemplateText)}
		}
	case mcp.MethodPromptsList:
		if len(up.PromptText) > 0 {
			c.List = &fastpath.ListEntries{Key: "prompts", IDField: "name", Entry: mapEntry(up.PromptText)}
		}
	}
}

func mapEntry(m map[string]json.RawMessage) func(string) json.RawMessage {
	return func(id string) json.RawMessage { return m[id] }
}
