// Command caddybin is Caddy with edgemcp built in, as xcaddy builds it
// (./xcaddy.sh), for the tests that run gateway nodes as real processes.
// Operators build their binary with xcaddy; this one exists so that a test
// can `go build` it from the module cache in seconds.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/edgemcp/edgemcp"
)

func main() { caddycmd.Main() }
