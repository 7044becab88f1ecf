package caddymodule

import (
	"encoding/json"
	"sort"

	"github.com/mark3labs/mcp-go/mcp"
)

// mcp-go serves the sources' tools, resources, templates and prompts from
// its own types, and re-encodes what a forwarded resources/read,
// prompts/get or completion/complete returns: fields it does not model are
// lost (an MCP App's _meta.ui of a tool, a result's _meta), and some it
// models change (hasMore: false is dropped). The upstream's own text is
// written instead (docs/sources.md, MCP servers): mcp-go's answer to such
// a request is rewritten on its way out (mcpWriter), its list entries
// replaced by the sources' and its result by the upstream's (keeping what
// mcp-go adds on 2026-07-28, mergeResult).

// listEntries is how a list answer's entries are replaced: the array under
// key, each entry found by its idField.
type listEntries struct {
	key     string
	idField string
	entry   func(id string) json.RawMessage // nil: mcp-go's entry stays
}

// passOnList prepares the rewrite of a list answer (tools/list,
// resources/list, resources/templates/list, prompts/list) when some entry
// of it comes from a source that gave its own text.
func (h *Handler) passOnList(st *callState, method string) {
	up := h.relay.Catalog()
	switch mcp.MCPMethod(method) {
	case mcp.MethodToolsList:
		if reg := h.tools(); reg.listings {
			st.list = &listEntries{key: "tools", idField: "name", entry: reg.listingOf}
		}
	case mcp.MethodResourcesList:
		if len(up.ResourceText) > 0 {
			st.list = &listEntries{key: "resources", idField: "uri", entry: mapEntry(up.ResourceText)}
		}
	case mcp.MethodResourcesTemplatesList:
		if len(up.TemplateText) > 0 {
			st.list = &listEntries{key: "resourceTemplates", idField: "uriTemplate", entry: mapEntry(up.TemplateText)}
		}
	case mcp.MethodPromptsList:
		if len(up.PromptText) > 0 {
			st.list = &listEntries{key: "prompts", idField: "name", entry: mapEntry(up.PromptText)}
		}
	}
}

func mapEntry(m map[string]json.RawMessage) func(string) json.RawMessage {
	return func(id string) json.RawMessage { return m[id] }
}

// listingOf is the tools/list entry of the tool named name when it has a
// Listing of its own, else nil.
func (r *registry) listingOf(name string) json.RawMessage {
	l := &r.list
	l.once.Do(func() { l.build(r.engine) })
	if l.err != nil {
		return nil
	}
	i := sort.Search(len(l.tools), func(i int) bool { return l.tools[i].Name >= name })
	if i == len(l.tools) || l.tools[i].Name != name || l.tools[i].Listing == nil {
		return nil
	}
	return l.enc[i]
}

// passUpstream records the upstream's own result of a forwarded request,
// written in place of mcp-go's encoding of it.
func (s *callState) passUpstream(result json.RawMessage) {
	s.mu.Lock()
	s.upstream = result
	s.mu.Unlock()
}

// passOn is p with the upstream's result or the sources' list entries in
// place of mcp-go's; false when there is nothing to replace in p.
func (s *callState) passOn(p []byte) ([]byte, bool) {
	s.mu.Lock()
	upstream := s.upstream
	s.mu.Unlock()
	switch {
	case upstream != nil:
		return rewriteMessage(p, func(msg []byte) ([]byte, bool) {
			return editResult(msg, s.id, func(ours []byte) ([]byte, error) { return mergeResult(upstream, ours) })
		})
	case s.list != nil:
		return rewriteMessage(p, func(msg []byte) ([]byte, bool) {
			return editResult(msg, s.id, s.list.replace)
		})
	}
	return p, false
}

// editResult is msg, a JSON-RPC response, with its result edited; false
// when msg is not the result for id.
func editResult(msg []byte, id any, edit func(result []byte) ([]byte, error)) ([]byte, bool) {
	var idRaw json.RawMessage
	at, to := -1, -1
	if jsonMembers(msg, func(key string, start, end int) bool {
		switch key {
		case "id":
			idRaw = msg[start:end]
		case "result":
			at, to = start, end
		}
		return true
	}) != nil || at < 0 || !sameID(idRaw, id) {
		return nil, false
	}
	result, err := edit(msg[at:to])
	if err != nil {
		return nil, false
	}
	return splice(msg, at, to, result), true
}

// replace is result with each entry of its list that has text of its own
// replaced by that text.
func (l *listEntries) replace(result []byte) ([]byte, error) {
	list := jsonMember(result, l.key)
	if list == nil {
		return result, nil
	}
	type span struct{ start, end int }
	var spans []span
	var texts []json.RawMessage
	err := jsonElements(list, func(start, end int) {
		var id string
		if json.Unmarshal(jsonMember(list[start:end], l.idField), &id) != nil {
			return
		}
		if text := l.entry(id); text != nil {
			spans = append(spans, span{start, end})
			texts = append(texts, text)
		}
	})
	if err != nil || len(spans) == 0 {
		return result, err
	}
	out := make([]byte, 0, len(list))
	last := 0
	for i, sp := range spans {
		out = append(append(out, list[last:sp.start]...), texts[i]...)
		last = sp.end
	}
	out = append(out, list[last:]...)
	return withJSONMember(result, l.key, out)
}
