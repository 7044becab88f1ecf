package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
)

// The resources, resource templates and prompts of sources that have them
// (pipeline.CatalogSource: upstream MCP servers), served beside the
// declared ones: resources under the upstream's URIs, prompts named into
// the source's namespace like its tools; reads and gets are forwarded. A
// source's URI that is also a declared resource's fails the load, naming
// both; one that an earlier source already lists (two sources in front of
// the same kind of server) is left out with a warning naming both, so that
// a URI always reads from one origin.

// upstreamCatalog is one version of what the sources bring, as mcp-go
// entries.
type upstreamCatalog struct {
	resources []server.ServerResource
	templates []server.ServerResourceTemplate
	prompts   []server.ServerPrompt
	// Where completion/complete goes: a prompt's source and original name,
	// a template's source; where resources/subscribe goes: a resource's
	// source (subscribe.go).
	promptOrigin   map[string]upstreamPrompt
	templateOrigin map[string]pipeline.CatalogSource
	resourceOrigin map[string]pipeline.CatalogSource
}

type upstreamPrompt struct {
	src      pipeline.CatalogSource
	original string
}

// upstreamHolder holds the current catalog; shared by pointer (Caddy
// copies a Handler by value), swapped whole by refreshCatalog.
type upstreamHolder struct {
	p atomic.Pointer[upstreamCatalog]
}

// catalogSources are the sources that bring resources or prompts.
func (h *Handler) catalogSources() []loadedSource {
	var out []loadedSource
	for _, s := range h.sources {
		if _, ok := s.src.(pipeline.CatalogSource); ok {
			out = append(out, s)
		}
	}
	return out
}

// buildUpstreamCatalog reads every catalog source as it is now.
func (h *Handler) buildUpstreamCatalog() (*upstreamCatalog, error) {
	out := &upstreamCatalog{promptOrigin: map[string]upstreamPrompt{}, templateOrigin: map[string]pipeline.CatalogSource{},
		resourceOrigin: map[string]pipeline.CatalogSource{}}
	owner := map[string]string{} // URI or template → its origin
	for _, r := range h.resources {
		owner[r.config.URI] = "a declared resource"
	}
	prompts := map[string]string{}
	for _, p := range h.prompts {
		prompts[p.Name] = "a declared prompt"
	}
	claim := func(uri, origin string) (bool, error) {
		o, taken := owner[uri]
		switch {
		case !taken:
			owner[uri] = origin
			return true, nil
		case o == "a declared resource":
			return false, fmt.Errorf("%s: resource %q is also %s", origin, uri, o)
		}
		h.logger.Warn("a source's resource is left out: an earlier source has its URI",
			zap.String("uri", uri), zap.String("left_out", origin), zap.String("served_by", o))
		return false, nil
	}
	for _, s := range h.catalogSources() {
		cs := s.src.(pipeline.CatalogSource)
		cat := cs.Catalog()
		origin := fmt.Sprintf("source %q", s.name)
		for _, raw := range cat.Resources {
			var r mcp.Resource
			if err := json.Unmarshal(raw, &r); err != nil || r.URI == "" {
				return nil, fmt.Errorf("%s: a resource the server listed is not valid: %s", origin, truncate(raw))
			}
			if ok, err := claim(r.URI, origin); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
			out.resourceOrigin[r.URI] = cs
			out.resources = append(out.resources, server.ServerResource{Resource: r, Handler: h.forwardRead(cs)})
		}
		for _, raw := range cat.Templates {
			var t mcp.ResourceTemplate
			if err := json.Unmarshal(raw, &t); err != nil || t.URITemplate == nil {
				return nil, fmt.Errorf("%s: a resource template the server listed is not valid: %s", origin, truncate(raw))
			}
			if ok, err := claim(t.URITemplate.Raw(), origin); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
			out.templateOrigin[t.URITemplate.Raw()] = cs
			out.templates = append(out.templates, server.ServerResourceTemplate{Template: t, Handler: server.ResourceTemplateHandlerFunc(h.forwardRead(cs))})
		}
		for _, raw := range cat.Prompts {
			var p mcp.Prompt
			if err := json.Unmarshal(raw, &p); err != nil || p.Name == "" {
				return nil, fmt.Errorf("%s: a prompt the server listed is not valid: %s", origin, truncate(raw))
			}
			original := p.Name
			p.Name = pipeline.ToolName(s.cfg.namespace(), original) // prefix applies as to tools
			if o, taken := prompts[p.Name]; taken {
				return nil, fmt.Errorf("%s: its prompt %q is named %q, the name of %s", origin, original, p.Name, o)
			}
			prompts[p.Name] = fmt.Sprintf("prompt %q of %s", original, origin)
			out.promptOrigin[p.Name] = upstreamPrompt{src: cs, original: original}
			out.prompts = append(out.prompts, server.ServerPrompt{Prompt: p, Handler: h.forwardGet(cs, original)})
		}
	}
	return out, nil
}

func truncate(raw json.RawMessage) string {
	if len(raw) > 120 {
		return string(raw[:120]) + "…"
	}
	return string(raw)
}

// forwardRead reads a resource of a source.
func (h *Handler) forwardRead(cs pipeline.CatalogSource) server.ResourceHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		raw, err := cs.ReadResource(withRequestCaller(ctx), req.Params.URI)
		if err != nil {
			return nil, h.forwardFailed(ctx, err)
		}
		res, err := mcp.ParseReadResourceResult(&raw)
		if err != nil {
			return nil, h.forwardFailed(ctx, pipeline.Fail(pipeline.StageResponse, err, "the MCP server's resources/read result is not valid"))
		}
		return res.Contents, nil
	}
}

// withRequestCaller gives a source the caller the endpoint verified
// (default_auth) and the request's headers: a source with an upstream
// session per caller sends the request on that caller's session, with the
// caller's credentials (sources/mcp, session per_caller).
func withRequestCaller(ctx context.Context) context.Context {
	id, _ := ctx.Value(endpointIdentityKey{}).(*pipeline.Identity)
	if id == nil {
		return ctx
	}
	return pipeline.WithRequestCaller(ctx, &pipeline.Call{Identity: id, Request: authRequestInfo(ctx)})
}

// forwardGet gets a prompt of a source under its original name.
func (h *Handler) forwardGet(cs pipeline.CatalogSource, original string) server.PromptHandlerFunc {
	return func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		raw, err := cs.GetPrompt(withRequestCaller(ctx), original, req.Params.Arguments)
		if err != nil {
			return nil, h.forwardFailed(ctx, err)
		}
		res, err := mcp.ParseGetPromptResult(&raw)
		if err != nil {
			return nil, h.forwardFailed(ctx, pipeline.Fail(pipeline.StageResponse, err, "the MCP server's prompts/get result is not valid"))
		}
		return res, nil
	}
}

// forwardFailed is the error of a forwarded read or get: the upstream's
// own JSON-RPC error keeps its code and message (an unknown resource stays
// "not found"); any other failure is -32000 with what may be shown.
func (h *Handler) forwardFailed(ctx context.Context, err error) error {
	var perr *pipeline.Error
	var coded interface {
		Code() int
		SafeMessage() string
	}
	var safe pipeline.SafeError
	switch {
	case errors.As(err, &coded):
		perr = &pipeline.Error{Code: coded.Code(), Stage: pipeline.StageExecution, Message: coded.SafeMessage(), Cause: err}
	case errors.As(err, &perr):
	case errors.As(err, &safe):
		perr = pipeline.Fail(pipeline.StageExecution, err, "%s", safe.SafeMessage())
	default:
		perr = pipeline.Fail(pipeline.StageExecution, err, "failed")
	}
	if st := callStateFrom(ctx); st != nil {
		st.fail(perr)
	}
	return perr
}

// setCatalog puts the declared and the sources' resources and prompts on
// the mcp-go server.
func (h *Handler) setCatalog(srv *server.MCPServer, up *upstreamCatalog) {
	res, tmpl := h.serverResources()
	prompts := h.serverPrompts()
	if up != nil {
		res = append(res, up.resources...)
		tmpl = append(tmpl, up.templates...)
		prompts = append(prompts, up.prompts...)
	}
	if h.servesResources() {
		srv.SetResources(res...)
		srv.SetResourceTemplates(tmpl...)
	}
	if h.servesPrompts() {
		srv.SetPrompts(prompts...)
	}
}

// refreshCatalog follows a source's change (its list_changed, a
// reconnect): a catalog that no longer loads (a URI collision) keeps the
// previous one, as swapTools keeps the previous tools.
func (h *Handler) refreshCatalog() {
	if len(h.catalogSources()) == 0 || h.mcp == nil {
		return
	}
	up, err := h.buildUpstreamCatalog()
	if err != nil {
		h.logger.Warn("resources and prompts not updated: the new set does not load; the previous one stays", zap.Error(err))
		return
	}
	h.upstream.p.Store(up)
	h.setCatalog(h.mcp, up)
}

// forwardComplete sends completion/complete for a source's prompt or
// template to its server, with the reference it knows.
func forwardComplete(ctx context.Context, src pipeline.CatalogSource, ref map[string]any, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	params := map[string]any{"ref": ref, "argument": arg}
	if len(cctx.Arguments) > 0 {
		params["context"] = cctx
	}
	raw, err := src.Complete(withRequestCaller(ctx), params)
	if err != nil {
		return nil, err
	}
	var res mcp.CompleteResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("the MCP server's completion/complete result is not valid: %v", err)
	}
	return &res.Completion, nil
}
