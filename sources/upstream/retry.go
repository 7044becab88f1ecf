package upstream

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// Retry says when a request is sent again: only idempotent methods (RFC
// 9110: GET, HEAD, OPTIONS, TRACE, PUT, DELETE) and requests marked Safe,
// after a connection error
// or a 429, 502, 503 or 504, with exponential backoff and full jitter, and
// a 429's or 503's Retry-After honoured when the call's deadline allows.
type Retry struct {
	// Attempts after the first (`retries N`); 0 never retries.
	Attempts int
	// Base and Max bound the backoff before attempt n: a random duration
	// up to min(Max, Base·2ⁿ).
	Base, Max time.Duration
	// MaxRetryAfter caps how long a Retry-After may make a call wait.
	MaxRetryAfter time.Duration
	// Safe says the request changes nothing whatever its method, so it
	// may be sent again: a GraphQL query is sent as a POST.
	Safe bool
}

// DefaultRetry is the policy of a source that says nothing.
var DefaultRetry = Retry{Attempts: 2, Base: 100 * time.Millisecond, Max: 2 * time.Second, MaxRetryAfter: 10 * time.Second}

// idempotent methods may be sent twice without changing the outcome.
var idempotent = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodOptions: true,
	http.MethodTrace: true, http.MethodPut: true, http.MethodDelete: true,
}

// retryable statuses mean the server did not do the work (RFC 9110).
var retryable = map[int]bool{
	http.StatusTooManyRequests: true, http.StatusBadGateway: true,
	http.StatusServiceUnavailable: true, http.StatusGatewayTimeout: true,
}

// Send sends req through client, retrying as r says, and through b (nil:
// no breaker). A response it returns is the caller's to close. Requests
// with a body must have GetBody (http.NewRequest sets it for in-memory
// bodies) to be retried.
func (r Retry) Send(ctx context.Context, client *http.Client, req *http.Request, b *Breaker) (*http.Response, error) {
	attempts := 0
	if (r.Safe || idempotent[req.Method]) && (req.Body == nil || req.GetBody != nil) {
		attempts = r.Attempts
	}
	for n := 0; ; n++ {
		if err := b.allow(); err != nil {
			return nil, err
		}
		try := req
		if n > 0 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			try = req.Clone(ctx)
			try.Body = body
		}
		res, err := client.Do(try)
		err = withoutQuery(err)
		b.record(err != nil || (res.StatusCode >= 500 && res.StatusCode != http.StatusNotImplemented))
		if n >= attempts || ctx.Err() != nil || (err == nil && !retryable[res.StatusCode]) {
			if err != nil {
				return nil, Failed("upstream unreachable", err)
			}
			return res, nil
		}
		wait := r.backoff(n)
		if err == nil {
			if after, ok := retryAfter(res.Header.Get("Retry-After"), time.Now()); ok {
				if after > r.MaxRetryAfter || !fitsDeadline(ctx, after) {
					return res, nil // the upstream asks for longer than this call may wait
				}
				wait = after
			}
			res.Body.Close()
		}
		select {
		case <-ctx.Done():
			return nil, Failed("upstream unreachable", errors.Join(err, ctx.Err()))
		case <-time.After(wait):
		}
	}
}

// backoff is the wait before retry n+1: full jitter over an exponential
// bound, so that many callers retrying at once spread out.
func (r Retry) backoff(n int) time.Duration {
	bound := r.Base << min(n, 20)
	if bound <= 0 || bound > r.Max {
		bound = r.Max
	}
	if bound <= 0 {
		return 0
	}
	return rand.N(bound) + 1
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(h string, now time.Time) (time.Duration, bool) {
	if h == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(h); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

func fitsDeadline(ctx context.Context, wait time.Duration) bool {
	d, ok := ctx.Deadline()
	return !ok || time.Until(d) > wait
}
