package caddymodule

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
)

// HostGate is the one check in front of everything the mcp handlers serve
// (POST, GET and DELETE on the endpoint, the catalog page, the metadata
// documents), before any other work: a request must name this endpoint in
// its Host header, and a browser's Origin must be the endpoint's own or an
// allowed one. docs/security.md explains the threats:
//
//   - Origin: a page on another site must not drive the endpoint from a
//     visitor's browser (MCP's transport rules say servers must validate it).
//   - Host: DNS rebinding. A page on evil.example can make its own name
//     resolve to the endpoint's address; the browser then sends Host and
//     Origin evil.example, which agree with each other. Only the Host names
//     the endpoint actually serves are proof that the browser meant to talk
//     to it. A site address that accepts any host (`:8080`) names none, so
//     there the accepted names are listed with allowed_hosts.
type HostGate struct {
	// AllowedOrigins lists the browser origins (scheme://host[:port], or
	// "*") allowed besides the endpoint's own. A request with any other
	// Origin header is refused with 403.
	AllowedOrigins []string `json:"allowed_origins,omitempty"`
	// AllowedHosts lists the Host names accepted besides the site's own
	// names, IP addresses and localhost: exact names, wildcards as in Caddy's
	// host matcher (*.example.com), or "*" for any (no DNS rebinding
	// protection: only behind a proxy that checks Host itself).
	AllowedHosts []string `json:"allowed_hosts,omitempty"`

	anyHost   bool
	hosts     caddyhttp.MatchHost
	siteHosts []caddyhttp.MatchHost // the enclosing server's host matchers
}

// provision prepares the allowed_hosts matcher and notes the site's names.
func (g *HostGate) provision(ctx caddy.Context) error {
	g.siteHosts = siteNames(ctx)
	g.anyHost = slices.Contains(g.AllowedHosts, "*")
	if g.anyHost || len(g.AllowedHosts) == 0 {
		return nil
	}
	g.hosts = slices.Clone(caddyhttp.MatchHost(g.AllowedHosts))
	if err := g.hosts.Provision(ctx); err != nil {
		return fmt.Errorf("allowed_hosts: %v", err)
	}
	return nil
}

// validate checks the configured origins and host names.
func (g *HostGate) validate() error {
	for _, o := range g.AllowedOrigins {
		if err := checkOrigin(o); err != nil {
			return err
		}
	}
	for _, h := range g.AllowedHosts {
		if err := checkHostName(h); err != nil {
			return err
		}
	}
	return nil
}

// admit lets r through, or answers 403 and reports false.
func (g *HostGate) admit(w http.ResponseWriter, r *http.Request) bool {
	reason := g.refusal(r)
	if reason == "" {
		return true
	}
	telemetry.GateRefusals.WithLabelValues(reason).Inc()
	msg := "Forbidden: origin not allowed (see allowed_origins)"
	if reason == "host" {
		msg = "Forbidden: host not allowed (see allowed_hosts)"
	}
	http.Error(w, msg, http.StatusForbidden)
	return false
}

// refusal is "" for an admitted request, else "host" or "origin".
func (g *HostGate) refusal(r *http.Request) string {
	if !g.hostAllowed(r) {
		return "host"
	}
	if !g.originAllowed(r) {
		return "origin"
	}
	return ""
}

// hostAllowed reports whether r's Host names this endpoint.
func (g *HostGate) hostAllowed(r *http.Request) bool {
	host := hostOnly(r.Host)
	switch {
	case host == "", g.anyHost:
		return true // no name to rebind (HTTP/1.0), or the check is off
	case net.ParseIP(host) != nil:
		return true // an address names itself: its origin is the endpoint's
	case strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost"):
		return true // never resolved through DNS (RFC 6761)
	}
	r = withReplacer(r)
	if len(g.hosts) > 0 && g.hosts.Match(r) {
		return true
	}
	for _, m := range g.siteHosts {
		if m.Match(r) {
			return true
		}
	}
	return false
}

// siteNames are the host matchers of the server's top-level routes: the site
// addresses of a Caddyfile (`mcp.example.com { ... }`). A request that
// matches one was routed by name, so the name is the endpoint's own. Caddy
// provisions those matchers (automatic HTTPS reads them) before any handler,
// and provisions handlers with the server in the context.
func siteNames(ctx caddy.Context) []caddyhttp.MatchHost {
	srv, _ := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	if srv == nil {
		return nil
	}
	var names []caddyhttp.MatchHost
	for _, route := range srv.Routes {
		for _, set := range route.MatcherSets {
			for _, m := range set {
				switch m := m.(type) {
				case caddyhttp.MatchHost:
					names = append(names, m)
				case *caddyhttp.MatchHost:
					names = append(names, *m)
				}
			}
		}
	}
	return names
}

// originAllowed: no Origin (not a browser), the endpoint's own origin (its
// Host was checked first), or one listed in allowed_origins.
func (g *HostGate) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if slices.Contains(g.AllowedOrigins, "*") || slices.Contains(g.AllowedOrigins, strings.TrimSuffix(origin, "/")) {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// checkOrigin validates a configured origin.
func checkOrigin(o string) error {
	if o == "*" {
		return nil
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return fmt.Errorf("allowed_origins: %q is not an origin (want scheme://host[:port] or *)", o)
	}
	return nil
}

// checkHostName validates a configured host name (no scheme, port or path).
func checkHostName(h string) error {
	if h == "*" {
		return nil
	}
	if h == "" || strings.ContainsAny(h, "/:?#@ ") {
		return fmt.Errorf("allowed_hosts: %q is not a host name (want name, *.name or *; no scheme or port)", h)
	}
	return nil
}

// hostOnly is the host of a Host header, without port or IPv6 brackets.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// withReplacer gives r the replacer Caddy's host matcher reads for
// placeholders (Caddy's server always sets one; this is for other callers).
func withReplacer(r *http.Request) *http.Request {
	if _, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer()))
}
