package caddymodule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
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
	// The entries as the sources listed them, by URI, URI template and
	// (the gateway's) prompt name, written in place of mcp-go's
	// (fastpath.ListEntries).
	resourceText map[string]json.RawMessage
	templateText map[string]json.RawMessage
	promptText   map[string]json.RawMessage
	// instructions are the servers' own, each under a heading with its
	// source's name (instructionHooks).
	instructions string
	// sources are the catalog sources in order, and schemes the URI
	// schemes of what each lists (upstream_route.go).
	sources []pipeline.CatalogSource
	schemes map[pipeline.CatalogSource]map[string]bool
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

// catalogSources are the sources that bring resources or prompts. A
// source under `approval required` is not one: nothing of it may run
// without a person's yes, and a resource read, a prompt get or a
// completion has no call to approve (README, Approvals), so it serves its
// tools only. Under `approval writes` they are served: the protocol makes
// them reads, as a tool with readOnlyHint is one.
func (h *Handler) catalogSources() []loadedSource {
	var out []loadedSource
	for _, s := range h.sources {
		if _, ok := s.src.(pipeline.CatalogSource); ok && s.approval != approvalRequired {
			out = append(out, s)
		}
	}
	return out
}

// warnUnapprovedCatalogs says, at load, which sources' resources and
// prompts are left out by their `approval required`.
func (h *Handler) warnUnapprovedCatalogs() {
	for _, s := range h.sources {
		cs, ok := s.src.(pipeline.CatalogSource)
		if !ok || s.approval != approvalRequired {
			continue
		}
		if cat := cs.Catalog(); len(cat.Resources)+len(cat.Templates)+len(cat.Prompts) > 0 {
			h.logger.Warn("a source under approval required serves its tools only: its resources, resource templates and prompts cannot be approved and are left out",
				zap.String("source", s.name), zap.Int("resources", len(cat.Resources)), zap.Int("templates", len(cat.Templates)), zap.Int("prompts", len(cat.Prompts)))
		}
	}
}

// buildUpstreamCatalog reads every catalog source as it is now.
func (h *Handler) buildUpstreamCatalog() (*upstreamCatalog, error) {
	out := &upstreamCatalog{promptOrigin: map[string]upstreamPrompt{}, templateOrigin: map[string]pipeline.CatalogSource{},
		resourceOrigin: map[string]pipeline.CatalogSource{}, resourceText: map[string]json.RawMessage{},
		templateText: map[string]json.RawMessage{}, promptText: map[string]json.RawMessage{},
		schemes: map[pipeline.CatalogSource]map[string]bool{}}
	owner := map[string]string{} // URI or template → its origin
	for _, r := range h.resources.All() {
		owner[r.URI] = "a declared resource"
	}
	prompts := map[string]string{}
	for _, p := range h.prompts.All() {
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
	var instructions []string
	for _, s := range h.catalogSources() {
		cs := s.src.(pipeline.CatalogSource)
		cat := cs.Catalog()
		origin := fmt.Sprintf("source %q", s.name)
		if strings.TrimSpace(cat.Instructions) != "" {
			instructions = append(instructions, "## "+s.name+"\n\n"+cat.Instructions)
		}
		out.sources = append(out.sources, cs)
		schemes := map[string]bool{}
		out.schemes[cs] = schemes
		for _, raw := range cat.Resources {
			var r mcp.Resource
			if err := json.Unmarshal(raw, &r); err != nil || r.URI == "" {
				return nil, fmt.Errorf("%s: a resource the server listed is not valid: %s", origin, truncate(raw))
			}
			schemes[uriScheme(r.URI)] = true
			if ok, err := claim(r.URI, origin); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
			out.resourceOrigin[r.URI] = cs
			out.resourceText[r.URI] = compactJSON(raw)
			out.resources = append(out.resources, server.ServerResource{Resource: r, Handler: h.forwardRead(cs)})
		}
		for _, raw := range cat.Templates {
			var t mcp.ResourceTemplate
			if err := json.Unmarshal(raw, &t); err != nil || t.URITemplate == nil {
				return nil, fmt.Errorf("%s: a resource template the server listed is not valid: %s", origin, truncate(raw))
			}
			schemes[uriScheme(t.URITemplate.Raw())] = true
			if ok, err := claim(t.URITemplate.Raw(), origin); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
			out.templateOrigin[t.URITemplate.Raw()] = cs
			out.templateText[t.URITemplate.Raw()] = compactJSON(raw)
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
			name, _ := json.Marshal(p.Name)
			if text, err := jsonrpc.WithMember(compactJSON(raw), "name", name); err == nil {
				out.promptText[p.Name] = text
			}
			out.prompts = append(out.prompts, server.ServerPrompt{Prompt: p, Handler: h.forwardGet(cs, original)})
		}
	}
	out.instructions = strings.Join(instructions, "\n\n")
	return out, nil
}

// instructionHooks give the initialize (and, on 2026-07-28, server/discover)
// result the sources' servers' instructions, each under its source's name
// (docs/sources.md, MCP servers), as they are when the client asks.
func (h *Handler) instructionHooks(hooks *server.Hooks) {
	instructions := func() string {
		if up := h.upstream.p.Load(); up != nil {
			return up.instructions
		}
		return ""
	}
	hooks.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		if text := instructions(); text != "" {
			res.Instructions = text
		}
	})
	hooks.AddAfterDiscover(func(_ context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
		if text := instructions(); text != "" {
			res.Instructions = text
		}
	})
}

// compactJSON is raw without insignificant white space: written into an
// SSE event, a line break would end the event's data.
func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
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
		passUpstream(ctx, raw)
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
		passUpstream(ctx, raw)
		return res, nil
	}
}

// forwardFailed is the error of a forwarded read, get or completion: the
// upstream's own JSON-RPC error as it sent it (an unknown resource stays
// "not found"); any other failure is -32000 with what may be shown.
func (h *Handler) forwardFailed(ctx context.Context, err error) error {
	var perr *pipeline.Error
	var safe pipeline.SafeError
	switch {
	case errors.As(err, &perr):
	case errors.As(err, &safe):
		perr = pipeline.Fail(pipeline.StageExecution, err, "%s", safe.SafeMessage())
	default:
		perr = pipeline.Fail(pipeline.StageExecution, err, "failed")
	}
	if st := fastpath.CallFrom(ctx); st != nil {
		st.Fail(perr)
	}
	return perr
}

// setCatalog puts the declared and the sources' resources and prompts on
// the mcp-go server.
func (h *Handler) setCatalog(srv *server.MCPServer, up *upstreamCatalog) {
	res, tmpl := h.resources.ServerEntries()
	prompts := h.prompts.ServerEntries()
	if up != nil {
		res = append(res, up.resources...)
		tmpl = append(tmpl, up.templates...)
		prompts = append(prompts, up.prompts...)
		if len(up.sources) > 0 {
			tmpl = append(tmpl, h.catchAll()) // upstream_route.go
		}
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
func (h *Handler) forwardComplete(ctx context.Context, src pipeline.CatalogSource, ref map[string]any, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	params := map[string]any{"ref": ref, "argument": arg}
	if len(cctx.Arguments) > 0 {
		params["context"] = cctx
	}
	raw, err := src.Complete(withRequestCaller(ctx), params)
	if err != nil {
		return nil, h.forwardFailed(ctx, err)
	}
	var res mcp.CompleteResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, h.forwardFailed(ctx, pipeline.Fail(pipeline.StageResponse, err, "the MCP server's completion/complete result is not valid"))
	}
	passUpstream(ctx, raw)
	return &res.Completion, nil
}

// passUpstream has the upstream's own result of the request in ctx written
// in place of mcp-go's encoding of it (fastpath.Call.PassUpstream).
func passUpstream(ctx context.Context, raw json.RawMessage) {
	if st := fastpath.CallFrom(ctx); st != nil {
		st.PassUpstream(compactJSON(raw))
	}
}
