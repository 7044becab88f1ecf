// Package resources serves the resources declared in the Caddyfile: a
// URI, or an RFC 6570 URI template, each backed by a compiled
// pipeline.Tool whose inputs are the template's variables, so that a read
// runs the stages of a tools/call (auth, input validation, bound
// parameters, execution) and a value from the URI is bound exactly as a
// tool's input is, never spliced. The shell compiles the tools and hands
// them over; this package reads, lists and completes them for mcp-go.
package resources

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/yosida95/uritemplate/v3"

	"github.com/edgemcp/edgemcp/pipeline"
)

// DefaultMime is a resource's type when it declares none: the result as
// JSON.
const DefaultMime = "application/json"

// Resource is one declared resource, compiled.
type Resource struct {
	URI         string
	Name        string
	Title       string
	Description string
	MimeType    string         // "": DefaultMime
	Tool        *pipeline.Tool // runs the read; its inputs are the URI's variables
	Template    bool           // the URI has variables
}

// Mime is the type of the resource's contents.
func (r *Resource) Mime() string {
	if r.MimeType == "" {
		return DefaultMime
	}
	return r.MimeType
}

// Access is what the shell knows of the request being served.
type Access interface {
	// Allowed reports whether the caller passes auth (nil: anyone).
	Allowed(ctx context.Context, auth pipeline.Authorizer, name string) bool
	// Fail puts perr on the request's call state, so that the wire
	// answer carries its code.
	Fail(ctx context.Context, perr *pipeline.Error)
	// RequestInfo is what the pipeline's stages know of the request.
	RequestInfo(ctx context.Context) *pipeline.RequestInfo
	// Shown is perr as error_detail lets a client see it.
	Shown(ctx context.Context, perr *pipeline.Error) *pipeline.Error
	// CacheHint records what the result cache said of the result (nil:
	// not cached), for the ttlMs and cacheScope of the answer.
	CacheHint(ctx context.Context, h *pipeline.CacheHint)
}

// Set is the declared resources, run by an engine of their own (so that
// they are never listed or called as tools).
type Set struct {
	list   []*Resource
	engine *pipeline.Engine
	access Access
}

// New indexes the resources' tools into their engine.
func New(list []*Resource, access Access) (*Set, error) {
	tools := make([]*pipeline.Tool, len(list))
	for i, r := range list {
		tools[i] = r.Tool
	}
	engine, err := pipeline.NewEngine(tools)
	if err != nil {
		return nil, err
	}
	return &Set{list: list, engine: engine, access: access}, nil
}

// All are the resources in their declared order (none in a nil Set: a
// handler not provisioned).
func (s *Set) All() []*Resource {
	if s == nil {
		return nil
	}
	return s.list
}

// Vars parses a URI template and returns its variable names; a plain URI
// has none.
func Vars(uri string) ([]string, error) {
	if strings.TrimSpace(uri) == "" || strings.ContainsAny(uri, " \t\n") {
		return nil, errors.New("want a URI or URI template without spaces")
	}
	t, err := uritemplate.New(uri)
	if err != nil {
		return nil, fmt.Errorf("not a URI template (RFC 6570): %v", err)
	}
	if !strings.Contains(uri, ":") {
		return nil, errors.New("want an absolute URI with a scheme (e.g. docs://{id} or file:///notes)")
	}
	return t.Varnames(), nil
}

// ServerEntries are the mcp-go entries of the resources and resource
// templates.
func (s *Set) ServerEntries() ([]server.ServerResource, []server.ServerResourceTemplate) {
	var res []server.ServerResource
	var tmpl []server.ServerResourceTemplate
	for _, r := range s.All() {
		if !r.Template {
			res = append(res, server.ServerResource{
				Resource: mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.Mime()},
				Handler:  server.ResourceHandlerFunc(s.Reader(r)),
			})
			continue
		}
		t := mcp.NewResourceTemplate(r.URI, r.Name, mcp.WithTemplateDescription(r.Description), mcp.WithTemplateMIMEType(r.Mime()))
		t.Title = r.Title
		tmpl = append(tmpl, server.ServerResourceTemplate{Template: t, Handler: s.Reader(r)})
	}
	return res, tmpl
}

// Reader reads r through the pipeline. A caller its policy refuses learns
// nothing: the answer is "resource not found", as for a URI that matches
// nothing.
func (s *Set) Reader(r *Resource) server.ResourceTemplateHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		fail := func(perr *pipeline.Error) ([]mcp.ResourceContents, error) {
			s.access.Fail(ctx, perr)
			return nil, perr
		}
		if !s.access.Allowed(ctx, r.Tool.Auth, r.Tool.Name) {
			return fail(NotFound(ctx, req.Params.URI))
		}
		args := make(map[string]any, len(req.Params.Arguments))
		for k, v := range req.Params.Arguments {
			if list, ok := v.([]string); ok {
				if len(list) != 1 {
					return fail(pipeline.Fail(pipeline.StageValidation, nil, "input %q: expected one value, got %d", k, len(list)))
				}
				v = list[0]
			}
			args[k] = v
		}
		res, perr := s.engine.Call(ctx, r.Tool.Name, args, s.access.RequestInfo(ctx))
		if perr == nil {
			var contents mcp.ResourceContents
			contents, perr = Contents(res, req.Params.URI, r.Mime())
			if perr == nil {
				s.access.CacheHint(ctx, res.CacheHint)
				return []mcp.ResourceContents{contents}, nil
			}
			if perr.Code == mcp.RESOURCE_NOT_FOUND {
				return fail(NotFound(ctx, req.Params.URI))
			}
		}
		return fail(s.access.Shown(ctx, perr))
	}
}

// NotFound is the protocol's answer for an unknown URI: -32002 until
// 2026-07-28, which answers -32602 (as mcp-go does for a URI that matches
// no resource).
func NotFound(ctx context.Context, uri string) *pipeline.Error {
	code := mcp.RESOURCE_NOT_FOUND
	if mcp.IsModernProtocol(server.RequestProtocolVersion(ctx)) {
		code = mcp.INVALID_PARAMS
	}
	return &pipeline.Error{Code: code, Stage: pipeline.StageResolution, Message: fmt.Sprintf("resource %q not found", uri)}
}
