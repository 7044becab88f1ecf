package caddymodule

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/access"
	"github.com/edgemcp/edgemcp/caddymodule/prompts"
	"github.com/edgemcp/edgemcp/caddymodule/resources"
	"github.com/edgemcp/edgemcp/caddymodule/session"
	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/caddymodule/upstreams"
	"github.com/edgemcp/edgemcp/pipeline"
)

// ToolsetConfig is `toolset <name> { tools ..; sources ..; auth ..;
// rate_limit .. }`: a curated view over the endpoint's own tools, served
// by the same handler at its own path. It has no sources, connectors or
// caches of its own: it selects among the endpoint's, so one stdio child
// or one pool serves the endpoint and every toolset.
type ToolsetConfig struct {
	Name string `json:"name"`
	// Paths are the request paths the toolset answers at: the Caddyfile
	// makes them `<endpoint path>/<name>` from the mcp directive's path
	// matcher (`/<name>` without a matcher).
	Paths []string `json:"paths"`
	// Tools are path.Match globs over the gateway's tool names (after a
	// source's rename); Sources are source names. Both given, a tool must
	// pass both.
	Tools   []string `json:"tools,omitempty"`
	Sources []string `json:"sources,omitempty"`
	// Auth replaces the endpoint's default_auth at the toolset's paths;
	// RateLimit the endpoint's rate_limit, on counters of its own.
	Auth      *AuthPolicyConfig `json:"auth,omitempty"`
	RateLimit *RateLimitConfig  `json:"rate_limit,omitempty"`

	pos string // Caddyfile position, for errors found after the block
}

// toolsetName is what a toolset may be called: one path segment.
var toolsetName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// validateToolsets checks what the toolsets say of themselves and of the
// endpoint's sources; every message names the toolset.
func (h *Handler) validateToolsets() error {
	sources := map[string]bool{}
	for _, s := range h.Sources {
		sources[s.Name] = true
	}
	seen, paths := map[string]bool{}, map[string]string{}
	for _, ts := range h.Toolsets {
		if !toolsetName.MatchString(ts.Name) {
			return fmt.Errorf("toolset %q: a name is 1 to 64 of a-z A-Z 0-9 _ - (it is a path segment)", ts.Name)
		}
		if seen[ts.Name] {
			return fmt.Errorf("toolset %q declared twice", ts.Name)
		}
		seen[ts.Name] = true
		if len(ts.Tools) == 0 && len(ts.Sources) == 0 {
			return fmt.Errorf("toolset %q: selects nothing (give tools <pattern...> or sources <name...>)", ts.Name)
		}
		for _, p := range ts.Tools {
			if _, err := path.Match(p, ""); err != nil {
				return fmt.Errorf("toolset %q: tools: bad pattern %q", ts.Name, p)
			}
		}
		for _, s := range ts.Sources {
			if !sources[s] {
				return fmt.Errorf("toolset %q: sources: no source %q in this mcp block", ts.Name, s)
			}
		}
		if len(ts.Paths) == 0 {
			return fmt.Errorf("toolset %q: no paths to serve it at", ts.Name)
		}
		for _, p := range ts.Paths {
			if !strings.HasPrefix(p, "/") {
				return fmt.Errorf("toolset %q: path %q does not start with /", ts.Name, p)
			}
			if other, dup := paths[p]; dup {
				return fmt.Errorf("toolset %q: path %q is toolset %q's too", ts.Name, p, other)
			}
			paths[p] = ts.Name
		}
	}
	return nil
}

// selects reports whether t is one of the toolset's tools; fromSource:
// t came from a source (a declared tool is in no source, whatever its
// connector is called).
func (ts *ToolsetConfig) selects(t *pipeline.Tool, fromSource bool) bool {
	if len(ts.Sources) > 0 && (!fromSource || !slices.Contains(ts.Sources, t.Source)) {
		return false
	}
	if len(ts.Tools) == 0 {
		return true
	}
	for _, p := range ts.Tools {
		if ok, _ := path.Match(p, t.Name); ok {
			return true
		}
	}
	return false
}

// toolsetTools are the tools of declared and sourced the toolset selects,
// in the endpoint's order.
func (ts *ToolsetConfig) toolsetTools(declared, sourced []*pipeline.Tool) []*pipeline.Tool {
	var out []*pipeline.Tool
	for _, t := range declared {
		if ts.selects(t, false) {
			out = append(out, t)
		}
	}
	for _, t := range sourced {
		if ts.selects(t, true) {
			out = append(out, t)
		}
	}
	return out
}

// provisionToolsets makes each toolset's view: a copy of the provisioned
// endpoint that keeps everything it shares (sources, connectors, cache,
// limiter, approver, telemetry recorder, Host/Origin gate, body and
// concurrency limits) and has its own tool registry, MCP server, session
// ids, auth gate, rate limit and catalog page. The copy's ServeHTTP is the
// endpoint's own, so every gate applies at a toolset's path as at the
// endpoint's: one gate, every path. Caddy never sees a view: the
// endpoint's Cleanup ends what a view has of its own (its transport),
// and nothing it shares is released twice.
func (h *Handler) provisionToolsets(p *provisioning) error {
	if len(h.Toolsets) == 0 {
		return nil
	}
	if err := h.validateToolsets(); err != nil {
		return err
	}
	h.views = map[string]*Handler{}
	for i := range h.Toolsets {
		v, err := h.newToolsetView(p, &h.Toolsets[i])
		if err != nil {
			return err
		}
		h.viewList = append(h.viewList, v)
		for _, path := range v.toolset.Paths {
			h.views[path] = v
		}
	}
	return nil
}

// newToolsetView is the view of ts (provisionToolsets).
func (h *Handler) newToolsetView(p *provisioning, ts *ToolsetConfig) (*Handler, error) {
	v := new(Handler)
	*v = *h
	v.toolset, v.views, v.viewList, v.live = ts, nil, nil, nil
	if ts.RateLimit != nil {
		v.RateLimit = ts.RateLimit
	}
	if err := v.toolsetAuth(ts, h.DefaultAuth); err != nil {
		return nil, err
	}
	v.sessionIDs = session.NewIDs(h.sessionIDs.Keys(), toolsetOwner(ts.Name))
	// A toolset serves tools: the endpoint's resources and prompts stay
	// at the endpoint.
	var err error
	if v.resources, err = resources.New(nil, requestAccess{v}); err != nil {
		return nil, err
	}
	v.prompts = prompts.New(nil, requestAccess{v})
	if v.upstreams, err = upstreams.New(upstreams.Options{Resources: v.resources, Prompts: v.prompts,
		Access: requestAccess{v}, Logger: h.logger}); err != nil {
		return nil, err
	}
	reg, err := v.newRegistry(ts.toolsetTools(p.tools, p.sourced))
	if err != nil {
		return nil, fmt.Errorf("toolset %q: %v", ts.Name, err)
	}
	v.setTools(reg)
	v.catalog = v.newCatalog()
	v.mcp, v.streamable = v.newMCPServer(p.ctx)
	return v, nil
}

// toolsetDefault is the default_auth at ts's paths: the toolset's own
// auth in place of the endpoint's, else the endpoint's; nil: none. The
// protected resource is the toolset's path (the endpoint's resource URL,
// when it sets one, with /<name> added).
func toolsetDefault(ts *ToolsetConfig, endpoint *DefaultAuthConfig) *DefaultAuthConfig {
	var def *DefaultAuthConfig
	switch {
	case ts.Auth != nil:
		def = &DefaultAuthConfig{AuthPolicyConfig: *ts.Auth}
	case endpoint != nil:
		def = &DefaultAuthConfig{AuthPolicyConfig: endpoint.AuthPolicyConfig}
	default:
		return nil
	}
	if endpoint != nil && endpoint.Resource != "" {
		def.Resource = strings.TrimSuffix(endpoint.Resource, "/") + "/" + ts.Name
	}
	return def
}

// toolsetAuth sets the view's auth gate from toolsetDefault.
func (v *Handler) toolsetAuth(ts *ToolsetConfig, endpoint *DefaultAuthConfig) error {
	def := toolsetDefault(ts, endpoint)
	v.DefaultAuth = def // nil: no default_auth and no auth of its own
	return v.gateWith(def, fmt.Sprintf("toolset %q", ts.Name))
}

// toolsetOwner is the owner of the sessions opened at a toolset's path:
// the caller, as at the endpoint, and the toolset, so that an id opened
// at one path is refused at every other (session.Owner).
func toolsetOwner(name string) func(context.Context) session.Owner {
	return func(ctx context.Context) session.Owner {
		o := endpointOwner(ctx)
		o.Toolset = name
		return o
	}
}

// toolsetView is the view serving r's path; nil: the endpoint serves it.
func (h *Handler) toolsetView(r *http.Request) *Handler {
	if h.views == nil {
		return nil
	}
	return h.views[r.URL.Path]
}

// swapToolsets gives each view the tools it selects of a new version of
// the endpoint's (swapTools); a view whose selection does not load keeps
// its previous version.
func (h *Handler) swapToolsets(sourced []*pipeline.Tool) {
	for _, v := range h.viewList {
		r, err := v.newRegistry(v.toolset.toolsetTools(h.declared, sourced))
		if err != nil {
			h.logger.Warn("toolset not updated; its previous tools stay", zap.String("toolset", v.toolset.Name), zap.Error(err))
			continue
		}
		v.setTools(r)
		v.mcp.SetTools(v.serverTools(r)...)
	}
}

// allowRequest applies the rate limit to r: the 429 to answer when over
// it. A toolset with a rate_limit of its own counts on its own counters;
// one without counts on the endpoint's, one budget for both paths.
func (h *Handler) allowRequest(w http.ResponseWriter, r *http.Request) error {
	if h.toolset == nil || h.toolset.RateLimit == nil {
		return h.allowEndpoint(w, r)
	}
	if r.Method == http.MethodOptions {
		return nil
	}
	return h.limits.Toolset(w, r, h.toolset.Name, *h.RateLimit.rule(), access.Identity(r.Context()))
}

// countToolset counts a request that passed a toolset's gates.
func (h *Handler) countToolset() {
	if h.toolset != nil {
		telemetry.ToolsetRequests.WithLabelValues(h.toolset.Name).Inc()
	}
}
