package caddymodule

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/caddymodule/access"
	_ "github.com/edgemcp/edgemcp/caddymodule/auth" // the built-in mcp.auth providers
	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
)

// authConfig is the auth part of the Handler (embedded, so its fields sit
// at the top level of the handler's JSON).
type authConfig struct {
	// Auth declares the named auth providers (guest modules mcp.auth.*).
	Auth []AuthProviderConfig `json:"auth,omitempty"`
	// DefaultAuth guards the whole endpoint: a request without valid
	// credentials for this provider is answered 401 before MCP sees it.
	DefaultAuth *DefaultAuthConfig `json:"default_auth,omitempty"`

	providers   map[string]pipeline.AuthProvider
	defaultAuth *pipeline.AuthCheck
	metadata    *ResourceMetadata
	// endpointAuth runs default_auth on every request; nil without
	// providers.
	endpointAuth *access.Endpoint
	// adaptServers are the authorization servers of providers parsed from
	// the Caddyfile, for the metadata route emitted at adapt time.
	adaptServers map[string][]string
}

// AuthProviderConfig is `auth <name> <plugin> { ... }`.
type AuthProviderConfig struct {
	Name        string          `json:"name"`
	ProviderRaw json.RawMessage `json:"provider" caddy:"namespace=mcp.auth inline_key=provider"`
}

// AuthPolicyConfig names a provider and what the identity must satisfy
// (a tool's `auth <name> { ... }`).
type AuthPolicyConfig struct {
	Use      string              `json:"use"`
	Scopes   []string            `json:"scopes,omitempty"`
	Claims   map[string][]string `json:"claims,omitempty"`
	Subjects []string            `json:"subjects,omitempty"`

	pos string // Caddyfile position, for errors found after the block
}

// DefaultAuthConfig is `default_auth <name> { ... }`: a policy plus the
// settings of the protected resource metadata (RFC 9728).
type DefaultAuthConfig struct {
	AuthPolicyConfig
	// Resource is the endpoint's canonical URL, published as "resource";
	// default: scheme, host and path of the request (set it behind a proxy
	// that rewrites them).
	Resource string `json:"resource,omitempty"`
}

// AuthorizationServerLister is implemented by providers that know the OAuth
// authorization servers issuing their tokens; the endpoint publishes them
// in its protected resource metadata.
type AuthorizationServerLister interface {
	AuthorizationServerURLs() []string
}

// Challenger is implemented by providers with an HTTP authentication scheme
// of their own (basic): access.Challenger.
type Challenger = access.Challenger

func (p *AuthPolicyConfig) policy() *pipeline.Policy {
	if len(p.Scopes) == 0 && len(p.Claims) == 0 && len(p.Subjects) == 0 {
		return nil
	}
	return &pipeline.Policy{Scopes: p.Scopes, Claims: p.Claims, Subjects: p.Subjects}
}

// provisionAuth loads the providers and the endpoint default. Caddy
// provisions each provider module and cleans it up with this config.
func (h *Handler) provisionAuth(ctx caddy.Context) error {
	h.providers = make(map[string]pipeline.AuthProvider, len(h.Auth))
	for i := range h.Auth {
		cfg := &h.Auth[i]
		if _, dup := h.providers[cfg.Name]; dup {
			return fmt.Errorf("auth provider %q declared twice", cfg.Name)
		}
		mod, err := ctx.LoadModule(cfg, "ProviderRaw")
		if err != nil {
			return fmt.Errorf("auth %q: %v", cfg.Name, err)
		}
		p, ok := mod.(pipeline.AuthProvider)
		if !ok {
			return fmt.Errorf("auth %q: module %T is not an auth provider", cfg.Name, mod)
		}
		h.providers[cfg.Name] = p
		if ps, ok := p.(pipeline.PoolStatser); ok { // the script plugin's runtimes
			telemetry.ExposeScriptPool(h, "auth "+cfg.Name, ps)
		}
	}
	return h.gateWith(h.DefaultAuth, "default_auth")
}

// gateWith sets the handler's auth gate (an endpoint's, or a toolset
// view's) from def, its default_auth, or without one when def is nil: the
// gate still runs (it remembers the providers' answers). where names def
// in errors.
func (h *Handler) gateWith(def *DefaultAuthConfig, where string) error {
	if def != nil {
		check, err := h.authCheck(&def.AuthPolicyConfig, where)
		if err != nil {
			return err
		}
		h.defaultAuth = check
		var servers []string
		if l, ok := check.Provider.(AuthorizationServerLister); ok {
			servers = l.AuthorizationServerURLs()
		}
		h.metadata = h.resourceMetadata(servers)
	}
	h.endpointAuth = h.newEndpointAuth()
	return nil
}

// toolAuth is the authentication stage of a tool: its own auth block, which
// replaces the endpoint default, else the default, else none.
func (h *Handler) toolAuth(tc ToolConfig) (pipeline.Authorizer, error) {
	if tc.Auth != nil {
		return h.authCheck(tc.Auth, fmt.Sprintf("tool %q", tc.Name))
	}
	if h.defaultAuth != nil {
		return h.defaultAuth, nil
	}
	return nil, nil
}

func (h *Handler) authCheck(p *AuthPolicyConfig, where string) (*pipeline.AuthCheck, error) {
	provider, ok := h.providers[p.Use]
	if !ok {
		return nil, fmt.Errorf("%s: auth %q: no provider of that name (declare it with auth %s <plugin> { ... })", where, p.Use, p.Use)
	}
	return &pipeline.AuthCheck{ProviderName: p.Use, Provider: provider, Policy: p.policy()}, nil
}

// resourceMetadata builds the RFC 9728 document settings of the endpoint.
// scopes_supported lists the scopes a client may need to ask for: those of
// the endpoint default and of the tools that use the default provider.
func (h *Handler) resourceMetadata(servers []string) *ResourceMetadata {
	d := h.DefaultAuth
	scopes := slices.Clone(d.Scopes)
	for _, t := range h.Tools {
		if t.Auth != nil && t.Auth.Use == d.Use {
			scopes = append(scopes, t.Auth.Scopes...)
		}
	}
	for _, t := range h.SQLTools {
		if t.Auth != nil && t.Auth.Use == d.Use {
			scopes = append(scopes, t.Auth.Scopes...)
		}
	}
	slices.Sort(scopes)
	name := h.ServerName
	if name == "" { // adapt time: Provision has not set the default yet
		name = defaultServerName
	}
	return &ResourceMetadata{
		// The documents' own route is gated as the endpoint is.
		HostGate:             HostGate{AllowedOrigins: h.AllowedOrigins, AllowedHosts: h.AllowedHosts},
		Resource:             d.Resource,
		AuthorizationServers: servers,
		ScopesSupported:      slices.Compact(scopes),
		ResourceName:         name,
	}
}
