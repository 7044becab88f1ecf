// Package caddyargs reads Caddyfile arguments the same way for the
// gateway and its built-in guest modules, so that their messages agree.
package caddyargs

import "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

// OneArg reads the line's one value into dst.
func OneArg(d *caddyfile.Dispenser, dst *string) error {
	dir := d.Val()
	if !d.NextArg() {
		return d.Errf("%s needs a value", dir)
	}
	*dst = d.Val()
	if d.NextArg() {
		return d.Errf("%s takes one value, got another: %q", dir, d.Val())
	}
	return nil
}
