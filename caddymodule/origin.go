package caddymodule

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Browsers send an Origin header; MCP's transport rules say a server must
// validate it, so that a page on another site cannot drive the endpoint from
// a visitor's browser. Non-browser clients send none and are not affected.
// The endpoint's own origin is always allowed; others only when listed in
// allowed_origins. (DNS rebinding, where the attacker's page shares the
// endpoint's origin, is caught separately: a loopback listener only accepts
// loopback Host headers.)

// originAllowed reports whether a request may proceed.
func (h *Handler) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if slices.Contains(h.AllowedOrigins, "*") || slices.Contains(h.AllowedOrigins, strings.TrimSuffix(origin, "/")) {
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
