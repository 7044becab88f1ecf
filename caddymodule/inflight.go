package caddymodule

import (
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
)

// inFlight bounds the endpoint's POST requests being served at once on
// this node (`max_concurrent` on the endpoint, README "Rate limits"). One
// beyond the bound is answered 503 with Retry-After at once, before the
// body is read, authentication runs or MCP parses anything: under
// overload the refusal is the cheapest answer the gateway can give, so
// the calls it does take finish instead of queueing behind the ones it
// cannot. GET streams and DELETE are not counted: a notification stream
// stays open for a session's life and is no work while it does.
type inFlight struct {
	max int64
	n   atomic.Int64
}

// enter takes a place for r, or answers 503 and reports false; a taken
// place is given back by leave.
func (f *inFlight) enter(w http.ResponseWriter, r *http.Request) bool {
	if f == nil || r.Method != http.MethodPost {
		return true
	}
	if f.n.Add(1) <= f.max {
		return true
	}
	f.n.Add(-1)
	telemetry.RateLimited.WithLabelValues("concurrency", "").Inc()
	w.Header().Set("Retry-After", "1")
	jsonrpc.WriteError(w, http.StatusServiceUnavailable, pipeline.CodeStageFailed,
		fmt.Sprintf("busy: %d requests are being served (max_concurrent)", f.max))
	return false
}

func (f *inFlight) leave(r *http.Request) {
	if f != nil && r.Method == http.MethodPost {
		f.n.Add(-1)
	}
}
