// Package testredis gives tests the Redis they run against: the URL from
// EDGEMCP_TEST_REDIS_URL (default: the server on this machine's standard
// port), checked once per test binary. A server that does not answer
// fails the test with instructions; it is never a skip. Tests own keys
// under a unique "connectors:" prefix and delete only those.
package testredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// EnvURL names the environment variable holding the test URL.
const EnvURL = "EDGEMCP_TEST_REDIS_URL"

// DefaultURL is used when EnvURL is unset.
const DefaultURL = "redis://127.0.0.1:6379/0"

var (
	checkOnce sync.Once
	checkErr  error
	client    *goredis.Client
)

// URL returns the test URL after checking, once per process, that the
// server answers.
func URL(t testing.TB) string {
	t.Helper()
	url := os.Getenv(EnvURL)
	if url == "" {
		url = DefaultURL
	}
	checkOnce.Do(func() {
		opt, err := goredis.ParseURL(url)
		if err != nil {
			checkErr = err
			return
		}
		c := goredis.NewClient(opt)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if checkErr = c.Ping(ctx).Err(); checkErr != nil {
			c.Close()
			return
		}
		client = c
	})
	if checkErr != nil {
		t.Fatalf("Redis is required by this test and did not answer: %v\n"+
			"Set %s to a reachable server (default %s), "+
			"or run the project's test command, which starts a throwaway server.",
			checkErr, EnvURL, DefaultURL)
	}
	return url
}

// Client is a plain client for test setup.
func Client(t testing.TB) *goredis.Client {
	t.Helper()
	URL(t)
	return client
}

// Prefix returns a unique key prefix "connectors:<random>:" and deletes
// the keys under it when the test ends (never anything else).
func Prefix(t testing.TB) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	p := "connectors:" + hex.EncodeToString(b[:]) + ":"
	c := Client(t)
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
