// Package block reads what the drivers' UnmarshalCaddyfile share of a
// connector's block: the gateway hands each driver the directive
// `connector <name> <type> <dsn> { ... }` with only the lines it does not
// read itself, so a driver reads the head for the name and its own lines.
package block

import "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

// Head reads `connector <name> <type> <dsn>`, which the gateway has
// checked, and returns the name (driver messages name the connector).
func Head(d *caddyfile.Dispenser) string {
	d.Next()
	args := d.RemainingArgs()
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// None is the UnmarshalCaddyfile of a driver without options of its own.
func None(d *caddyfile.Dispenser) error {
	name := Head(d)
	for d.NextBlock(0) {
		return Unrecognized(d, name)
	}
	return nil
}

// Unrecognized is the error for a line of the block that neither the
// gateway nor the driver reads.
func Unrecognized(d *caddyfile.Dispenser, name string) error {
	return d.Errf("connector %q: unrecognized sub-directive %q", name, d.Val())
}
