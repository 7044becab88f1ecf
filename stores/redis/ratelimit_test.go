package redis

import (
	"context"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline/ratelimit"
)

// TestRateLimitsShared: two stores on one Redis (two nodes) share a
// limit; the retry delay comes from Redis's clock.
func TestRateLimitsShared(t *testing.T) {
	prefix := testservices.RedisPrefix(t)
	a, err := Open(testservices.RedisURL(t), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, _ := Open(testservices.RedisURL(t), time.Second)
	defer b.Close()
	nodeA, nodeB := NewRateLimits(a, prefix), NewRateLimits(b, prefix)
	l := ratelimit.Limit{N: 2, Period: time.Minute}
	ctx := context.Background()
	for i, node := range []*RateLimits{nodeA, nodeB} {
		if ok, _, err := node.Allow(ctx, "alice", l); !ok || err != nil {
			t.Fatalf("call %d: %t %v", i+1, ok, err)
		}
	}
	ok, retry, err := nodeA.Allow(ctx, "alice", l)
	if ok || err != nil || retry <= 0 || retry > 30*time.Second {
		t.Fatalf("third call across nodes: ok=%t retry=%s err=%v, want refused for up to 30s", ok, retry, err)
	}
	if ok, _, _ := nodeB.Allow(ctx, "bob", l); !ok {
		t.Fatal("another key shares the limit")
	}
}

// TestRateLimitsRedisDown reports an error (the caller falls back).
func TestRateLimitsRedisDown(t *testing.T) {
	s, _ := Open("redis://127.0.0.1:1/0", 200*time.Millisecond)
	defer s.Close()
	if _, _, err := NewRateLimits(s, "x:").Allow(context.Background(), "k", ratelimit.Limit{N: 1, Period: time.Second}); err == nil {
		t.Fatal("no error from a Redis that is down")
	}
}
