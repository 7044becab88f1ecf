package pipeline

import (
	"context"
	"time"
)

// CachePolicy is how a tool's results are cached (docs/architecture.md, Cache). The cache
// itself lives in pipeline/cache and wraps the tool's Executor.
type CachePolicy struct {
	// TTL is how long a result is served from the cache.
	TTL time.Duration
	// Shared keeps the caller's identity out of the key: every caller of
	// the tool sees the same cached result.
	Shared bool
}

// CacheKeyer is implemented by executors that know what determines their
// result better than the validated inputs do. A nil key with a nil error
// means "do not cache this call".
type CacheKeyer interface {
	CacheKey(ctx context.Context, call *Call) ([]byte, error)
}

// CacheKey is the compiled statement as rendered for this call and its
// bound values: two calls with the same key run the same query.
func (d *DBExecutor) CacheKey(_ context.Context, call *Call) ([]byte, error) {
	sql, args, err := d.Statement.RenderAs(call.Inputs, TemplateIdentity(call.Identity))
	if err != nil {
		return nil, renderFailure(err)
	}
	// The values as json.Marshal(args) writes them.
	out := make([]byte, 0, len(sql)+3+16*len(args))
	out = append(append(out, sql...), 0, '[')
	for i, a := range args {
		if i > 0 {
			out = append(out, ',')
		}
		if out, err = AppendJSON(out, a); err != nil {
			return nil, nil // a value JSON cannot express: run uncached
		}
	}
	return append(out, ']'), nil
}

// CacheHint is how long a client may keep a result and with whom it may
// share it (MCP 2026-07-28's ttlMs and cacheScope, docs/tasks.md), as the
// result cache decides them: a client that honours it caches as the
// gateway does.
type CacheHint struct {
	// TTL is the time left before the gateway would run the call again:
	// the entry's remaining life on a hit, the TTL it was stored with on
	// a miss (already bounded by the backend's own max-age), 0 for a
	// result served stale or not stored.
	TTL time.Duration
	// Private says the cache key holds the caller's identity: the result
	// is this caller's, never to be shared (cacheScope "private").
	Private bool
}
