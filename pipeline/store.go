package pipeline

import (
	"context"
	"time"

	"github.com/edgemcp/edgemcp/pipeline/ratelimit"
)

// SharedStore is what the gateway nodes share: the result cache's second
// level (a cache.Store), the rate limits' counters, the approval answers
// already spent and per-caller credentials. A store type is a guest module
// mcp.stores.<type> (redis is built in; docs/architecture.md, Adding a
// store). Every operation is short: a failing store degrades what uses it
// (the cache serves its first level, the limits count on this node).
type SharedStore interface {
	KeyValue
	// Claim records key for ttl unless it is already recorded, atomically
	// across nodes, and reports whether this call recorded it.
	Claim(ctx context.Context, key string, ttl time.Duration) (bool, error)
	// RateLimits counts calls in the store, under keys starting with
	// prefix, so that every node sharing it agrees.
	RateLimits(prefix string) ratelimit.Store
}

// KeyValue is a store's plain keys, all the result cache's second level
// needs (cache.Store).
type KeyValue interface {
	// Get returns the value of key, or nil, nil when it is absent.
	Get(ctx context.Context, key string) ([]byte, error)
	// Set stores value under key for ttl.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// Records is what a shared store offers guardrails across calls
// (pipeline/guardrail) besides its plain keys: several keys in one round
// trip, and counters that expire.
type Records interface {
	// GetMany returns the values of keys, nil where a key is absent.
	GetMany(ctx context.Context, keys ...string) ([][]byte, error)
	// Incr adds one to the counter at key (absent: 0) and returns it;
	// the key expires ttl after this change.
	Incr(ctx context.Context, key string, ttl time.Duration) (int64, error)
}
