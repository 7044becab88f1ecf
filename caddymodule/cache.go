package caddymodule

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/internal/sharedstore"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/cache"
)

// CacheConfig is the mcp block's `cache { ... }`: the result cache shared by
// the endpoint's cached tools (docs/architecture.md, Cache).
type CacheConfig struct {
	// MaxSize bounds the in-process first level in bytes (default 64 MiB).
	MaxSize int64 `json:"max_size,omitempty"`
	// DefaultTTL caches every DB-backed tool that says nothing about
	// caching; 0 (the default) caches only tools with `cache <ttl>`.
	DefaultTTL caddy.Duration `json:"default_ttl,omitempty"`
	// StaleIfError serves an entry expired at most this long ago when the
	// connector fails, marked stale in the result's _meta.
	StaleIfError caddy.Duration `json:"stale_if_error,omitempty"`
	// Redis is the URL of the optional shared second level. It may hold a
	// password and is never logged.
	Redis string `json:"redis,omitempty"`
	// KeyPrefix starts every Redis key (default "edgemcp:"): gateways that
	// share a Redis but not their databases need different prefixes.
	KeyPrefix string `json:"key_prefix,omitempty"`
	// RedisTimeout bounds each Redis operation (default 100ms).
	RedisTimeout caddy.Duration `json:"redis_timeout,omitempty"`
}

// ToolCacheConfig is a tool's `cache <ttl> | cache off | cache shared [<ttl>]`.
type ToolCacheConfig struct {
	TTL    caddy.Duration `json:"ttl,omitempty"`
	Shared bool           `json:"shared,omitempty"`
	Off    bool           `json:"off,omitempty"`
}

// cachePolicy is the effective policy of a tool: its own `cache` line, else
// default_ttl for DB-backed tools; other tools (scripts, proxies) are only
// cached when they say so.
func cachePolicy(t *pipeline.Tool, tc *ToolCacheConfig, block *CacheConfig) (*pipeline.CachePolicy, error) {
	var defaultTTL time.Duration
	if block != nil {
		defaultTTL = time.Duration(block.DefaultTTL)
	}
	if tc == nil {
		if _, isDB := t.Executor.(*pipeline.DBExecutor); isDB && defaultTTL > 0 {
			return &pipeline.CachePolicy{TTL: defaultTTL}, nil
		}
		return nil, nil
	}
	if tc.Off {
		return nil, nil
	}
	ttl := time.Duration(tc.TTL)
	if ttl == 0 {
		ttl = defaultTTL
	}
	if ttl <= 0 {
		return nil, fmt.Errorf("tool %q: cache shared needs a ttl (cache shared <ttl>) or default_ttl in the cache block", t.Name)
	}
	if vals := t.FromIdentity; tc.Shared && len(vals) > 0 {
		return nil, fmt.Errorf("tool %q: cache shared: the statement binds the caller's identity (%s), so its results differ per caller and cannot be shared; drop \"shared\" (results are then cached per identity)", t.Name, strings.Join(vals, ", "))
	}
	return &pipeline.CachePolicy{TTL: ttl, Shared: tc.Shared}, nil
}

// provisionCache sets each declared tool's cache policy (a source sets
// its tools' own) and, when any tool is cached, builds the cache and puts
// it in front of those tools' executors.
func (h *Handler) provisionCache(ctx caddy.Context, tools, sourced []*pipeline.Tool, repl *caddy.Replacer) error {
	own := make(map[string]*ToolCacheConfig, len(h.Tools))
	for _, tc := range h.Tools {
		own[tc.Name] = tc.Cache
	}
	var maxTTL time.Duration
	for _, t := range tools {
		p, err := cachePolicy(t, own[t.Name], h.Cache)
		if err != nil {
			return err
		}
		t.Cache = p
		if p != nil {
			maxTTL = max(maxTTL, p.TTL)
		}
	}
	for _, t := range sourced {
		if t.Cache != nil {
			maxTTL = max(maxTTL, t.Cache.TTL)
		}
	}
	read, err := h.resourceCachePolicies()
	if err != nil {
		return err
	}
	for _, t := range read {
		maxTTL = max(maxTTL, t.Cache.TTL)
	}
	tools = append(append(tools[:len(tools):len(tools)], sourced...), read...)
	if maxTTL == 0 {
		return nil // nothing to cache
	}
	cfg := cache.Config{MaxTTL: maxTTL, Logger: ctx.Slogger(), Canonicalize: jsonrpc.CanonicalNative, Encode: jsonrpc.EncodeValue}
	if b := h.Cache; b != nil {
		cfg.MaxSize = b.MaxSize
		cfg.StaleIfError = time.Duration(b.StaleIfError)
		cfg.KeyPrefix = repl.ReplaceKnown(b.KeyPrefix, "")
		cfg.StoreTimeout = time.Duration(b.RedisTimeout)
		if b.Redis != "" {
			store, key, err := loadSharedStore(ctx, repl.ReplaceKnown(b.Redis, ""), cfg.StoreTimeout)
			if err != nil {
				return fmt.Errorf("cache: %v", err)
			}
			h.redisKey = key
			cfg.Store = store
		}
	}
	key := h.cachePoolKey(cfg)
	val, _, err := cachePools.LoadOrNew(key, func() (caddy.Destructor, error) {
		c, err := cache.New(cfg)
		if err != nil {
			return nil, err
		}
		return sharedCache{c}, nil
	})
	if err != nil {
		return err
	}
	h.cacheKey = key
	c := val.(sharedCache).Cache
	h.cache = c
	telemetry.ExposeCache(h, "results", c)
	for _, t := range tools {
		t.Executor = c.Wrap(t)
	}
	return nil
}

// cleanupCache releases this config's share of the cache. Requests of this
// config still in flight keep working: bigcache's Close only stops its
// cleaner.
func (h *Handler) cleanupCache() {
	if h.cacheKey != "" {
		_, _ = cachePools.Delete(h.cacheKey)
		h.cacheKey = ""
	}
	h.cache = nil
	h.redisKey = ""
}

// CacheStats returns the result cache's counters (zero when nothing is
// cached), for metrics.
func (h *Handler) CacheStats() cache.Stats {
	if h.cache == nil {
		return cache.Stats{}
	}
	return h.cache.Stats()
}

// resourceCachePolicies sets the cache policy of each declared resource
// with a `cache` line and returns their tools (declared in the same order
// as h.Resources, buildResources).
func (h *Handler) resourceCachePolicies() ([]*pipeline.Tool, error) {
	var cached []*pipeline.Tool
	for i, r := range h.resources.All() {
		rc := h.Resources[i].Cache
		if rc == nil {
			continue
		}
		p, err := cachePolicy(r.Tool, rc, h.Cache)
		if err != nil {
			return nil, fmt.Errorf("resource %q: %s", r.URI, strings.TrimPrefix(err.Error(), fmt.Sprintf("tool %q: ", r.Tool.Name)))
		}
		if r.Tool.Cache = p; p != nil {
			cached = append(cached, r.Tool)
		}
	}
	return cached, nil
}

// cachePools keeps a cache across `caddy reload` (and its counters
// monotonic) while nothing that shapes it changes: its settings, the
// longest TTL, and which database each connector name points at (keys hold
// connector names, so two endpoints may share entries only when the names
// mean the same databases).
var cachePools = caddy.NewUsagePool()

type sharedCache struct{ *cache.Cache }

func (s sharedCache) Destruct() error { return s.Close() }

// cachePoolKey identifies a cache. It hashes the connector settings (DSNs
// with passwords) and the Redis key, so it can be held safely, but it is
// still never logged.
func (h *Handler) cachePoolKey(cfg cache.Config) string {
	sum := sha256.New()
	for i, c := range h.Connectors {
		if i < len(h.poolKeys) {
			fmt.Fprintf(sum, "%q=%q\n", c.Name, h.poolKeys[i])
		}
	}
	fmt.Fprintf(sum, "%d|%d|%d|%q|%q|%d", cfg.MaxSize, cfg.MaxTTL, cfg.StaleIfError, h.redisKey, cfg.KeyPrefix, cfg.StoreTimeout)
	return hex.EncodeToString(sum.Sum(nil))
}

// loadSharedStore loads the shared store for the Redis at url
// (sharedstore.Redis). The key names the store for a cache's pool key: it
// holds the URL (and any password) and must never be logged.
func loadSharedStore(ctx caddy.Context, url string, timeout time.Duration) (pipeline.SharedStore, string, error) {
	if timeout <= 0 {
		timeout = 100 * time.Millisecond
	}
	store, err := sharedstore.Redis(ctx, url, timeout)
	if err != nil {
		return nil, "", err
	}
	return store, fmt.Sprintf("%s\x00%d", url, timeout), nil
}
