package caddymodule

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
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

func (c *RateLimitConfig) limit() ratelimit.Limit {
	return ratelimit.Limit{N: c.N, Period: time.Duration(c.Period)}
}

// rateLimitRedisRetry is how long a rate_limit_redis that failed is left
// alone (the node counts alone meanwhile), as the cache's second level.
const rateLimitRedisRetry = 2 * time.Second

// provisionRateLimits makes the counters' store.
func (h *Handler) provisionRateLimits(ctx caddy.Context, repl *caddy.Replacer) error {
	local := ratelimit.NewLocal(0)
	h.limits = local
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
	h.limits = &ratelimit.Fallback{
		Shared: store.RateLimits(prefix),
		Local:  local,
		Gate: backoff.New(rateLimitRedisRetry,
			func(err error) {
				logger.Warn("rate limits counted on this node only: the shared Redis failed", zap.Error(err),
					zap.Duration("retry_in", rateLimitRedisRetry))
			},
			func() { logger.Info("rate limits shared again: the Redis answers") }),
		OnFallback: telemetry.RateLimitFallbacks.Inc,
	}
	return nil
}

// limitKey is the counter a call is counted on.
func limitKey(scope string, c *RateLimitConfig, tool string, id *pipeline.Identity, remoteAddr string) string {
	switch {
	case c.By == "tool":
		return scope + "\x00tool\x00" + tool
	case c.By == "ip" || id == nil:
		host, _, err := net.SplitHostPort(remoteAddr)
		if err != nil {
			host = remoteAddr
		}
		return scope + "\x00ip\x00" + tool + "\x00" + host
	default:
		return scope + "\x00sub\x00" + tool + "\x00" + id.Subject
	}
}

// allowEndpoint applies the endpoint's rate limit to a request; a refused
// one is answered 429 with Retry-After.
func (h *Handler) allowEndpoint(w http.ResponseWriter, r *http.Request) bool {
	if h.RateLimit == nil || r.Method == http.MethodOptions {
		return true
	}
	id, _ := r.Context().Value(endpointIdentityKey{}).(*pipeline.Identity)
	key := limitKey("endpoint", h.RateLimit, "", id, clientIP(r))
	ok, retry, _ := h.limits.Allow(r.Context(), key, h.RateLimit.limit())
	if ok {
		return true
	}
	telemetry.RateLimited.WithLabelValues("endpoint", "").Inc()
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
	jsonrpc.WriteError(w, http.StatusTooManyRequests, pipeline.CodeStageFailed, fmt.Sprintf("rate limited: retry in %s", roundUp(retry)))
	return false
}

// clientIP is Caddy's client IP (trusted proxies applied), else the peer.
func clientIP(r *http.Request) string {
	if ip, ok := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string); ok && ip != "" {
		return ip
	}
	return r.RemoteAddr
}

type endpointIdentityKey struct{}

// roundUp is a retry delay for a message: tenths of a second, at least one.
func roundUp(d time.Duration) time.Duration {
	return max(d.Round(100*time.Millisecond), 100*time.Millisecond)
}

// limitedExecutor counts a tool's calls against its rate limit and bounds
// how many run at once, before anything else of the execution stage (the
// cache included) runs.
type limitedExecutor struct {
	next    pipeline.Executor
	tool    string
	limit   *RateLimitConfig // nil: no rate limit
	store   ratelimit.Store
	running chan struct{} // nil: no concurrency limit
}

// Unwrap returns the executor behind the limits.
func (x *limitedExecutor) Unwrap() pipeline.Executor { return x.next }

func (x *limitedExecutor) Execute(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
	if x.limit != nil {
		var remote string
		if call.Request != nil {
			remote = call.Request.RemoteAddr
		}
		ok, retry, _ := x.store.Allow(ctx, limitKey("tool", x.limit, x.tool, call.Identity, remote), x.limit.limit())
		if !ok {
			telemetry.RateLimited.WithLabelValues("tool", x.tool).Inc()
			return nil, &limitError{retry: retry}
		}
	}
	if x.running != nil {
		select {
		case x.running <- struct{}{}:
			defer func() { <-x.running }()
		default:
			telemetry.RateLimited.WithLabelValues("concurrency", x.tool).Inc()
			return nil, &pipeline.PublicError{Public: fmt.Sprintf("busy: %d calls of this tool are running (max_concurrent)", cap(x.running))}
		}
	}
	return x.next.Execute(ctx, call)
}

// limitError is a refused call: its message says when to retry, and under
// error_mode result its _meta says it in milliseconds.
type limitError struct{ retry time.Duration }

func (e *limitError) Error() string       { return "rate limited: retry in " + roundUp(e.retry).String() }
func (e *limitError) SafeMessage() string { return e.Error() }
func (e *limitError) ErrorMeta() map[string]any {
	return map[string]any{"edgemcp/rate_limit": map[string]any{"retry_after_ms": e.retry.Milliseconds()}}
}

// applyToolLimits puts each declared tool's limits in front of its executor.
func (h *Handler) applyToolLimits(tools []*pipeline.Tool) {
	byName := make(map[string]ToolConfig, len(h.Tools))
	for _, tc := range h.Tools {
		byName[tc.Name] = tc
	}
	for _, t := range tools {
		tc, ok := byName[t.Name]
		if !ok || (tc.RateLimit == nil && tc.MaxConcurrent == 0) {
			continue
		}
		x := &limitedExecutor{next: t.Executor, tool: t.Name, limit: tc.RateLimit, store: h.limits}
		if tc.MaxConcurrent > 0 {
			x.running = make(chan struct{}, tc.MaxConcurrent)
		}
		t.Executor = x
	}
}
