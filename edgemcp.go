// Package edgemcp is the root of the edgemcp Caddy plugin: an MCP (Model Context
// Protocol) server as a Caddy v2 HTTP handler.
//
// It exists so that the module path can be given to xcaddy, which imports the module
// root for its side effects:
//
//	xcaddy build --with github.com/edgemcp/edgemcp
//
// The Caddy modules themselves are registered by package
// github.com/edgemcp/edgemcp/caddymodule and by the built-in connectors and
// sources, the overrides and the shared store (guest modules mcp.connectors.*,
// mcp.sources.*, mcp.overrides.* and mcp.stores.*), imported here.
package edgemcp

import (
	// Registers the edgemcp Caddy modules and Caddyfile directives.
	_ "github.com/edgemcp/edgemcp/caddymodule"
	// The built-in connectors and sources.
	_ "github.com/edgemcp/edgemcp/connectors/mysql"
	_ "github.com/edgemcp/edgemcp/connectors/postgres"
	_ "github.com/edgemcp/edgemcp/connectors/redis"
	_ "github.com/edgemcp/edgemcp/connectors/sqlite"
	_ "github.com/edgemcp/edgemcp/sources/graphql"
	_ "github.com/edgemcp/edgemcp/sources/mcp"
	_ "github.com/edgemcp/edgemcp/sources/openapi"
	// The operator's overrides of any source's tools (mcp.overrides.tools).
	_ "github.com/edgemcp/edgemcp/sources/override"
	// The built-in shared store.
	_ "github.com/edgemcp/edgemcp/stores/redis"
)
