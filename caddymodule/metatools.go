package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/toolsearch"
)

// The meta-tools of discovery search (discovery.go). search_tools finds
// tools, describe_tool shows one whole, call_tool runs one through runTool:
// the same pipeline, auth, rate limits and telemetry as a direct call of
// that tool. What the caller may not call it does not find either: search
// results and describe_tool apply the tools/list filter (callable).

const (
	metaSearch   = "search_tools"
	metaDescribe = "describe_tool"
	metaCall     = "call_tool"

	defaultSearchLimit = 10
	maxSearchLimit     = 50
	// searchDescriptionMax clips a description in search results; the
	// whole one is describe_tool's.
	searchDescriptionMax = 300
)

var metaNames = []string{metaSearch, metaDescribe, metaCall}

// toolIndex is a registry version's search side, built with it (once per
// version, not per call).
type toolIndex struct {
	index *toolsearch.Index
	tools []*pipeline.Tool  // index doc → tool
	pins  map[string]bool   // canonical names of the pinned tools
	meta  map[string]string // meta-tool name → itself, for lookups
}

// reserveMetaNames refuses a tool named like a meta-tool and leaves such
// names out of the aliases (an upstream's own "search_tools" must not
// shadow the gateway's). The tools' alias slices are replaced, not edited.
func (h *Handler) reserveMetaNames(tools []*pipeline.Tool) error {
	for _, t := range tools {
		if slices.Contains(metaNames, t.Name) {
			origin := "a declared tool"
			if !slices.Contains(h.declared, t) {
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

// newToolIndex indexes the engine's tools and resolves the pins (a pin
// may be an alias; one naming no tool in this version pins nothing).
func newToolIndex(engine *pipeline.Engine, pins []string) *toolIndex {
	tools := engine.Tools()
	docs := make([]toolsearch.Doc, len(tools))
	for i, t := range tools {
		docs[i] = toolsearch.Doc{Name: t.Name, Title: t.Title, Description: t.Description,
			Source: t.Source, Inputs: inputNames(t.Schema()), Aliases: t.Aliases}
	}
	x := &toolIndex{index: toolsearch.New(docs), tools: tools, pins: map[string]bool{}, meta: map[string]string{}}
	for _, p := range pins {
		if t := engine.Lookup(p); t != nil {
			x.pins[t.Name] = true
		}
	}
	for _, m := range metaNames {
		x.meta[m] = m
	}
	return x
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

// isMeta reports whether name is a meta-tool of this version.
func (r *registry) isMeta(name string) bool {
	return r.search != nil && r.search.meta[name] != ""
}

// metaTools are the mcp-go entries of the meta-tools.
func (h *Handler) metaTools() []server.ServerTool {
	yes := true
	return []server.ServerTool{
		{Tool: mcp.Tool{
			Name: metaSearch,
			Description: "Search this server's tools, best match first. The server has too many tools to list; " +
				"search in plain words for what you want to do, then call describe_tool for a hit's input schema and call_tool to run it.",
			RawInputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
				`"query":{"type":"string","description":"Words of what the tool does, its name or its inputs"},`+
				`"limit":{"type":"integer","minimum":1,"maximum":%d,"default":%d,"description":"Most hits to return"},`+
				`"source":{"type":"string","description":"Only tools of this source (the namespace their names start with)"}},`+
				`"required":["query"]}`, maxSearchLimit, defaultSearchLimit)),
			Annotations: mcp.ToolAnnotation{Title: "Search tools", ReadOnlyHint: &yes},
		}, Handler: h.searchTools},
		{Tool: mcp.Tool{
			Name:        metaDescribe,
			Description: "Show one tool whole: its description, input schema, output schema and annotations.",
			RawInputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"name":{"type":"string","description":"The tool's name, as search_tools returned it"}},"required":["name"]}`),
			Annotations: mcp.ToolAnnotation{Title: "Describe a tool", ReadOnlyHint: &yes},
		}, Handler: h.describeTool},
		{Tool: mcp.Tool{
			Name:        metaCall,
			Description: "Call a tool found with search_tools, with arguments that match its input schema (describe_tool).",
			RawInputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"name":{"type":"string","description":"The tool's name"},` +
				`"arguments":{"type":"object","description":"The tool's arguments"}},"required":["name"]}`),
			Annotations: mcp.ToolAnnotation{Title: "Call a tool"},
		}, Handler: h.handleCallTool},
	}
}

// listSearch is tools/list in search mode: the meta-tools and the pinned
// tools the caller may call.
func (h *Handler) listSearch(ctx context.Context, r *registry, tools []mcp.Tool) []mcp.Tool {
	out := make([]mcp.Tool, 0, len(metaNames)+len(r.search.pins))
	for _, t := range tools {
		if r.isMeta(t.Name) {
			out = append(out, t)
		} else if r.search.pins[t.Name] {
			if pt := r.engine.Lookup(t.Name); pt != nil && h.callable(ctx, pt) {
				out = append(out, t)
			}
		}
	}
	return out
}

// metaArgs are the arguments of a meta-tool call, decoded with UseNumber
// when the HTTP layer read them (fastpath.Call).
func metaArgs(ctx context.Context, req mcp.CallToolRequest) map[string]any {
	if st := fastpath.CallFrom(ctx); st != nil && st.Name == req.Params.Name && st.Args != nil {
		return st.Args
	}
	return req.GetArguments()
}

// metaFail answers a meta-tool's own failure (bad arguments, an unknown
// tool) as runTool answers a tool's: the documented JSON-RPC error, or an
// isError result in error_mode result.
func (h *Handler) metaFail(ctx context.Context, perr *pipeline.Error) (*mcp.CallToolResult, error) {
	if h.ErrorMode == errorModeResult {
		return mcp.NewToolResultError(perr.Error()), nil
	}
	if st := fastpath.CallFrom(ctx); st != nil {
		st.Fail(perr)
	}
	return nil, perr
}

func badArgument(format string, args ...any) *pipeline.Error {
	return pipeline.Fail(pipeline.StageValidation, nil, format, args...)
}

func notFound(name string) *pipeline.Error {
	return &pipeline.Error{Code: pipeline.CodeToolNotFound, Stage: pipeline.StageResolution, Message: fmt.Sprintf("tool %q not found", name)}
}

// stringArg reads an optional string argument.
func stringArg(args map[string]any, key string) (string, *pipeline.Error) {
	v, ok := args[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", badArgument("%s must be a string", key)
	}
	return s, nil
}

// limitArg reads search_tools' limit: a whole number in 1..maxSearchLimit.
func limitArg(args map[string]any) (int, *pipeline.Error) {
	v, ok := args["limit"]
	if !ok || v == nil {
		return defaultSearchLimit, nil
	}
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case json.Number:
		var err error
		if f, err = n.Float64(); err != nil {
			return 0, badArgument("limit must be a number")
		}
	default:
		return 0, badArgument("limit must be a number")
	}
	if f != float64(int(f)) || f < 1 || f > maxSearchLimit {
		return 0, badArgument("limit must be a whole number from 1 to %d", maxSearchLimit)
	}
	return int(f), nil
}

// jsonResult is a meta-tool's answer: v as JSON in one text block.
func jsonResult(v any) (*mcp.CallToolResult, error) {
	text, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(text))}}, nil
}

type searchHit struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
	Source      string `json:"source,omitempty"`
}

// searchTools is search_tools: the registry version's index, filtered by
// what the caller may call.
func (h *Handler) searchTools(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := metaArgs(ctx, req)
	query, perr := stringArg(args, "query")
	if perr == nil && strings.TrimSpace(query) == "" {
		perr = badArgument("query is required: words of what the tool does")
	}
	var source string
	if perr == nil {
		source, perr = stringArg(args, "source")
	}
	var limit int
	if perr == nil {
		limit, perr = limitArg(args)
	}
	if perr != nil {
		return h.metaFail(ctx, perr)
	}
	x := h.registryOf(ctx).search
	if x == nil { // the registry shrank below discovery auto's threshold
		return h.metaFail(ctx, notFound(metaSearch))
	}
	hits := x.index.Search(toolsearch.Query{Text: query, Limit: limit, Source: source,
		Allow: func(i int) bool { return h.callable(ctx, x.tools[i]) }})
	out := struct {
		Tools []searchHit `json:"tools"`
	}{Tools: make([]searchHit, 0, len(hits))}
	for _, hit := range hits {
		t := x.tools[hit.Doc]
		out.Tools = append(out.Tools, searchHit{Name: t.Name, Title: t.Title, Description: clipRunes(t.Description, searchDescriptionMax), Source: t.Source})
	}
	return jsonResult(out)
}

// describeTool is describe_tool: the tool as tools/list would show it, and
// its source. A tool the caller may not call is not found.
func (h *Handler) describeTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name, perr := stringArg(metaArgs(ctx, req), "name")
	if perr == nil && name == "" {
		perr = badArgument("name is required")
	}
	if perr != nil {
		return h.metaFail(ctx, perr)
	}
	t := h.registryOf(ctx).engine.Lookup(name)
	if t == nil || !h.callable(ctx, t) {
		return h.metaFail(ctx, notFound(name))
	}
	// mcp.Tool has its own MarshalJSON, which an embedding would promote
	// and lose the source by; the tool's JSON gets the source added.
	raw, err := jsonrpc.ToolEntry(t)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	if t.Source != "" {
		out["source"] = t.Source
	}
	return jsonResult(out)
}

// handleCallTool is call_tool: runTool on the named tool, exactly as a tools/call
// of that name would run it (auth, rate limits, cache, approvals,
// telemetry, error codes).
func (h *Handler) handleCallTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := metaArgs(ctx, req)
	name, perr := stringArg(args, "name")
	if perr == nil && name == "" {
		perr = badArgument("name is required")
	}
	var inner map[string]any
	if perr == nil {
		switch a := args["arguments"].(type) {
		case nil:
			inner = map[string]any{}
		case map[string]any:
			inner = a
		default:
			perr = badArgument("arguments must be an object")
		}
	}
	if perr != nil {
		return h.metaFail(ctx, perr)
	}
	if t := h.registryOf(ctx).engine.Lookup(name); t != nil {
		name = t.Name // an alias runs, and is logged as, its tool
	}
	st := fastpath.CallFrom(ctx)
	out, perr := h.runTool(ctx, name, inner, fastpath.RequestInfo(ctx, st))
	if perr != nil {
		if st != nil {
			st.Fail(perr)
		}
		return nil, perr
	}
	return out, nil
}

// clipRunes shortens s to at most n runes, marking the cut.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
