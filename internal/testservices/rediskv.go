package testservices

import (
	"context"
	"errors"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// RedisKV is a key-value store over the test Redis with a client of its
// own, as one gateway node has: GET, SET PX and SET NX PX, what
// pipeline/tasks asks of the store the nodes share.
type RedisKV struct{ c *goredis.Client }

// NewRedisKV opens a RedisKV on the test Redis, closed when the test ends.
func NewRedisKV(t testing.TB) *RedisKV {
	t.Helper()
	kv, err := OpenRedisKV(RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kv.c.Close() })
	return kv
}

// OpenRedisKV opens a RedisKV on the Redis at url (a node process of its
// own, which has no test to close it).
func OpenRedisKV(url string) (*RedisKV, error) {
	opt, err := goredis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	return &RedisKV{goredis.NewClient(opt)}, nil
}

// Get returns the value of key, nil when it is absent.
func (r *RedisKV) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := r.c.Get(ctx, key).Bytes()
	if errors.Is(err, goredis.Nil) {
		return nil, nil
	}
	return b, err
}

// Set stores value under key for ttl.
func (r *RedisKV) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return r.c.Set(ctx, key, value, ttl).Err()
}

// SetIfAbsent stores value under key for ttl unless it holds one.
func (r *RedisKV) SetIfAbsent(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	return r.c.SetNX(ctx, key, value, ttl).Result()
}
