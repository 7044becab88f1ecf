package caddymodule

import (
	"fmt"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/access"
	"github.com/edgemcp/edgemcp/caddymodule/limits"
	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/backoff"
	"github.com/edgemcp/edgemcp/pipeline/ratelimit"
)

// Rate limits and concurrency limits (README, Rate limits): `rate_limit <n>
// per <duration> [by subject|ip|tool]` on the endpoint (every request, HTTP
// 429 with Retry-After) and on a tool (its calls, -32000 "rate limited"),
// `max_concurrent <n>` on a tool. Counters are local, or shared by every
// node through `rate_limit_redis`; while Redis fails they fall back to
// local ones, counted in edgemcp_rate_limit_fallbacks_total.

// RateLimitConfig is `rate_limit <n> per <duration> [by subject|ip|tool]`.
type RateLimitConfig struct {
	N      int            `json:"n"`
	Period caddy.Duration `json:"per"`
	// By is what a counter is kept per: the caller's verified subject
	// (default; the client IP when a call has none), the client IP, or the
	// tool (one counter for everyone).
	By string `json:"by,omitempty"`
}

// RateLimitStoreConfig is `rate_limit_redis <url> [<key prefix>]`.
type RateLimitStoreConfig struct {
	Redis  string `json:"redis"`
	Prefix string `json:"prefix,omitempty"`
}

// rule is the runtime form of c; nil for nil.
func (c *RateLimitConfig) rule() *limits.Rule {
	if c == nil {
		return nil
	}
	return &limits.Rule{N: c.N, Period: time.Duration(c.Period), By: c.By}
}

// rateLimitRedisRetry is how long a rate_limit_redis that failed is left
// alone (the node counts alone meanwhile), as the cache's second level.
const rateLimitRedisRetry = 2 * time.Second

// provisionRateLimits makes the counters' store.
func (h *Handler) provisionRateLimits(ctx caddy.Context, repl *caddy.Replacer) error {
	local := ratelimit.NewLocal(0)
	h.limits = limits.New(local)
	if h.RateLimitStore == nil {
		return nil
	}
	store, _, err := loadSharedStore(ctx, repl.ReplaceKnown(h.RateLimitStore.Redis, ""), 100*time.Millisecond)
	if err != nil {
		return fmt.Errorf("rate_limit_redis: %v", err)
	}
	prefix := repl.ReplaceKnown(h.RateLimitStore.Prefix, "")
	if prefix == "" {
		prefix = "edgemcp:rl:"
	}
	logger := h.logger
	h.limits = limits.New(&ratelimit.Fallback{
		Shared: store.RateLimits(prefix),
		Local:  local,
		Gate: backoff.New(rateLimitRedisRetry,
			func(err error) {
				logger.Warn("rate limits counted on this node only: the shared Redis failed", zap.Error(err),
					zap.Duration("retry_in", rateLimitRedisRetry))
			},
			func() { logger.Info("rate limits shared again: the Redis answers") }),
		OnFallback: telemetry.RateLimitFallbacks.Inc,
	})
	return nil
}

// allowEndpoint applies the endpoint's rate limit to a request: the 429 to
// answer when over it (limits.Limiter.Endpoint).
func (h *Handler) allowEndpoint(w http.ResponseWriter, r *http.Request) error {
	if h.RateLimit == nil || r.Method == http.MethodOptions {
		return nil
	}
	return h.limits.Endpoint(w, r, *h.RateLimit.rule(), access.Identity(r.Context()))
}

// applyToolLimits puts each tool's limits in front of its executor; byName
// is what configured each (a declared tool's block, or its sql_tools set).
func (h *Handler) applyToolLimits(tools []*pipeline.Tool, byName map[string]ToolConfig) {
	for _, t := range tools {
		tc, ok := byName[t.Name]
		if !ok || (tc.RateLimit == nil && tc.MaxConcurrent == 0) {
			continue
		}
		t.Executor = h.limits.Tool(t.Executor, t.Name, tc.RateLimit.rule(), tc.MaxConcurrent)
	}
}
