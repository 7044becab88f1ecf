package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/toolsearch"
)

// The meta-tools. search_tools finds tools, describe_tool shows one whole,
// call_tool runs one as a tools/call of it would (Host.Run): the same
// pipeline, auth, rate limits and telemetry. What the caller may not call
// it does not find either: search results and describe_tool apply the
// tools/list filter (Host.Callable).

const (
	defaultSearchLimit = 10
	maxSearchLimit     = 50
	// searchDescriptionMax clips a description in search results; the
	// whole one is describe_tool's.
	searchDescriptionMax = 300
)

// Host is what the meta-tools need of the shell.
type Host interface {
	// Current is the engine and Index (nil when it lists every tool) of
	// the registry version the request of ctx resolved.
	Current(ctx context.Context) (*pipeline.Engine, *Index)
	// Callable reports whether the caller of ctx passes t's auth check.
	Callable(ctx context.Context, t *pipeline.Tool) bool
	// Arguments are the call's arguments, as the HTTP layer decoded them
	// (numbers kept exact) when it did.
	Arguments(ctx context.Context, req mcp.CallToolRequest) map[string]any
	// Fail puts perr on the request's call state, so that the wire
	// answer carries its code.
	Fail(ctx context.Context, perr *pipeline.Error)
	// Run runs the tool name as a tools/call of it.
	Run(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, *pipeline.Error)
	// Describe is t's tools/list entry.
	Describe(t *pipeline.Tool) (json.RawMessage, error)
}

// Meta serves the meta-tools.
type Meta struct {
	host Host
	// errorResults: a failure is an isError result (error_mode result).
	errorResults bool
}

// NewMeta is the meta-tools of host; errorResults answers their own
// failures as isError results (error_mode result).
func NewMeta(host Host, errorResults bool) *Meta {
	return &Meta{host: host, errorResults: errorResults}
}

// Tools are the mcp-go entries of the meta-tools.
func (m *Meta) Tools() []server.ServerTool {
	yes := true
	return []server.ServerTool{
		{Tool: mcp.Tool{
			Name: MetaSearch,
			Description: "Search this server's tools, best match first. The server has too many tools to list; " +
				"search in plain words for what you want to do, then call describe_tool for a hit's input schema and call_tool to run it.",
			RawInputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
				`"query":{"type":"string","description":"Words of what the tool does, its name or its inputs"},`+
				`"limit":{"type":"integer","minimum":1,"maximum":%d,"default":%d,"description":"Most hits to return"},`+
				`"source":{"type":"string","description":"Only tools of this source (the namespace their names start with)"}},`+
				`"required":["query"]}`, maxSearchLimit, defaultSearchLimit)),
			Annotations: mcp.ToolAnnotation{Title: "Search tools", ReadOnlyHint: &yes},
		}, Handler: m.search},
		{Tool: mcp.Tool{
			Name:        MetaDescribe,
			Description: "Show one tool whole: its description, input schema, output schema and annotations.",
			RawInputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"name":{"type":"string","description":"The tool's name, as search_tools returned it"}},"required":["name"]}`),
			Annotations: mcp.ToolAnnotation{Title: "Describe a tool", ReadOnlyHint: &yes},
		}, Handler: m.describe},
		{Tool: mcp.Tool{
			Name:        MetaCall,
			Description: "Call a tool found with search_tools, with arguments that match its input schema (describe_tool).",
			RawInputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"name":{"type":"string","description":"The tool's name"},` +
				`"arguments":{"type":"object","description":"The tool's arguments"}},"required":["name"]}`),
			Annotations: mcp.ToolAnnotation{Title: "Call a tool"},
		}, Handler: m.call},
	}
}

// List is tools/list in search mode: of tools, the meta-tools and the
// pinned tools the caller may call.
func List(ctx context.Context, engine *pipeline.Engine, x *Index, tools []mcp.Tool, callable func(context.Context, *pipeline.Tool) bool) []mcp.Tool {
	out := make([]mcp.Tool, 0, len(metaNames)+len(x.pins))
	for _, t := range tools {
		if x.IsMeta(t.Name) {
			out = append(out, t)
		} else if x.pins[t.Name] {
			if pt := engine.Lookup(t.Name); pt != nil && callable(ctx, pt) {
				out = append(out, t)
			}
		}
	}
	return out
}

// fail answers a meta-tool's own failure (bad arguments, an unknown tool)
// as a tool's is answered: the documented JSON-RPC error, or an isError
// result in error_mode result.
func (m *Meta) fail(ctx context.Context, perr *pipeline.Error) (*mcp.CallToolResult, error) {
	if m.errorResults {
		return mcp.NewToolResultError(perr.Error()), nil
	}
	m.host.Fail(ctx, perr)
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

// search is search_tools: the registry version's index, filtered by what
// the caller may call.
func (m *Meta) search(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := m.host.Arguments(ctx, req)
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
		return m.fail(ctx, perr)
	}
	_, x := m.host.Current(ctx)
	if x == nil { // the registry shrank below discovery auto's threshold
		return m.fail(ctx, notFound(MetaSearch))
	}
	hits := x.index.Search(toolsearch.Query{Text: query, Limit: limit, Source: source,
		Allow: func(i int) bool { return m.host.Callable(ctx, x.tools[i]) }})
	out := struct {
		Tools []searchHit `json:"tools"`
	}{Tools: make([]searchHit, 0, len(hits))}
	for _, hit := range hits {
		t := x.tools[hit.Doc]
		out.Tools = append(out.Tools, searchHit{Name: t.Name, Title: t.Title, Description: clipRunes(t.Description, searchDescriptionMax), Source: t.Source})
	}
	return jsonResult(out)
}

// describe is describe_tool: the tool as tools/list would show it, and
// its source. A tool the caller may not call is not found.
func (m *Meta) describe(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name, perr := stringArg(m.host.Arguments(ctx, req), "name")
	if perr == nil && name == "" {
		perr = badArgument("name is required")
	}
	if perr != nil {
		return m.fail(ctx, perr)
	}
	engine, _ := m.host.Current(ctx)
	t := engine.Lookup(name)
	if t == nil || !m.host.Callable(ctx, t) {
		return m.fail(ctx, notFound(name))
	}
	// mcp.Tool has its own MarshalJSON, which an embedding would promote
	// and lose the source by; the tool's JSON gets the source added.
	raw, err := m.host.Describe(t)
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

// call is call_tool: the named tool run exactly as a tools/call of that
// name would run it (auth, rate limits, cache, approvals, telemetry,
// error codes).
func (m *Meta) call(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := m.host.Arguments(ctx, req)
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
		return m.fail(ctx, perr)
	}
	engine, _ := m.host.Current(ctx)
	if t := engine.Lookup(name); t != nil {
		name = t.Name // an alias runs, and is logged as, its tool
	}
	out, perr := m.host.Run(ctx, name, inner)
	if perr != nil {
		m.host.Fail(ctx, perr)
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
