// Package redis is the shared store mcp.stores.redis (Module), what
// gateway nodes share through Redis: the result cache's second level
// (pipeline/cache.Store), so that several nodes share hits, the rate
// limits' counters (RateLimits), the approval answers already used
// (Store.Claim) and per-caller credentials. It never blocks a call for long: every operation has a
// short timeout and no retries (the cache's breaker decides when to try
// again), and a Redis that is down at start-up is not an error.
package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/cache"
)

// Store is a Redis-backed cache.Store.
type Store struct {
	client *goredis.Client
}

var (
	_ cache.Store          = (*Store)(nil)
	_ pipeline.SharedStore = (*Store)(nil)
)

// Open parses a redis:// or rediss:// URL. It does not connect: the first
// operation does, and a failure then only degrades the cache.
func Open(url string, timeout time.Duration) (*Store, error) {
	opts, err := goredis.ParseURL(url)
	if err != nil {
		// go-redis errors may quote the URL, which can hold a password.
		return nil, errors.New("redis: invalid URL (want redis://[user:password@]host:port[/db])")
	}
	opts.DialTimeout = timeout
	opts.ReadTimeout = timeout
	opts.WriteTimeout = timeout
	opts.PoolTimeout = timeout
	opts.MaxRetries = -1 // no retries: a miss is cheaper than waiting
	opts.DialerRetries = 1
	opts.ContextTimeoutEnabled = true
	// No extra round trips on connect (CLIENT SETINFO, maintenance
	// notifications): a cache level should cost one command per operation.
	opts.DisableIdentity = true
	opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return &Store{client: goredis.NewClient(opts)}, nil
}

// Get returns the value of key, or nil, nil when it is absent.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := s.client.Get(ctx, key).Bytes()
	if errors.Is(err, goredis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("redis get: %w", err)
	}
	return b, nil
}

// Set stores value under key for ttl.
func (s *Store) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := s.client.Set(ctx, key, value, ttl).Err(); err != nil {
		return fmt.Errorf("redis set: %w", err)
	}
	return nil
}

// Close closes the connection pool.
func (s *Store) Close() error { return s.client.Close() }
