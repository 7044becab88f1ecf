package cache

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/allegro/bigcache/v3"
)

// Config shapes a Cache.
type Config struct {
	// MaxSize bounds the first level in bytes (default 64 MiB).
	MaxSize int64
	// MaxTTL is the longest TTL of any cached tool: with StaleIfError it
	// sets how long the first level keeps an entry.
	MaxTTL time.Duration
	// StaleIfError serves an entry expired no longer ago than this when
	// the execution fails; 0 turns it off.
	StaleIfError time.Duration
	// Store is the optional shared second level.
	Store Store
	// StoreTimeout bounds each second-level operation (default 100ms);
	// StoreRetry is how long a failed second level is left alone (default 2s).
	StoreTimeout time.Duration
	StoreRetry   time.Duration
	// KeyPrefix is put before every second-level key (default "edgemcp:").
	KeyPrefix string
	// Logger gets the second level's warnings (nil: discarded).
	Logger *slog.Logger
	// Canonicalize, when set, re-encodes a Native result once, before it
	// is stored, in the form the gateway writes (ok false: stored as it
	// is); every hit then hands those bytes on marked Canonical instead of
	// having them decoded and encoded again per answer.
	Canonicalize func(native json.RawMessage) (canonical json.RawMessage, ok bool)
	// Encode, when set, encodes a Value result's JSON once, before it is
	// stored, as the gateway writes the whole result; encoded must hold
	// value verbatim at offset at (ok false: the JSON alone is stored).
	// Every hit then hands on both (pipeline.Result.Encoded), and the
	// gateway writes the bytes instead of encoding the value per answer.
	Encode func(value json.RawMessage) (encoded json.RawMessage, at int, ok bool)
}

const (
	DefaultMaxSize      = 64 << 20
	defaultStoreTimeout = 100 * time.Millisecond
	defaultStoreRetry   = 2 * time.Second
	defaultKeyPrefix    = "edgemcp:"
	maxShards           = 256
)

// Stats are the cache's counters since it was created, for metrics.
type Stats struct {
	Hits        int64 // served from the cache (either level)
	L2Hits      int64 // of which from the second level
	Misses      int64 // had to wait for an execution
	Coalesced   int64 // of which joined another call's execution
	StaleServes int64 // served expired after an execution failed
	Evictions   int64 // removed from the first level for lack of space
	L2Errors    int64 // second-level operations that failed
}

// Cache is one result cache, shared by all the cached tools of a config.
type Cache struct {
	l1       *bigcache.BigCache
	maxEntry int
	stale    time.Duration
	l2       *l2
	prefix   string
	flights  group
	// canonicalize is Config.Canonicalize.
	canonicalize func(json.RawMessage) (json.RawMessage, bool)
	// encode is Config.Encode.
	encode func(json.RawMessage) (json.RawMessage, int, bool)

	hits, l2Hits, misses, coalesced, staleServes, evictions, l2Errors atomic.Int64
}

// New builds a cache. Close releases it.
func New(cfg Config) (*Cache, error) {
	if cfg.MaxSize <= 0 {
		cfg.MaxSize = DefaultMaxSize
	}
	if cfg.MaxTTL <= 0 {
		cfg.MaxTTL = time.Minute
	}
	if cfg.StoreTimeout <= 0 {
		cfg.StoreTimeout = defaultStoreTimeout
	}
	if cfg.StoreRetry <= 0 {
		cfg.StoreRetry = defaultStoreRetry
	}
	if cfg.KeyPrefix == "" {
		cfg.KeyPrefix = defaultKeyPrefix
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c := &Cache{stale: cfg.StaleIfError, prefix: cfg.KeyPrefix, canonicalize: cfg.Canonicalize, encode: cfg.Encode}

	// bigcache sizes in MiB and splits the size evenly over its shards; an
	// entry must fit in a shard. One shard per MiB (a power of two, at most
	// 256) keeps lock contention low and shards at least 1 MiB.
	mib := int((cfg.MaxSize + 1<<20 - 1) >> 20)
	shards := 1 << (bits.Len(uint(mib)) - 1)
	shards = min(shards, maxShards)
	c.maxEntry = mib << 20 / shards / 2

	life := cfg.MaxTTL + cfg.StaleIfError
	clean := min(max(life/2, time.Second), time.Minute)
	l1, err := bigcache.New(context.Background(), bigcache.Config{
		Shards:             shards,
		LifeWindow:         life,
		CleanWindow:        clean,
		MaxEntriesInWindow: shards * 64,
		MaxEntrySize:       1024,
		HardMaxCacheSize:   mib,
		Verbose:            false, // bigcache's verbose mode logs keys
		OnRemoveWithReason: func(_ string, _ []byte, reason bigcache.RemoveReason) {
			if reason == bigcache.NoSpace {
				c.evictions.Add(1)
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	c.l1 = l1
	if cfg.Store != nil {
		c.l2 = newL2(cfg.Store, cfg.StoreTimeout, cfg.StoreRetry, cfg.Logger, func() { c.l2Errors.Add(1) })
	}
	return c, nil
}

// Close stops the first level's cleaner and frees it.
func (c *Cache) Close() error { return c.l1.Close() }

// Stats returns the counters.
func (c *Cache) Stats() Stats {
	return Stats{
		Hits: c.hits.Load(), L2Hits: c.l2Hits.Load(), Misses: c.misses.Load(),
		Coalesced: c.coalesced.Load(), StaleServes: c.staleServes.Load(),
		Evictions: c.evictions.Load(), L2Errors: c.l2Errors.Load(),
	}
}

// getL1 returns the first-level entry if it is fresh or usable stale.
func (c *Cache) getL1(key string, now time.Time) (entry, bool) {
	b, err := c.l1.Get(key)
	if err != nil {
		return entry{}, false
	}
	e, ok := decodeEntry(b)
	if !ok || !(e.fresh(now) || e.usableStale(now, c.stale)) {
		return entry{}, false
	}
	return e, true
}

// store writes an encoded entry to both levels. Entries larger than half a
// shard are not cached at all (bigcache would refuse them, and a huge
// result in Redis would slow every node).
func (c *Cache) store(ctx context.Context, key string, b []byte, ttl time.Duration) bool {
	if len(b) > c.maxEntry {
		return false
	}
	if err := c.l1.Set(key, b); err != nil {
		return false
	}
	// The second level keeps the entry through the stale window too, so a
	// node that never saw it can still serve it stale.
	c.l2.set(ctx, c.prefix+key, b, ttl+c.stale)
	return true
}
