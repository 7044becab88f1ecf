package resources

import (
	"context"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Allowed reports whether the caller may read the declared resource or
// template uri; a URI not declared here is not this set's to refuse.
func (s *Set) Allowed(ctx context.Context, uri string) bool {
	for _, r := range s.All() {
		if r.URI == uri {
			return s.access.Allowed(ctx, r.Tool.Auth, r.Tool.Name)
		}
	}
	return true
}

// Hooks filter the resource lists per caller, and leave the template
// hidden out of resources/templates/list: mcp-go has no resource filter,
// so the answers are trimmed after it built them (its default lists are
// one page; the gateway sets no pagination limit).
func (s *Set) Hooks(hooks *server.Hooks, hidden string) {
	hooks.AddAfterListResources(func(ctx context.Context, _ any, _ *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		res.Resources = slices.DeleteFunc(res.Resources, func(r mcp.Resource) bool { return !s.Allowed(ctx, r.URI) })
	})
	hooks.AddAfterListResourceTemplates(func(ctx context.Context, _ any, _ *mcp.ListResourceTemplatesRequest, res *mcp.ListResourceTemplatesResult) {
		res.ResourceTemplates = slices.DeleteFunc(res.ResourceTemplates, func(t mcp.ResourceTemplate) bool {
			return t.URITemplate != nil && (t.URITemplate.Raw() == hidden || !s.Allowed(ctx, t.URITemplate.Raw()))
		})
	})
}

// Completable: some template has a variable to complete.
func (s *Set) Completable() bool {
	return slices.ContainsFunc(s.All(), func(r *Resource) bool { return r.Template })
}

// Complete offers the enum values of the template uri's variable arg that
// start with value; ok is false for a template that does not exist or
// that the caller may not read.
func (s *Set) Complete(ctx context.Context, uri, arg, value string) (values []string, ok bool) {
	for _, r := range s.All() {
		if r.URI != uri || !r.Template {
			continue
		}
		if !s.access.Allowed(ctx, r.Tool.Auth, r.Tool.Name) {
			return nil, false
		}
		if in := r.Tool.Inputs.Get(arg); in != nil {
			return pipeline.CompleteEnum(in.EnumText, value), true
		}
		return nil, true
	}
	return nil, false
}

// Static is the declared resource (not template) with URI uri, or nil.
func (s *Set) Static(uri string) *Resource {
	for _, r := range s.All() {
		if !r.Template && r.URI == uri {
			return r
		}
	}
	return nil
}

// Matching is the first declared template that matches uri, or nil.
func (s *Set) Matching(uri string) *Resource {
	for _, r := range s.All() {
		if r.Template && mcp.NewResourceTemplate(r.URI, "").URITemplate.Regexp().MatchString(uri) {
			return r
		}
	}
	return nil
}

// Readable reports whether the caller of ctx may read r.
func (s *Set) Readable(ctx context.Context, r *Resource) bool {
	return s.access.Allowed(ctx, r.Tool.Auth, r.Tool.Name)
}
