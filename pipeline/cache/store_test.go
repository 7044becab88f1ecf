package cache

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// memStore is an in-memory Store for the core's own tests; the Redis store
// is tested against a real Redis in stores/redis and caddymodule.
type memStore struct {
	mu   sync.Mutex
	m    map[string][]byte
	down atomic.Bool
	ops  atomic.Int64
}

var errDown = errors.New("connection refused")

func (s *memStore) Get(_ context.Context, key string) ([]byte, error) {
	s.ops.Add(1)
	if s.down.Load() {
		return nil, errDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key], nil
}

func (s *memStore) Set(_ context.Context, key string, value []byte, _ time.Duration) error {
	s.ops.Add(1)
	if s.down.Load() {
		return errDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.m[key] = bytes.Clone(value)
	return nil
}

func TestSecondLevelSharesHits(t *testing.T) {
	store := &memStore{}
	exec := &counter{}
	nodeA := cachedTool(newCache(t, Config{Store: store, KeyPrefix: "t:"}), "shared", exec, pipeline.CachePolicy{TTL: time.Minute})
	nodeB := cachedTool(newCache(t, Config{Store: store, KeyPrefix: "t:"}), "shared", exec, pipeline.CachePolicy{TTL: time.Minute})
	if n, status, _ := run(t, nodeA, nil, nil); n != 1 || status != StatusMiss {
		t.Fatalf("node A: %d %s", n, status)
	}
	if n, status, _ := run(t, nodeB, nil, nil); n != 1 || status != StatusHit {
		t.Fatalf("node B: %d %s (want node A's result from the second level)", n, status)
	}
	for k := range store.m {
		if k[:2] != "t:" {
			t.Fatalf("key %q without the prefix", k)
		}
	}
}

func TestSecondLevelDownDegrades(t *testing.T) {
	store := &memStore{}
	store.down.Store(true)
	var logs bytes.Buffer
	c := newCache(t, Config{Store: store, StoreRetry: time.Hour, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	tool := cachedTool(c, "degrade", &counter{}, pipeline.CachePolicy{TTL: time.Minute})
	for i := range 5 {
		n, _, _ := run(t, tool, map[string]any{"i": i}, nil)
		if n != int64(i+1) {
			t.Fatalf("call %d: n=%d", i, n)
		}
	}
	if n, status, _ := run(t, tool, map[string]any{"i": 0}, nil); n != 1 || status != StatusHit {
		t.Fatalf("first level still serves: n=%d %s", n, status)
	}
	// One failed operation opens the breaker: no further attempts, one warning.
	if ops := store.ops.Load(); ops != 1 {
		t.Fatalf("%d store operations while down, want 1", ops)
	}
	if got := bytes.Count(logs.Bytes(), []byte("level=WARN")); got != 1 {
		t.Fatalf("%d warnings:\n%s", got, logs.String())
	}
	if st := c.Stats(); st.L2Errors != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// A node that never saw an entry can still serve it stale from the second
// level when its execution fails.
func TestSecondLevelServesStale(t *testing.T) {
	store := &memStore{}
	cfg := Config{Store: store, StaleIfError: time.Minute}
	nodeA := cachedTool(newCache(t, cfg), "stale-l2", &counter{}, pipeline.CachePolicy{TTL: 50 * time.Millisecond})
	failing := &counter{}
	failing.fail.Store(true)
	nodeB := cachedTool(newCache(t, cfg), "stale-l2", failing, pipeline.CachePolicy{TTL: 50 * time.Millisecond})
	run(t, nodeA, nil, nil)
	time.Sleep(80 * time.Millisecond)
	call := &pipeline.Call{Tool: nodeB}
	res, err := nodeB.Executor.Execute(context.Background(), call)
	if err != nil || call.CacheStatus != StatusStale || res.Meta[MetaKey] == nil {
		t.Fatalf("node B: res=%+v err=%v status=%q", res, err, call.CacheStatus)
	}
}
