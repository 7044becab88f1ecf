package caddymodule

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// parseMCPDirective is the mcp directive: the handler's route, as
// RegisterHandlerDirective would make it, plus — when the endpoint has
// default_auth and a path matcher — a route serving the protected resource
// metadata at /.well-known/oauth-protected-resource and its path-suffixed
// form. Without it, `mcp /mcp { ... }` would leave those paths to whatever
// else the site does, and MCP clients could not discover how to log in.
func parseMCPDirective(h httpcaddyfile.Helper) ([]httpcaddyfile.ConfigValue, error) {
	if !h.Next() {
		return nil, h.ArgErr()
	}
	matcherSet, err := h.ExtractMatcherSet()
	if err != nil {
		return nil, err
	}
	handler, err := parseCaddyfile(h)
	if err != nil {
		return nil, err
	}
	m := handler.(*Handler)
	if err := m.checkAuthRefs(); err != nil {
		return nil, err
	}
	routes := h.NewRoute(matcherSet, m)
	if m.DefaultAuth == nil || matcherSet == nil {
		return routes, nil // no matcher: the handler sees, and answers, every path
	}
	paths := endpointPaths(matcherSet)
	if len(paths) == 0 {
		return routes, nil
	}
	wellKnown := []string{wellKnownPrefix}
	for _, p := range paths {
		wellKnown = append(wellKnown, wellKnownPrefix+p)
	}
	meta := m.resourceMetadata(m.adaptServers[m.DefaultAuth.Use])
	meta.ResourcePaths = paths
	matchWellKnown := caddy.ModuleMap{"path": caddyconfig.JSON(caddyhttp.MatchPath(wellKnown), nil)}
	return append(routes, h.NewRoute(matchWellKnown, meta)...), nil
}

// endpointPaths are the literal paths of a path matcher (`/mcp`, or `/mcp*`
// read as /mcp); nil when the matcher is anything else.
func endpointPaths(set caddy.ModuleMap) []string {
	raw, ok := set["path"]
	if !ok || len(set) != 1 {
		return nil
	}
	var paths []string
	if json.Unmarshal(raw, &paths) != nil {
		return nil
	}
	var out []string
	for _, p := range paths {
		p = strings.TrimSuffix(strings.TrimSuffix(p, "*"), "/")
		if p == "" || !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "*%") {
			return nil
		}
		out = append(out, p)
	}
	return out
}

// parseAuthDirective reads, in the mcp block,
//
//	auth <name> <plugin> { <plugin settings> }
//	default_auth <name> [{ scope ..; claim ..; subject ..; resource <url> }]
func (h *Handler) parseAuthDirective(d *caddyfile.Dispenser) error {
	if d.Val() == "default_auth" {
		if h.DefaultAuth != nil {
			return d.Errf("default_auth declared twice")
		}
		def := new(DefaultAuthConfig)
		if err := parsePolicy(d, &def.AuthPolicyConfig, &def.Resource); err != nil {
			return err
		}
		h.DefaultAuth = def
		return nil
	}
	if !d.NextArg() {
		return d.Errf("usage: auth <name> <plugin> { ... } (plugins: api_key, jwt, basic, script, or one added with xcaddy)")
	}
	name := d.Val()
	if !d.NextArg() {
		return d.Errf("auth %q: missing plugin (api_key, jwt, basic, script, ...)", name)
	}
	plugin := d.Val()
	for _, other := range h.Auth {
		if other.Name == name {
			return d.Errf("auth %q declared twice", name)
		}
	}
	if _, err := caddy.GetModule("mcp.auth." + plugin); err != nil {
		return d.Errf("auth %q: unknown plugin %q (built in: api_key, jwt, basic, script)", name, plugin)
	}
	unm, err := caddyfile.UnmarshalModule(d, "mcp.auth."+plugin)
	if err != nil {
		return err
	}
	if l, ok := unm.(AuthorizationServerLister); ok {
		if h.adaptServers == nil {
			h.adaptServers = map[string][]string{}
		}
		h.adaptServers[name] = l.AuthorizationServerURLs()
	}
	var warnings []caddyconfig.Warning
	raw := caddyconfig.JSONModuleObject(unm, "provider", plugin, &warnings)
	h.Auth = append(h.Auth, AuthProviderConfig{Name: name, ProviderRaw: raw})
	return nil
}

// parseToolAuth reads a tool's `auth <name> [{ scope ..; claim ..; subject .. }]`.
func parseToolAuth(d *caddyfile.Dispenser, tool string) (*AuthPolicyConfig, error) {
	p := new(AuthPolicyConfig)
	if err := parsePolicy(d, p, nil); err != nil {
		return nil, fmt.Errorf("tool %q: %w", tool, err)
	}
	return p, nil
}

// parsePolicy reads `<name> [{ scope <s...>; claim <name> <v...>; subject
// <id...> }]`; resource, when not nil, also accepts `resource <url>`.
func parsePolicy(d *caddyfile.Dispenser, p *AuthPolicyConfig, resource *string) error {
	dir := d.Val()
	if !d.NextArg() {
		return d.Errf("usage: %s <provider> { scope ..; claim <name> <value...>; subject <id...> }", dir)
	}
	p.Use = d.Val()
	p.pos = fmt.Sprintf("%s:%d", d.File(), d.Line())
	if d.NextArg() {
		return d.Errf("%s %q: unexpected %q (policy settings go in a block)", dir, p.Use, d.Val())
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		sub := d.Val()
		args := d.RemainingArgs()
		switch {
		case sub == "scope" && len(args) > 0:
			p.Scopes = append(p.Scopes, args...)
		case sub == "subject" && len(args) > 0:
			p.Subjects = append(p.Subjects, args...)
		case sub == "claim" && len(args) > 1:
			if p.Claims == nil {
				p.Claims = map[string][]string{}
			}
			p.Claims[args[0]] = append(p.Claims[args[0]], args[1:]...)
		case sub == "resource" && resource != nil && len(args) == 1:
			if !strings.HasPrefix(args[0], "https://") && !strings.HasPrefix(args[0], "http://") {
				return d.Errf("%s: resource must be an absolute http(s) URL, got %q", dir, args[0])
			}
			*resource = args[0]
		case sub == "scope" || sub == "subject" || sub == "claim" || (sub == "resource" && resource != nil):
			return d.Errf("%s %q: wrong arguments for %s (scope <s...>, claim <name> <value...>, subject <id...>, resource <url>)", dir, p.Use, sub)
		default:
			return d.Errf("%s %q: unrecognized policy setting %q (want scope, claim, subject)", dir, p.Use, sub)
		}
	}
	return nil
}

// checkAuthRefs finds, once the whole mcp block is read, policies naming a
// provider that is not declared.
func (h *Handler) checkAuthRefs() error {
	declared := map[string]bool{}
	for _, a := range h.Auth {
		declared[a.Name] = true
	}
	check := func(p *AuthPolicyConfig, what string) error {
		if p == nil || declared[p.Use] {
			return nil
		}
		return fmt.Errorf("%s: auth provider %q is not declared (add `auth %s <plugin> { ... }` to the mcp block), at %s", what, p.Use, p.Use, p.pos)
	}
	if h.DefaultAuth != nil {
		if err := check(&h.DefaultAuth.AuthPolicyConfig, "default_auth"); err != nil {
			return err
		}
	}
	for _, t := range h.Tools {
		if err := check(t.Auth, fmt.Sprintf("tool %q", t.Name)); err != nil {
			return err
		}
	}
	return nil
}
