package fastpath

import (
	"encoding/json"
	"sort"

	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
)

// mcp-go serves the sources' tools, resources, templates and prompts from
// its own types, and re-encodes what a forwarded resources/read,
// prompts/get or completion/complete returns: fields it does not model are
// lost (an MCP App's _meta.ui of a tool, a result's _meta), and some it
// models change (hasMore: false is dropped). The upstream's own text is
// written instead (docs/sources.md, MCP servers): mcp-go's answer to such
// a request is rewritten on its way out (Writer), its list entries
// replaced by the sources' and its result by the upstream's (keeping what
// mcp-go adds on 2026-07-28, jsonrpc.MergeResult).

// ListEntries is how a list answer's entries are replaced: the array under
// Key, each entry found by its IDField.
type ListEntries struct {
	Key     string
	IDField string
	Entry   func(id string) json.RawMessage // nil: mcp-go's entry stays
}

// ToolListings is how a tools/list answer's entries are replaced when some
// tool of t has a Listing of its own; nil when none has.
func (t *Tools) ToolListings() *ListEntries {
	if !t.listings {
		return nil
	}
	return &ListEntries{Key: "tools", IDField: "name", Entry: t.listingOf}
}

// listingOf is the tools/list entry of the tool named name when it has a
// Listing of its own, else nil.
func (t *Tools) listingOf(name string) json.RawMessage {
	l := t.encoded()
	if l.err != nil {
		return nil
	}
	i := sort.Search(len(l.tools), func(i int) bool { return l.tools[i].Name >= name })
	if i == len(l.tools) || l.tools[i].Name != name || l.tools[i].Listing == nil {
		return nil
	}
	return l.enc[i]
}

// PassUpstream records the upstream's own result of a forwarded request,
// written in place of mcp-go's encoding of it.
func (c *Call) PassUpstream(result json.RawMessage) {
	c.mu.Lock()
	c.upstream = result
	c.mu.Unlock()
}

// PassResult records the whole result of a tools/call, an upstream's own
// with what the gateway adds already in it (jsonrpc.EncodeVerbatim),
// written in place of mcp-go's encoding of a stand-in without merging
// the two: the bytes are the direct path's.
func (c *Call) PassResult(result json.RawMessage) {
	c.mu.Lock()
	c.upstream, c.whole = result, true
	c.mu.Unlock()
}

// passOn is p with the upstream's result or the sources' list entries in
// place of mcp-go's; false when there is nothing to replace in p.
func (c *Call) passOn(p []byte) ([]byte, bool) {
	c.mu.Lock()
	upstream, whole := c.upstream, c.whole
	c.mu.Unlock()
	switch {
	case whole:
		return rewriteMessage(p, func(msg []byte) ([]byte, bool) {
			return editResult(msg, c.ID, func([]byte) ([]byte, error) { return upstream, nil })
		})
	case upstream != nil:
		return rewriteMessage(p, func(msg []byte) ([]byte, bool) {
			return editResult(msg, c.ID, func(ours []byte) ([]byte, error) { return mergeUpstream(upstream, ours) })
		})
	case c.List != nil:
		return rewriteMessage(p, func(msg []byte) ([]byte, bool) {
			return editResult(msg, c.ID, c.List.replace)
		})
	}
	return p, false
}

// gatewayMembers are the members of mcp-go's result that win over the
// upstream's: the caching hints, which the gateway decides (ReadCacheHints
// bounds the upstream's by its own). mcp-go writes them only on
// 2026-07-28; on earlier versions the upstream's text stays as it sent it.
var gatewayMembers = []string{"ttlMs", "cacheScope"}

// mergeUpstream is jsonrpc.MergeResult with gatewayMembers taken from ours.
func mergeUpstream(upstream, ours []byte) ([]byte, error) {
	out, err := jsonrpc.MergeResult(upstream, ours)
	for _, key := range gatewayMembers {
		if v := jsonrpc.Member(ours, key); v != nil && err == nil {
			out, err = jsonrpc.WithMember(out, key, v)
		}
	}
	return out, err
}

// editResult is msg, a JSON-RPC response, with its result edited; false
// when msg is not the result for id.
func editResult(msg []byte, id any, edit func(result []byte) ([]byte, error)) ([]byte, bool) {
	var idRaw json.RawMessage
	at, to := -1, -1
	if jsonrpc.Members(msg, func(key string, start, end int) bool {
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
	return jsonrpc.Splice(msg, at, to, result), true
}

// replace is result with each entry of its list that has text of its own
// replaced by that text.
func (l *ListEntries) replace(result []byte) ([]byte, error) {
	list := jsonrpc.Member(result, l.Key)
	if list == nil {
		return result, nil
	}
	type span struct{ start, end int }
	var spans []span
	var texts []json.RawMessage
	err := jsonrpc.Elements(list, func(start, end int) {
		var id string
		if json.Unmarshal(jsonrpc.Member(list[start:end], l.IDField), &id) != nil {
			return
		}
		if text := l.Entry(id); text != nil {
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
	return jsonrpc.WithMember(result, l.Key, out)
}
