package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/caddymodule/gate"
)

// HostGate is the config of the Host and Origin check in front of
// everything the mcp handlers serve (gate.Gate), shared by the endpoint
// and the protected-resource metadata handler.
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

	gate *gate.Gate
}

// provision prepares the check.
func (g *HostGate) provision(ctx caddy.Context) error {
	var err error
	g.gate, err = gate.New(ctx, g.AllowedOrigins, g.AllowedHosts)
	return err
}

// validate checks the configured origins and host names.
func (g *HostGate) validate() error { return gate.Validate(g.AllowedOrigins, g.AllowedHosts) }

// admit lets r through, or answers 403 and reports false.
func (g *HostGate) admit(w http.ResponseWriter, r *http.Request) bool { return g.gate.Admit(w, r) }
