package session

import (
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
)

// InFlight bounds the endpoint's POST requests being served at once on
// this node (`max_concurrent` on the endpoint, README "Rate limits"). One
// beyond the bound is answered 503 with Retry-After at once, before the
// body is read, authentication runs or MCP parses anything: under
// overload the refusal is the cheapest answer the gateway can give, so
// the calls it does take finish instead of queueing behind the ones it
// cannot. GET streams and DELETE are not counted: a notification stream
// stays open for a session's life and is no work while it does.
type InFlight struct {
	max int64
	n   atomic.Int64
}

// NewInFlight bounds the POST requests served at once at max.
func NewInFlight(max int) *InFlight { return &InFlight{max: int64(max)} }

// Enter takes a place for r, or sets Retry-After and returns the 503 to
// answer (a caddyhttp.HandlerError); a taken place is given back by
// Leave. A nil InFlight bounds nothing.
func (f *InFlight) Enter(w http.ResponseWriter, r *http.Request) error {
	if f == nil || r.Method != http.MethodPost {
		return nil
	}
	if f.n.Add(1) <= f.max {
		return nil
	}
	f.n.Add(-1)
	telemetry.RateLimited.WithLabelValues("concurrency", "").Inc()
	w.Header().Set("Retry-After", "1")
	return caddyhttp.Error(http.StatusServiceUnavailable, fmt.Errorf("busy: %d requests are being served (max_concurrent)", f.max))
}

// Leave gives back the place r took.
func (f *InFlight) Leave(r *http.Request) {
	if f != nil && r.Method == http.MethodPost {
		f.n.Add(-1)
	}
}
