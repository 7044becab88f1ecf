package upstreams

import (
	"context"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/caddymodule/resources"
	"github.com/edgemcp/edgemcp/pipeline"
)

// A server may read, or take subscriptions to, URIs it does not list: the
// targets of the resource links its tools return, one template's URIs on
// a server that does not answer resources/templates/list, a resource it
// creates on demand. Such a URI goes to the source that owns its scheme
// (the one source whose resources or templates use it) or, when only one
// source could take the request, to that one (docs/sources.md, MCP
// servers, Subscriptions).

// CatchAllTemplate is a resource template registered with mcp-go, and
// hidden from templates/list, that matches every URI: mcp-go answers a
// read of a URI that matches nothing it has itself, so this is how such a
// read reaches readUnlisted.
const CatchAllTemplate = "{+uri}"

// unlistedOrigin is the source that takes uri, a URI nothing lists, among
// the catalog sources that want accepts; nil when none can be told.
func (r *Set) unlistedOrigin(uri string, want func(pipeline.CatalogSource) bool) pipeline.CatalogSource {
	cat := r.cur.Load()
	var owner, only pipeline.CatalogSource
	owners, candidates := 0, 0
	for _, cs := range cat.sources {
		if !want(cs) {
			continue
		}
		candidates++
		only = cs
		if scheme := uriScheme(uri); scheme != "" && cat.schemes[cs][scheme] {
			owners++
			owner = cs
		}
	}
	switch {
	case owners == 1:
		return owner
	case owners == 0 && candidates == 1:
		return only
	}
	return nil
}

// uriScheme is the scheme of a URI or URI template, lower case; "" when it
// has none.
func uriScheme(uri string) string {
	i := strings.IndexByte(uri, ':')
	if i <= 0 {
		return ""
	}
	for j, c := range uri[:i] {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (j == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return ""
		}
	}
	return strings.ToLower(uri[:i])
}

// anySource accepts every catalog source.
func anySource(pipeline.CatalogSource) bool { return true }

// readUnlisted reads a URI that matched the catch-all template. mcp-go
// tries the templates in no fixed order, so a declared or listed template
// that matches goes first; then the source unlistedOrigin names; else the
// URI is not found.
func (r *Set) readUnlisted(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri := req.Params.URI
	if res := r.Resources.Matching(uri); res != nil {
		req.Params.Arguments = templateArguments(mcp.NewResourceTemplate(res.URI, ""), uri)
		return r.Resources.Reader(res)(ctx, req)
	}
	cat := r.cur.Load()
	for _, t := range cat.templates {
		if t.Template.URITemplate != nil && t.Template.URITemplate.Regexp().MatchString(uri) {
			req.Params.Arguments = templateArguments(t.Template, uri)
			return t.Handler(ctx, req)
		}
	}
	if cs := r.unlistedOrigin(uri, anySource); cs != nil {
		return r.forwardRead(cs)(ctx, req)
	}
	perr := resources.NotFound(ctx, uri)
	r.Access.Fail(ctx, perr)
	return nil, perr
}

// templateArguments are the variables of uri under t, as mcp-go passes
// them to a template's handler.
func templateArguments(t mcp.ResourceTemplate, uri string) map[string]any {
	vars := t.URITemplate.Match(uri)
	out := make(map[string]any, len(vars))
	for name, v := range vars {
		out[name] = v.V
	}
	return out
}

// catchAll is the mcp-go entry of CatchAllTemplate.
func (r *Set) catchAll() server.ServerResourceTemplate {
	return server.ServerResourceTemplate{Template: mcp.NewResourceTemplate(CatchAllTemplate, "unlisted"), Handler: r.readUnlisted}
}
