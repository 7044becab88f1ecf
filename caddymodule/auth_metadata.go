package caddymodule

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	caddy.RegisterModule(ResourceMetadata{})
}

// wellKnownPrefix is where RFC 9728 puts protected resource metadata: at
// the prefix itself, and at the prefix followed by the resource's path.
const wellKnownPrefix = "/.well-known/oauth-protected-resource"

// ResourceMetadata serves the OAuth 2.0 protected resource metadata (RFC
// 9728) of an MCP endpoint guarded by default_auth: the document MCP
// clients read, after a 401, to find the authorization server to log in
// with. The mcp directive adds a route with this handler for the
// well-known paths of its endpoint, since a matcher such as `mcp /mcp`
// would keep those requests from the mcp handler; the mcp handler also
// answers them itself when they do reach it.
type ResourceMetadata struct {
	// HostGate is the endpoint's Host and Origin check (gate.Gate), applied
	// to the documents too.
	HostGate
	// Resource is the endpoint's URL; default: scheme and host of the
	// request, and the endpoint path.
	Resource string `json:"resource,omitempty"`
	// ResourcePaths are the endpoint paths (for the path-suffixed form and
	// the default resource URL).
	ResourcePaths        []string `json:"resource_paths,omitempty"`
	AuthorizationServers []string `json:"authorization_servers,omitempty"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
	ResourceName         string   `json:"resource_name,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (ResourceMetadata) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.mcp_resource_metadata",
		New: func() caddy.Module { return new(ResourceMetadata) },
	}
}

// Provision prepares the Host check.
func (m *ResourceMetadata) Provision(ctx caddy.Context) error { return m.HostGate.provision(ctx) }

// Validate checks the allowed origins and hosts.
func (m *ResourceMetadata) Validate() error { return m.HostGate.validate() }

// ServeHTTP answers GET (and HEAD) on the well-known paths with the
// document; anything else goes on down the route.
func (m *ResourceMetadata) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if isMetadataPath(r.URL.Path) && !m.admit(w, r) {
		return nil
	}
	if !m.serve(w, r, "") {
		return next.ServeHTTP(w, r)
	}
	return nil
}

// serve writes the document when r asks for it. endpointPath is the path the
// mcp handler is serving, when known.
func (m *ResourceMetadata) serve(w http.ResponseWriter, r *http.Request, endpointPath string) bool {
	if !isMetadataPath(r.URL.Path) {
		return false
	}
	suffix := strings.TrimPrefix(r.URL.Path, wellKnownPrefix)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return true
	}
	path := suffix
	if path == "" {
		path = endpointPath
		if path == "" && len(m.ResourcePaths) > 0 {
			path = m.ResourcePaths[0]
		}
	}
	doc := map[string]any{
		"resource":                 m.resourceURL(r, path),
		"bearer_methods_supported": []string{"header"},
	}
	if len(m.AuthorizationServers) > 0 {
		doc["authorization_servers"] = m.AuthorizationServers
	}
	if len(m.ScopesSupported) > 0 {
		doc["scopes_supported"] = m.ScopesSupported
	}
	if m.ResourceName != "" {
		doc["resource_name"] = m.ResourceName
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age=300")
	// Clients in browsers fetch the document cross-origin; it is public.
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_ = json.NewEncoder(w).Encode(doc)
	}
	return true
}

// isMetadataPath: the well-known prefix, or it followed by a path.
func isMetadataPath(p string) bool {
	suffix, ok := strings.CutPrefix(p, wellKnownPrefix)
	return ok && (suffix == "" || strings.HasPrefix(suffix, "/"))
}

// resourceURL is the configured resource, else the request's origin and
// the endpoint path.
func (m *ResourceMetadata) resourceURL(r *http.Request, path string) string {
	if m.Resource != "" {
		return m.Resource
	}
	return requestOrigin(r) + path
}

// metadataURL is where the document of the endpoint serving r is: the
// path-suffixed form (RFC 9728 section 3.1).
func (m *ResourceMetadata) metadataURL(r *http.Request) string {
	if m.Resource != "" {
		if i := strings.Index(m.Resource, "://"); i >= 0 {
			rest := m.Resource[i+3:]
			host, path, _ := strings.Cut(rest, "/")
			return m.Resource[:i+3] + host + wellKnownPrefix + strings.TrimSuffix("/"+path, "/")
		}
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	return requestOrigin(r) + wellKnownPrefix + path
}

func requestOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// Interface guards.
var (
	_ caddy.Provisioner           = (*ResourceMetadata)(nil)
	_ caddy.Validator             = (*ResourceMetadata)(nil)
	_ caddyhttp.MiddlewareHandler = (*ResourceMetadata)(nil)
)
