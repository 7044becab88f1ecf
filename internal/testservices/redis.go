package testservices

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// RedisEnv names the environment variable holding the Redis URL.
const RedisEnv = "EDGEMCP_TEST_REDIS_URL"

var (
	redis       = service{what: "Redis", env: RedisEnv, def: "redis://127.0.0.1:6379/0"}
	redisClient *goredis.Client
)

// RedisURL returns the test URL after checking, once per process, that
// the server answers.
func RedisURL(t testing.TB) string {
	t.Helper()
	return redis.require(t, func(url string) (string, error) {
		opt, err := goredis.ParseURL(url)
		if err != nil {
			return "", err
		}
		c := goredis.NewClient(opt)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := c.Ping(ctx).Err(); err != nil {
			c.Close()
			return "", err
		}
		redisClient = c
		return url, nil
	})
}

// RedisClient is a plain client for test setup.
func RedisClient(t testing.TB) *goredis.Client {
	t.Helper()
	RedisURL(t)
	return redisClient
}

// RedisPrefix returns a unique key prefix "connectors:<random>:" and
// deletes the keys under it when the test ends (never anything else).
func RedisPrefix(t testing.TB) string {
	t.Helper()
	p := "connectors:" + randomHex() + ":"
	c := RedisClient(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := c.Scan(ctx, 0, p+"*", 100).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	})
	return p
}
