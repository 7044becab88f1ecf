package tasks

import (
	"context"
	"errors"
	"time"

	"github.com/edgemcp/edgemcp/pipeline/cache"
)

// KV is where tasks are kept. Its operations are the plain ones of any
// key-value store with expiry, so that the store the gateway nodes share
// (Redis: GET, SET PX, SET NX PX) provides it as it is: the result
// cache's second level (Get, nil for an absent or expired key, and Set
// with a ttl) and SetIfAbsent.
type KV interface {
	cache.Store
	// SetIfAbsent stores value under key for ttl unless key holds a
	// value, atomically, and reports whether it stored it: of several
	// nodes setting one key, exactly one gets true.
	SetIfAbsent(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error)
}

// ErrFull is a write to a Memory that would go past its bounds.
var ErrFull = errors.New("the task store is full")
