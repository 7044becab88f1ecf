// Package sharedstore loads the store the gateway nodes share, the guest
// module mcp.stores.redis, from the redis settings of a config (the
// cache's redis, rate_limit_redis, a per_caller credential's redis), whose
// JSON predates the store modules. The gateway and the sources load it
// alike, without importing a Redis package.
package sharedstore

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Redis loads mcp.stores.redis for the Redis at url, each operation bounded
// by timeout. Caddy cleans it up with ctx's config; the module shares its
// client across reloads.
func Redis(ctx caddy.Context, url string, timeout time.Duration) (pipeline.SharedStore, error) {
	raw, err := json.Marshal(map[string]any{"url": url, "timeout": timeout})
	if err != nil {
		return nil, err
	}
	mod, err := ctx.LoadModuleByID("mcp.stores.redis", raw)
	if err != nil {
		return nil, err
	}
	store, ok := mod.(pipeline.SharedStore)
	if !ok {
		return nil, fmt.Errorf("module mcp.stores.redis (%T) is not a shared store", mod)
	}
	return store, nil
}
