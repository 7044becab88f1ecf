// Package limits applies the rate limits and concurrency limits (README,
// Rate limits): a rate limit on the endpoint (every request, HTTP 429 with
// Retry-After) and on a tool (its calls, -32000 "rate limited"), and a
// tool's max_concurrent. The counters are a ratelimit.Store: the node's
// own, or shared by every node, as the shell provisions them.
package limits

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/ratelimit"
)

// Rule is one rate limit: N per Period, counted per By: the caller's
// verified subject ("" or "subject"; the client IP when a call has none),
// the client IP ("ip"), or the tool ("tool": one counter for everyone).
type Rule struct {
	N      int
	Period time.Duration
	By     string
}

func (r Rule) limit() ratelimit.Limit { return ratelimit.Limit{N: r.N, Period: r.Period} }

// Limiter counts requests and calls in one store.
type Limiter struct{ store ratelimit.Store }

// New returns a Limiter counting in store.
func New(store ratelimit.Store) *Limiter { return &Limiter{store: store} }

// Endpoint applies the endpoint's rule to r, made by the caller id (nil:
// none verified); for a refused request it sets Retry-After and returns
// the 429 to answer (a caddyhttp.HandlerError).
func (l *Limiter) Endpoint(w http.ResponseWriter, r *http.Request, rule Rule, id *pipeline.Identity) error {
	return l.request(w, r, "endpoint", "endpoint", rule, id)
}

// Toolset is Endpoint for the requests at the toolset name's path, on
// counters of the toolset's own: a toolset's limit and the endpoint's do
// not share a budget.
func (l *Limiter) Toolset(w http.ResponseWriter, r *http.Request, name string, rule Rule, id *pipeline.Identity) error {
	return l.request(w, r, "toolset\x00"+name, "toolset", rule, id)
}

// request counts r on the counters of scope; label is the scope of
// edgemcp_rate_limited_total.
func (l *Limiter) request(w http.ResponseWriter, r *http.Request, scope, label string, rule Rule, id *pipeline.Identity) error {
	key := key(scope, rule, "", id, clientIP(r))
	ok, retry, _ := l.store.Allow(r.Context(), key, rule.limit())
	if ok {
		return nil
	}
	telemetry.RateLimited.WithLabelValues(label, "").Inc()
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
	return caddyhttp.Error(http.StatusTooManyRequests, fmt.Errorf("rate limited: retry in %s", roundUp(retry)))
}

// Tool puts a tool's limits in front of its executor next: rule (nil:
// none) and maxConcurrent calls at once (0: unbounded).
func (l *Limiter) Tool(next pipeline.Executor, tool string, rule *Rule, maxConcurrent int) pipeline.Executor {
	x := &limitedExecutor{next: next, tool: tool, rule: rule, store: l.store}
	if maxConcurrent > 0 {
		x.running = make(chan struct{}, maxConcurrent)
	}
	return x
}

// key is the counter a call is counted on.
func key(scope string, rule Rule, tool string, id *pipeline.Identity, remoteAddr string) string {
	switch {
	case rule.By == "tool":
		return scope + "\x00tool\x00" + tool
	case rule.By == "ip" || id == nil:
		host, _, err := net.SplitHostPort(remoteAddr)
		if err != nil {
			host = remoteAddr
		}
		return scope + "\x00ip\x00" + tool + "\x00" + host
	default:
		return scope + "\x00sub\x00" + tool + "\x00" + id.Subject
	}
}

// clientIP is Caddy's client IP (trusted proxies applied), else the peer.
func clientIP(r *http.Request) string {
	if ip, ok := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string); ok && ip != "" {
		return ip
	}
	return r.RemoteAddr
}

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
	rule    *Rule // nil: no rate limit
	store   ratelimit.Store
	running chan struct{} // nil: no concurrency limit
}

// Unwrap returns the executor behind the limits.
func (x *limitedExecutor) Unwrap() pipeline.Executor { return x.next }

func (x *limitedExecutor) Execute(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
	if x.rule != nil {
		var remote string
		if call.Request != nil {
			remote = call.Request.RemoteAddr
		}
		ok, retry, _ := x.store.Allow(ctx, key("tool", *x.rule, x.tool, call.Identity, remote), x.rule.limit())
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
