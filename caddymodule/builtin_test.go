package caddymodule

// The built-in guest modules, registered as the root package (edgemcp.go)
// registers them in a build: this package does not import them itself.
import (
	_ "github.com/edgemcp/edgemcp/connectors/mysql"
	_ "github.com/edgemcp/edgemcp/connectors/postgres"
	_ "github.com/edgemcp/edgemcp/connectors/redis"
	_ "github.com/edgemcp/edgemcp/connectors/sqlite"
	_ "github.com/edgemcp/edgemcp/sources/graphql"
	_ "github.com/edgemcp/edgemcp/sources/mcp"
	_ "github.com/edgemcp/edgemcp/sources/openapi"
	_ "github.com/edgemcp/edgemcp/sources/override"
	_ "github.com/edgemcp/edgemcp/stores/redis"
)
