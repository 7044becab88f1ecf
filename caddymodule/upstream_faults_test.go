package caddymodule

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// burstUpstream serves an OpenAPI document with one operation, GET /a,
// which answers 503 while down is set or while a burst lasts, 200 after.
type burstUpstream struct {
	*httptest.Server
	burst    atomic.Int32 // 503s still to send
	down     atomic.Bool
	requests atomic.Int32 // requests to /a
}

func newBurstUpstream(t *testing.T) *burstUpstream {
	t.Helper()
	u := &burstUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/spec.json" {
			io.WriteString(w, `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{
				"/a":{"get":{"operationId":"getA","responses":{"200":{"description":"ok"}}}}}}`)
			return
		}
		n := u.requests.Add(1)
		if u.down.Load() || u.burst.Add(-1) >= 0 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"n": %d}`, n)
	}))
	t.Cleanup(u.Close)
	return u
}

// TestUpstream503Bursts: an OpenAPI source whose upstream answers bursts
// of 503. A burst shorter than the retries is invisible to the caller; an
// upstream that stays down fails the call after its retries, then opens the
// breaker, and calls fail at once with "source unavailable" without
// reaching the upstream; once it is back, the first trial after the
// cooldown closes the breaker and calls succeed again.
func TestUpstream503Bursts(t *testing.T) {
	up := newBurstUpstream(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source api openapi %s/spec.json {
			base_url %s
			retries 2
			circuit_breaker {
				failures 5
				window 1m
				cooldown 500ms
			}
		}
	}
}`, up.URL, up.URL))
	s := g.rawSession(t, "2025-06-18")

	// A burst of two 503s: retried, the caller sees the answer.
	up.burst.Store(2)
	if r := s.call(t, "api_getA", map[string]any{}).tool(t); r.IsError || !strings.Contains(r.Content[0].Text, `"n": 3`) {
		t.Fatalf("after a burst of two 503s: %+v", r)
	}

	// Down: the first call is tried three times and fails, which makes
	// five failures in the window (two from the burst): the breaker opens
	// and the next calls fail at once, never reaching the upstream.
	up.down.Store(true)
	before := up.requests.Load()
	r := s.call(t, "api_getA", map[string]any{})
	if r.Error == nil || !strings.Contains(r.Error.Message, "503") {
		t.Fatalf("with the upstream down: %s %+v, want the upstream's 503", r.Result, r.Error)
	}
	if sent := up.requests.Load() - before; sent != 3 {
		t.Errorf("the failing call sent %d requests, want 3 (one and two retries)", sent)
	}
	before = up.requests.Load()
	for range 5 {
		r := s.call(t, "api_getA", map[string]any{})
		if r.Error == nil || r.Error.Code != -32000 || !strings.HasSuffix(r.Error.Message, "source unavailable") {
			t.Fatalf("with the breaker open: %s %+v, want -32000 source unavailable", r.Result, r.Error)
		}
	}
	if sent := up.requests.Load() - before; sent != 0 {
		t.Errorf("with the breaker open, %d requests reached the upstream", sent)
	}

	// Back: after the cooldown one trial closes the breaker.
	up.down.Store(false)
	waitFor(t, "a successful call after the upstream is back", func() bool {
		r := s.call(t, "api_getA", map[string]any{})
		return r.Error == nil && !r.tool(t).IsError
	})
	for range 3 {
		if r := s.call(t, "api_getA", map[string]any{}).tool(t); r.IsError {
			t.Fatalf("after recovery: %+v", r)
		}
	}
}
