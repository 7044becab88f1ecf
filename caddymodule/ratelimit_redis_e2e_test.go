package caddymodule

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// redisSwitch is a TCP proxy in front of Redis that first accepts
// connections and never answers (a Redis that hangs), then, once
// forwarding is set, passes them to the real one.
type redisSwitch struct {
	addr       string
	forwarding atomic.Bool
	hung       atomic.Int64 // connections accepted and never answered
}

func startRedisSwitch(t *testing.T, redisURL string) *redisSwitch {
	t.Helper()
	u, err := url.Parse(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	s := &redisSwitch{addr: l.Addr().String()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if !s.forwarding.Load() {
				s.hung.Add(1)
				go func() { _, _ = io.Copy(io.Discard, c); _ = c.Close() }()
				continue
			}
			r, err := net.Dial("tcp", u.Host)
			if err != nil {
				_ = c.Close()
				continue
			}
			go func() { _, _ = io.Copy(r, c); _ = r.Close() }()
			go func() { _, _ = io.Copy(c, r); _ = c.Close() }()
		}
	}()
	return s
}

// TestRateLimitRedisHangs: a rate_limit_redis that accepts connections and
// never answers is tried once per retry period, not on every request (each
// waited for the Redis timeout), and its going down is logged once, not
// once a request; calls are counted on the node meanwhile. Once it answers
// again, the limits are shared again, which is logged once.
func TestRateLimitRedisHangs(t *testing.T) {
	redis := startRedisSwitch(t, testservices.RedisURL(t))
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	g := startGateway(t, "", withLogFile(logFile))
	store := fmt.Sprintf("rate_limit_redis redis://%s/0 %s", redis.addr, testservices.RedisPrefix(t))
	if err := g.load(bindLoopback(limitCaddyfile(t, fmt.Sprintf("http://:%d", g.port), store, "rate_limit 1000 per 1h by tool"))); err != nil {
		t.Fatal(err)
	}
	s := g.rawSession(t, "2025-06-18")
	start := time.Now()
	for range 20 {
		s.call(t, "count", map[string]any{}).tool(t)
	}
	// One try at the first call, then at most one per retry period.
	if tries, most := redis.hung.Load(), 1+int64(time.Since(start)/rateLimitRedisRetry); tries > most {
		t.Errorf("the hanging Redis was tried %d times in 20 calls, want at most %d", tries, most)
	}
	logged := func(msg string) int {
		b, err := os.ReadFile(logFile)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), msg)
	}
	if n := logged("rate limits counted on this node only"); n != 1 {
		t.Errorf("the hanging Redis was logged %d times, want once", n)
	}

	redis.forwarding.Store(true)
	waitFor(t, "the limits to be shared again", func() bool {
		s.call(t, "count", map[string]any{}).tool(t)
		return logged("rate limits shared again") > 0
	})
	s.call(t, "count", map[string]any{}).tool(t)
	if down, up := logged("rate limits counted on this node only"), logged("rate limits shared again"); down != 1 || up != 1 {
		t.Errorf("logged down %d and up %d times, want once each", down, up)
	}
}
