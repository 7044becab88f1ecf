package cache

import (
	"context"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// TestCacheHint: every answer of a cached tool says how long the client
// may keep it (the entry's time left, bounded by the backend's max-age)
// and whether it is the caller's alone (the key holds the identity); a
// stale serve and a result the backend said not to store may be kept no
// longer.
func TestCacheHint(t *testing.T) {
	c := newCache(t, Config{MaxTTL: time.Hour, StaleIfError: time.Hour})
	alice := &pipeline.Identity{Provider: "sso", Subject: "alice"}
	hint := func(t *testing.T, res *pipeline.Result, min, max time.Duration, private bool) {
		t.Helper()
		h := res.CacheHint
		if h == nil {
			t.Fatal("no cache hint")
		}
		if h.TTL < min || h.TTL > max || h.Private != private {
			t.Fatalf("hint %+v, want ttl in [%v, %v] private=%v", *h, min, max, private)
		}
	}

	t.Run("miss then hit", func(t *testing.T) {
		tool := cachedTool(c, "plain", &counter{}, pipeline.CachePolicy{TTL: time.Minute})
		_, status, res := run(t, tool, nil, nil)
		if status != StatusMiss {
			t.Fatalf("status %s", status)
		}
		hint(t, res, 59*time.Second, time.Minute, false)
		_, status, res = run(t, tool, nil, nil)
		if status != StatusHit {
			t.Fatalf("status %s", status)
		}
		hint(t, res, time.Second, time.Minute, false)
	})
	t.Run("identity-scoped key is private", func(t *testing.T) {
		tool := cachedTool(c, "mine", &counter{}, pipeline.CachePolicy{TTL: time.Minute})
		tool.Auth = authorizer{}
		_, _, res := run(t, tool, nil, alice)
		hint(t, res, time.Second, time.Minute, true)
	})
	t.Run("cache shared is public", func(t *testing.T) {
		tool := cachedTool(c, "ours", &counter{}, pipeline.CachePolicy{TTL: time.Minute, Shared: true})
		tool.Auth = authorizer{}
		_, _, res := run(t, tool, nil, alice)
		hint(t, res, time.Second, time.Minute, false)
	})
	t.Run("backend max-age bounds it", func(t *testing.T) {
		exec := pipeline.ExecutorFunc(func(context.Context, *pipeline.Call) (*pipeline.Result, error) {
			return &pipeline.Result{Value: map[string]any{"n": 1}, MaxAge: 5 * time.Second}, nil
		})
		tool := cachedTool(c, "maxage", exec, pipeline.CachePolicy{TTL: time.Minute})
		_, _, res := run(t, tool, nil, nil)
		hint(t, res, time.Second, 5*time.Second, false)
	})
	t.Run("no-store keeps nothing", func(t *testing.T) {
		exec := pipeline.ExecutorFunc(func(context.Context, *pipeline.Call) (*pipeline.Result, error) {
			return &pipeline.Result{Value: map[string]any{"n": 1}, NoStore: true}, nil
		})
		tool := cachedTool(c, "nostore", exec, pipeline.CachePolicy{TTL: time.Minute})
		_, _, res := run(t, tool, nil, nil)
		hint(t, res, 0, 0, false)
	})
	t.Run("stale serve", func(t *testing.T) {
		exec := &counter{}
		tool := cachedTool(c, "stale", exec, pipeline.CachePolicy{TTL: 50 * time.Millisecond})
		run(t, tool, nil, nil)
		exec.fail.Store(true)
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, status, res := run(t, tool, nil, nil)
			if status == StatusStale {
				hint(t, res, 0, 0, false)
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("never served stale (status %s)", status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	t.Run("an upstream task handle is never cached", func(t *testing.T) {
		exec := &counter{}
		tool := cachedTool(c, "handle", exec, pipeline.CachePolicy{TTL: time.Minute})
		for range 2 {
			call := &pipeline.Call{Tool: tool, Task: &pipeline.TaskRequest{}}
			if _, err := tool.Executor.Execute(context.Background(), call); err != nil {
				t.Fatal(err)
			}
			if call.CacheStatus != "" {
				t.Fatalf("a task request went through the cache: %s", call.CacheStatus)
			}
		}
		if exec.n.Load() != 2 {
			t.Fatalf("%d executions of 2 task requests", exec.n.Load())
		}
	})
}
